package report

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

func TestFormatConvention(t *testing.T) {
	t.Parallel()
	p := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		v    *float64
		f    numFormat
		want string
	}{
		{"fraction as percent", p(-0.0187), fmtPctFraction, "−1.87%"},
		{"percent", p(12.345), fmtPct, "12.35%"},
		{"money grouped", p(1234567.891), fmtMoney, "1,234,567.89"},
		{"negative money", p(-1480.96), fmtMoney, "−1,480.96"},
		{"rounds to zero: no sign", p(-0.001), fmtMoney, "0.00"},
		{"count", p(1234), fmtCount, "1,234"},
		{"ratio", p(0.3), fmtRatio, "0.30"},
		{"missing", nil, fmtMoney, "—"},
		{"not a number", p(math.NaN()), fmtPct, "—"},
		{"infinite", p(math.Inf(1)), fmtRatio, "—"},
		{"hundreds need no separator", p(-999.5), fmtMoney, "−999.50"},
		{"thousand", p(1000), fmtCount, "1,000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := format(tc.v, tc.f); got != tc.want {
				t.Errorf("format = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConventionalDisplay(t *testing.T) {
	t.Parallel()
	for display, want := range map[string]string{
		"-3.53%":     "−3.53%",
		"2023.95%":   "2,023.95%",
		"-1881.30":   "−1,881.30",
		"5391 days":  "5,391 days",
		"1 days":     "1 day",
		"41.5 days":  "41.5 days",
		"98":         "98",
		"—":          "—",
		"-0.00%":     "0.00%",
		"0.30":       "0.30",
		"1234567.00": "1,234,567.00",
	} {
		if got := conventional(display); got != want {
			t.Errorf("conventional(%q) = %q, want %q", display, got, want)
		}
	}
}

// TestConventionalOfValue: a statistic is written from its value with its display's
// decimals and unit, a tie rounded away from zero as the page rounds it.
func TestConventionalOfValue(t *testing.T) {
	t.Parallel()
	v := func(f float64) *float64 { return &f }
	tests := []struct {
		display string
		value   *float64
		want    string
	}{
		{"12.2 days", v(12.25), "12.3 days"}, // the engine's %.1f rounded the tie to even
		{"-12.2 days", v(-12.25), "−12.3 days"},
		{"12.12%", v(0.12125), "12.13%"}, // a fraction shown in percent
		{"1.12", v(1.125), "1.13"},
		{"3127 days", v(3127), "3,127 days"},
		{"1 days", v(1), "1 day"},
		{"5.00%", nil, "5.00%"},
		{"0.30", v(7), "0.30"}, // a display that does not show the value keeps its own number
	}
	for _, tt := range tests {
		if got := conventionalOf(tt.display, tt.value); got != tt.want {
			t.Errorf("conventionalOf(%q, %v) = %q, want %q", tt.display, deref(tt.value), got, tt.want)
		}
	}
	for _, tt := range []struct {
		v      float64
		digits int
		want   string
	}{{12.25, 1, "12.3"}, {0.125, 2, "0.13"}, {2.5, 0, "3"}, {0.001, 2, "0.00"}, {1234.5, 0, "1235"}} {
		if got := roundHalfAway(tt.v, tt.digits); got != tt.want {
			t.Errorf("roundHalfAway(%v, %d) = %q, want %q", tt.v, tt.digits, got, tt.want)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lo, hi float64
		want   []float64
		step   float64
	}{
		{0, 250000, []float64{0, 50000, 100000, 150000, 200000, 250000}, 50000},
		{-40.62, 0, []float64{-50, -40, -30, -20, -10, 0}, 10},
		{9990, 10240, []float64{9950, 10000, 10050, 10100, 10150, 10200, 10250}, 50},
		{0.1, 0.7, []float64{0, 0.2, 0.4, 0.6, 0.8}, 0.2},
		{-0.3, 0.05, []float64{-0.3, -0.2, -0.1, 0, 0.1}, 0.1},
	}
	for _, tc := range tests {
		got, step := niceTicks(tc.lo, tc.hi, 5)
		if step != tc.step || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v step %v, want %v step %v", tc.lo, tc.hi, got, step, tc.want, tc.step)
		}
	}
	for step, want := range map[float64]int{50000: 0, 10: 0, 2.5: 1, 0.5: 1, 0.25: 2, 0.1: 1, 0.02: 2} {
		if got := decimalsFor(step); got != want {
			t.Errorf("decimalsFor(%v) = %d, want %d", step, got, want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	t.Parallel()
	days := func(start time.Time, n int, every time.Duration) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = start.Add(time.Duration(i) * every)
		}
		return out
	}
	labels := func(ts []timeTick) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.label)
		}
		return out
	}
	// 20 years of days: ticks every 5 years, at the first bar of each
	long := days(time.Date(1995, 1, 3, 0, 0, 0, 0, time.UTC), 20*365, 24*time.Hour)
	if got := labels(timeTicks(long, false, 8)); !reflect.DeepEqual(got, []string{"2000", "2005", "2010"}) {
		t.Errorf("20 years: %v", got)
	}
	// 5 months: one tick a month, on the month's first bar
	short := days(time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), 150, 24*time.Hour)
	ticks := timeTicks(short, false, 8)
	if got := labels(ticks); !reflect.DeepEqual(got, []string{"2024-02", "2024-03", "2024-04", "2024-05", "2024-06"}) {
		t.Errorf("5 months: %v", got)
	}
	if !short[ticks[0].index].Equal(time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("first tick at %v", short[ticks[0].index])
	}
	// two days of 5-minute bars: hour ticks labelled with the time of day
	ny, _ := time.LoadLocation("America/New_York")
	intraday := days(time.Date(2024, 7, 1, 9, 30, 0, 0, ny), 2*78, 5*time.Minute)
	if got := labels(timeTicks(intraday, true, 8)); len(got) == 0 || len(got) > 8 || got[0] != "07-01 10:00" {
		t.Errorf("intraday: %v", got)
	}
	if got := timeTicks(long[:1], false, 8); got != nil {
		t.Errorf("one bar: %v", got)
	}
}

