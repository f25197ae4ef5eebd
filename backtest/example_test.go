package backtest_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/backtestd/backtestd/backtest"
)

const smaCross = `
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}`

// wave is 500 daily bars of a price swinging around 100.
func wave() []backtest.Bar {
	bars := make([]backtest.Bar, 500)
	for i := range bars {
		p := 100 + 10*math.Sin(float64(i)/15) + float64(i)/50
		bars[i] = backtest.Bar{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i),
			Open: p - 0.5, High: p + 1, Low: p - 1, Close: p, Volume: 1000}
	}
	return bars
}

// Run a strategy over bars and read its summary and statistics.
func ExampleRun() {
	res, err := backtest.Run(context.Background(), backtest.Config{
		Code:       smaCross,
		Params:     map[string]any{"fast": 5},
		Feeds:      []backtest.Feed{{Symbol: "WAVE", Bars: wave()}},
		Cash:       10000,
		Commission: 0.001,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stats := backtest.ComputeStatistics(res)
	fmt.Printf("final value %.2f, %d round trips, %d won\n", res.Summary.FinalValue, res.Summary.TotalTrades, res.Summary.Won)
	dd := stats.Get("max_drawdown")
	fmt.Printf("%s %s\n", dd.Label, dd.Display)
	// Output:
	// final value 10743.50, 5 round trips, 4 won
	// Max Drawdown 0.39%
}

// Run a strategy with several parameter sets, sharing its compiled code and indicators.
func ExampleBatch() {
	batch := backtest.NewBatch(backtest.Config{
		Code:       smaCross,
		Feeds:      []backtest.Feed{{Symbol: "WAVE", Bars: wave()}},
		Commission: 0.001,
	})
	for _, fast := range []int{3, 5, 8} {
		res, err := batch.Run(context.Background(), map[string]any{"fast": fast})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("fast %d: final value %.2f\n", fast, res.Summary.FinalValue)
	}
	// Output:
	// fast 3: final value 10772.57
	// fast 5: final value 10743.50
	// fast 8: final value 10692.34
}

// A strategy that throws fails the run with the line at fault.
func ExampleRun_error() {
	_, err := backtest.Run(context.Background(), backtest.Config{
		Code:  "class Broken extends Strategy {\n  next() {\n    this.nope();\n  }\n}",
		Feeds: []backtest.Feed{{Symbol: "WAVE", Bars: wave()}},
	})
	if e, ok := err.(*backtest.Error); ok {
		fmt.Println(e.Kind, "error at line", e.Line)
	}
	// Output: strategy error at line 3
}

// Bars from CSV, as the service imports them.
func ExampleReadCSV() {
	bars, err := backtest.ReadCSV(strings.NewReader("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,1200\n2024-01-03,10.5,12,10,11.5,900\n"))
	fmt.Println(len(bars), bars[1].Close, err)
	// Output: 2 11.5 <nil>
}
