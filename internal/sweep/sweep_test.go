package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

func TestParseParam(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		name string
		want []any
		err  string
	}{
		{"fast=5:20:5", "fast", []any{5, 10, 15, 20}, ""},
		{" slow = 10:25:10", "slow", []any{10, 20}, ""},
		{"k=0.1:0.5:0.1", "k", []any{0.1, 0.2, 0.3, 0.4, 0.5}, ""},
		{"mode=a,b", "mode", []any{"a", "b"}, ""},
		{"on=true,false", "on", []any{true, false}, ""},
		{"x=1,2.5,-3", "x", []any{1, 2.5, -3}, ""},
		{"fast", "", nil, "want name="},
		{"=1,2", "", nil, "want name="},
		{"fast=5:1:1", "", nil, "below its start"},
		{"fast=1:5:0", "", nil, "step must be positive"},
		{"fast=1:5:x", "", nil, "not a number"},
		{"fast=0:1e9:1", "", nil, "more than"},
	} {
		name, got, err := ParseParam(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want an error with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || name != tt.name || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %s %v %v, want %s %v", tt.in, name, got, err, tt.name, tt.want)
		}
	}
}

func TestGridAndRandom(t *testing.T) {
	t.Parallel()
	s := Space{"slow": {20, 30, 40}, "fast": {5, 10}}
	grid, err := s.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(grid); got != "[map[fast:5 slow:20] map[fast:5 slow:30] map[fast:5 slow:40] map[fast:10 slow:20] map[fast:10 slow:30] map[fast:10 slow:40]]" {
		t.Errorf("grid %s", got)
	}
	a, _ := s.Random(4, 7)
	b, _ := s.Random(4, 7)
	if len(a) != 4 || !reflect.DeepEqual(a, b) {
		t.Errorf("random(4, seed 7) twice: %v and %v", a, b)
	}
	seen := map[string]bool{}
	for _, c := range a {
		seen[fmt.Sprint(c)] = true
	}
	if len(seen) != 4 {
		t.Errorf("random sample repeats a combination: %v", a)
	}
	if all, _ := s.Random(100, 1); len(all) != 6 {
		t.Errorf("a sample larger than the grid: %d combinations, want the 6 of the grid", len(all))
	}
	big := Space{"a": make([]any, 200), "b": make([]any, 200)}
	if _, err := big.Grid(); err == nil || !strings.Contains(err.Error(), "40000 combinations") {
		t.Errorf("40,000 combinations: %v", err)
	}
	// Past where Size stops counting, a refusal still gives the grid's real size.
	for _, tt := range []struct {
		space Space
		want  string
	}{
		{Space{"a": make([]any, 10000), "b": make([]any, 10000)}, "100000000 combinations"},
		{Space{"a": make([]any, 10000), "b": make([]any, 10000), "c": make([]any, 10000)}, "1000000000000 combinations"},
		{Space{"a": make([]any, 10000), "b": make([]any, 10000), "c": make([]any, 10000), "d": make([]any, 10000), "e": make([]any, 10000)},
			"100000000000000000000 combinations"},
	} {
		if _, err := tt.space.Grid(); err == nil || !strings.HasPrefix(err.Error(), tt.want+", more than the 10000") {
			t.Errorf("a grid of %s: %v", tt.want, err)
		}
	}
	if c, err := big.Random(50, 1); err != nil || len(c) != 50 {
		t.Errorf("a sample of a big grid: %d %v", len(c), err)
	}
	for _, bad := range []Space{{}, {"a": {}}} {
		if _, err := bad.Grid(); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestObjective(t *testing.T) {
	t.Parallel()
	sr := 1.5
	sum := engine.Summary{TotalReturn: 12, SharpeRatio: &sr}
	stats := engine.Statistics{Groups: []engine.StatGroup{{Metrics: []engine.Metric{{Key: "sortino_ratio", Value: &sr}, {Key: "undefined"}}}}}
	for _, tt := range []struct {
		metric string
		want   float64
		ok     bool
	}{
		{"total_return", 12, true}, {"sharpe_ratio", 1.5, true}, {"profit_factor", 0, false},
		{"sortino_ratio", 1.5, true}, {"undefined", 0, false}, {"nonsense", 0, false},
	} {
		if v, ok := (Objective{Metric: tt.metric}).Value(sum, &stats); v != tt.want || ok != tt.ok {
			t.Errorf("%s: %v %v, want %v %v", tt.metric, v, ok, tt.want, tt.ok)
		}
	}
	if !Known("max_drawdown", nil) || !Known("sortino_ratio", &stats) || Known("nonsense", &stats) {
		t.Error("Known")
	}
	if !(Objective{}).Better(2, 1) || !(Objective{Minimize: true}).Better(1, 2) {
		t.Error("Better")
	}
}

// TestObjectiveAsThroughJSON: Value reads a summary field as the summary encoded as JSON
// and decoded again gave it (how Value read it before), for every field, nil and
// non-finite numbers included; a statistic of the same name answers only when JSON could
// not encode the summary.
func TestObjectiveAsThroughJSON(t *testing.T) {
	t.Parallel()
	viaJSON := func(metric string, sum engine.Summary, stats *engine.Statistics) (float64, bool) {
		var fields map[string]any
		if b, err := json.Marshal(sum); err == nil && json.Unmarshal(b, &fields) == nil {
			if v, ok := fields[metric]; ok {
				f, isNum := v.(float64)
				return f, isNum && !math.IsNaN(f) && !math.IsInf(f, 0)
			}
		}
		if stats != nil {
			if m := stats.Get(metric); m != nil && m.Value != nil {
				return *m.Value, !math.IsNaN(*m.Value) && !math.IsInf(*m.Value, 0)
			}
		}
		return 0, false
	}
	f := func(v float64) *float64 { return &v }
	sums := map[string]engine.Summary{
		"zero": {},
		"full": {InitialCash: 10000, FinalValue: 12345.678901234567, TotalReturn: 0.1 + 0.2, AnnualReturn: f(-1e-300),
			SharpeRatio: f(math.Pi), MaxDrawdown: 5e-324, MaxDrawdownPct: math.Copysign(0, -1), TotalTrades: 1<<40 + 1, WinRate: 1.0 / 3,
			ProfitFactor: f(1.7976931348623157e308), AvgWin: f(2), AvgLoss: f(-2), Won: 7, Lost: -3, SQN: 1e21,
			MaxDrawdownDuration: 365},
		"infinite profit factor": {TotalReturn: 1, ProfitFactor: f(math.Inf(1))},
		"NaN ratio":              {SharpeRatio: f(math.NaN()), TotalTrades: 2},
		"NaN field":              {SQN: math.NaN(), WinRate: 0.5},
	}
	sr := 2.5
	stats := engine.Statistics{Groups: []engine.StatGroup{{Metrics: []engine.Metric{
		{Key: "win_rate", Value: &sr}, {Key: "sqn", Value: &sr}, {Key: "sortino_ratio", Value: &sr}}}}}
	b, _ := json.Marshal(engine.Summary{})
	var names map[string]any
	_ = json.Unmarshal(b, &names)
	metrics := []string{"sortino_ratio", "nonsense"}
	for k := range names {
		metrics = append(metrics, k)
	}
	if len(names) != len(summaryFields) {
		t.Fatalf("%d summary fields in JSON, %d read", len(names), len(summaryFields))
	}
	for name, sum := range sums {
		for _, m := range metrics {
			for _, st := range []*engine.Statistics{nil, &stats} {
				wantV, wantOK := viaJSON(m, sum, st)
				v, ok := (Objective{Metric: m}).Value(sum, st)
				if ok != wantOK || math.Float64bits(v) != math.Float64bits(wantV) && !(math.IsNaN(v) && math.IsNaN(wantV)) {
					t.Errorf("%s, %s (statistics %v): %v %v, through JSON %v %v", name, m, st != nil, v, ok, wantV, wantOK)
				}
			}
		}
	}
}

func TestCompleteAndKeep(t *testing.T) {
	info := &jsrt.StrategyInfo{Params: []jsrt.Param{
		{Name: "fast", Type: "int", Default: int64(5)}, {Name: "slow", Type: "int", Default: int64(20)}, {Name: "size", Type: "int", Default: int64(1)},
	}}
	tests := []struct {
		name    string
		combos  []map[string]any
		fixed   map[string]any
		bad     int
		wantErr bool
		want    []map[string]any
	}{
		{name: "fixed fill in, combinations win",
			combos: []map[string]any{{"fast": int64(3)}, {"fast": int64(4), "slow": int64(30)}},
			fixed:  map[string]any{"slow": int64(25), "size": int64(10)},
			want:   []map[string]any{{"fast": int64(3), "slow": int64(25), "size": int64(10)}, {"fast": int64(4), "slow": int64(30), "size": int64(10)}}},
		{name: "the failing combination named",
			combos: []map[string]any{{"fast": int64(3)}, {"fast": 1.5}}, bad: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad, err := Complete(tc.combos, tc.fixed, info)
			if (err != nil) != tc.wantErr || bad != tc.bad {
				t.Fatalf("Complete = %d, %v", bad, err)
			}
			if !tc.wantErr && !reflect.DeepEqual(tc.combos, tc.want) {
				t.Errorf("combinations %v, want %v", tc.combos, tc.want)
			}
		})
	}
	kept := Keep([]map[string]any{{"a": 1}, {"a": 2}, {"a": 3}}, []bool{true, false, true})
	if !reflect.DeepEqual(kept, []map[string]any{{"a": 1}, {"a": 3}}) {
		t.Errorf("Keep = %v", kept)
	}
}
