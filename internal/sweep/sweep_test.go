package sweep

import (
	"fmt"
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