func TestParamText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		typ  string
		want string
	}{
		{2.0, "float", "2.0"},
		{2.5, "float", "2.5"},
		{20.0, "int", "20"},
		{"x", "str", "x"},
		{true, "bool", "true"},
		{[]any{1.0, 2.5}, "list", "[1,2.5]"},
	}
	for _, tc := range tests {
		if got := paramText(tc.v, tc.typ); got != tc.want {
			t.Errorf("paramText(%v, %s) = %q, want %q", tc.v, tc.typ, got, tc.want)
		}
	}
}

// TestTearsheetShapes renders reports of unusual results without a database: a portfolio (a
// symbol column), a run without trades, and one of a single bar.
func TestTearsheetShapes(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, 2+d, 0, 0, 0, 0, time.UTC) }
	equity := func(n int) []engine.EquityPoint {
		out := make([]engine.EquityPoint, n)
		for i := range out {
			out[i] = engine.EquityPoint{Time: day(i), Value: 10000 + float64(i%7)*10, Drawdown: float64(i % 3)}
		}
		return out
	}
	closeAt := day(5)
	portfolio := &results.Stored{TaskID: "task_p", Equity: equity(60),
		Run: results.Run{StrategyName: "Pairs", StrategyID: "str_2", StrategyVersion: 3, Symbol: "ORCL", Symbols: []string{"ORCL", "NVDA"},
			Timeframe: "1d", InitialCash: 10000, StrategyParams: json.RawMessage(`{"entry":2.5}`)},
		Trades:     []engine.Trade{{Symbol: "NVDA", OpenTime: day(1), CloseTime: &closeAt, Size: -10, EntryPrice: 20, ExitPrice: 19, PnLNet: 9.5, BarLen: 4}},
		Executions: []engine.Execution{{Symbol: "NVDA", Time: day(1), Side: "sell", Size: -10, Price: 20}, {Symbol: "NVDA", Time: day(5), Side: "buy", Size: 10, Price: 19, PnL: 10}},
	}
	version := &results.StrategyVersion{Name: "Pairs", ClassName: "Pairs", ContentHash: "abc",
		Params: json.RawMessage(`[{"name":"entry","default":2,"type":"float","description":"z-score to enter"},{"name":"period","default":30,"type":"int"}]`)}
	tests := []struct {
		name    string
		s       *results.Stored
		version *results.StrategyVersion
		want    []string
	}{
		{"portfolio", portfolio, version, []string{"Pairs on ORCL, NVDA", `<th class="l">Symbol</th>`, `<td class="l">NVDA</td>`, "Short",
			`data-key="entry">2.5</td><td class="l">2.0</td>`, `data-key="period">30</td>`, "z-score to enter", `<td class="pos">9.50</td>`, "4 bars"}},
		{"no trades", &results.Stored{TaskID: "task_n", Equity: equity(30), Run: results.Run{StrategyName: "Idle", Symbol: "X", Timeframe: "1d", InitialCash: 10000}},
			nil, []string{"No trades.", "No executions.", "The strategy has no parameters.", "<svg"}},
		{"one bar", &results.Stored{TaskID: "task_1", Equity: equity(1), Run: results.Run{StrategyName: "Short", Symbol: "X", Timeframe: "1d"}},
			nil, []string{"No data.", "No trades."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page, err := html(tc.s, engine.Statistics{}, nil, tc.version, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("report lacks %q", w)
				}
			}
		})
	}
}
