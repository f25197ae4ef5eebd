package findings

import (
	"math"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
)

func day(i int) time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }

func closedTrade(pnl float64) engine.Trade {
	c := day(1)
	return engine.Trade{Symbol: "A", OpenTime: day(0), CloseTime: &c, PnLNet: pnl}
}

func trades(pnls ...float64) []engine.Trade {
	out := make([]engine.Trade, len(pnls))
	for i, p := range pnls {
		out[i] = closedTrade(p)
	}
	return out
}

func find(fs []Finding, id string) *Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// TestOf checks each rule against values computed by hand.
func TestOf(t *testing.T) {
	bars := []engine.Bar{
		{Time: day(0), Open: 10, High: 11, Low: 9, Close: 10, Volume: 100},
		{Time: day(1), Open: 10, High: 12, Low: 10, Close: 11, Volume: 0},
		{Time: day(2), Open: 11, High: 11, Low: 10, Close: 10, Volume: 50},
	}
	feeds := []engine.Feed{{Symbol: "A", Bars: bars}}
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = 10
	}
	cases := []struct {
		name   string
		res    engine.Result
		params int
		id     string
		value  float64 // NaN: the finding must be absent
		thresh float64
	}{
		{"no trades, no parameters: 10 needed", engine.Result{}, 0, "trades_per_parameter", 0, 10},
		{"19 trades for 2 parameters", engine.Result{Trades: trades(twenty[:19]...)}, 2, "trades_per_parameter", 19, 20},
		{"20 trades for 2 parameters", engine.Result{Trades: trades(twenty...)}, 2, "trades_per_parameter", math.NaN(), 0},
		{"an open trade is not counted", engine.Result{Trades: append(trades(twenty[:19]...), engine.Trade{IsOpen: true})}, 2, "trades_per_parameter", 19, 20},
		// 20 trades: the best ceil(5% of 20) = 1. Net 100 - 19*1 = 81; the best made 100:
		// 123.45...% of it.
		{"one trade makes more than the net", engine.Result{Trades: trades(append([]float64{100}, repeat(-1, 19)...)...)}, 0, "profit_concentration", 100 * 100 / 81.0, 100},
		// 21 trades: the best 2 (ceil 1.05). Net 10*21 = 210; the best two 20: 9.5%.
		{"even profits", engine.Result{Trades: trades(repeat(10, 21)...)}, 0, "profit_concentration", math.NaN(), 0},
		{"a net loss is not concentration", engine.Result{Trades: trades(5, -10)}, 0, "profit_concentration", math.NaN(), 0},
		{"a fill on a bar of volume 0", engine.Result{Executions: []engine.Execution{{Symbol: "A", Time: day(1), Price: 11}, {Symbol: "A", Time: day(2), Price: 10.5}}}, 0, "fills_zero_volume", 1, 0},
		{"fills above and below the bar", engine.Result{Executions: []engine.Execution{{Symbol: "A", Time: day(0), Price: 11.5}, {Symbol: "A", Time: day(2), Price: 9.99}, {Symbol: "A", Time: day(2), Price: 10}}}, 0, "fills_outside_range", 2, 0},
		{"a fill on a bar not given is not judged", engine.Result{Executions: []engine.Execution{{Symbol: "A", Time: day(9), Price: 1000}, {Symbol: "B", Time: day(0), Price: 1000}}}, 0, "fills_outside_range", math.NaN(), 0},
		// Result 100, of which the open position 80 (PnL 90 - closed 10): 80%.
		{"an open position carrying the result", engine.Result{InitialCash: 1000, FinalValue: 1100, Symbols: []engine.SymbolResult{{Symbol: "A", PnL: 90, PnLClosed: 10, FinalSize: 5}, {Symbol: "B", PnL: 10, PnLClosed: 10}}}, 0, "open_position_at_end", 80, 50},
		// Open 40 of 100: under half.
		{"an open position that is a small part", engine.Result{InitialCash: 1000, FinalValue: 1100, Symbols: []engine.SymbolResult{{Symbol: "A", PnL: 100, PnLClosed: 60, FinalSize: 5}}}, 0, "open_position_at_end", math.NaN(), 0},
		// A loss of 50 made of an open loss of -60: 120% of the result.
		{"an open loss", engine.Result{InitialCash: 1000, FinalValue: 950, Symbols: []engine.SymbolResult{{Symbol: "A", PnL: -50, PnLClosed: 10, FinalSize: -3}}}, 0, "open_position_at_end", 120, 50},
		{"time in market from the symbols' exposure", engine.Result{Symbols: []engine.SymbolResult{{Exposure: 0.25}, {Exposure: 0.5}}}, 0, "time_in_market", 50, math.NaN()},
		{"time in market from the positions held per bar", engine.Result{Symbols: []engine.SymbolResult{{Exposure: 0.9}},
			Analyzers: engine.Analyzers{PyFolio: engine.PyFolioResult{Positions: engine.Rows{Width: 2, Flat: []float64{0, 1000, 5, 995, 0, 1000, 0, 1000}}}}}, 0, "time_in_market", 25, math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := c.res
			f := find(Of(Run{Result: &res, Feeds: feeds, Parameters: c.params}), c.id)
			if math.IsNaN(c.value) {
				if f != nil {
					t.Fatalf("want no %s, got %+v", c.id, *f)
				}
				return
			}
			if f == nil {
				t.Fatalf("want %s", c.id)
			}
			if f.Value == nil || math.Abs(*f.Value-c.value) > 1e-9 {
				t.Errorf("value %v, want %v (%s)", f.Value, c.value, f.Detail)
			}
			if math.IsNaN(c.thresh) != (f.Threshold == nil) || (f.Threshold != nil && *f.Threshold != c.thresh) {
				t.Errorf("threshold %v, want %v", f.Threshold, c.thresh)
			}
			if f.Title == "" || f.Detail == "" || f.Severity == "" {
				t.Errorf("incomplete: %+v", *f)
			}
		})
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestOfCheck: the verdict and the warm-up of a look-ahead check.
func TestOfCheck(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name  string
		check *Check
		want  map[string]Severity
	}{
		{"never checked", nil, map[string]Severity{"lookahead": Info}},
		{"clean, no warm-up measured", &Check{Cuts: 6, CheckedAt: at}, map[string]Severity{"lookahead": Info}},
		{"found", &Check{LookAhead: true, CheckedAt: at, Report: &bias.Report{Findings: []bias.Finding{{}}}}, map[string]Severity{"lookahead": Critical}},
		{"warm-up settled", &Check{Cuts: 6, CheckedAt: at, Report: &bias.Report{Warmup: []bias.Warmup{{What: "sma", Bars: 30, Converged: true}}}},
			map[string]Severity{"lookahead": Info, "warmup": Info}},
		{"warm-up never settled", &Check{Cuts: 6, CheckedAt: at, Report: &bias.Report{Warmup: []bias.Warmup{{What: "sma", Bars: 30, Converged: true}, {What: "ema", Bars: 500}}}},
			map[string]Severity{"lookahead": Info, "warmup": Warning}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := OfCheck(c.check)
			if len(fs) != len(c.want) {
				t.Fatalf("got %d findings %+v, want %v", len(fs), fs, c.want)
			}
			for _, f := range fs {
				if c.want[f.ID] != f.Severity {
					t.Errorf("%s: %s, want %s", f.ID, f.Severity, c.want[f.ID])
				}
			}
		})
	}
}
