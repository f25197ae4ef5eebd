package sweep

import (
	"slices"
	"testing"
)

// TestRank: best first by the objective, equal values in their order, trials without a
// value after them and failed ones last, each group in its order; both directions.
func TestRank(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	trials := []Trial{
		{Params: map[string]any{"i": 0}, Value: v(1)},
		{Params: map[string]any{"i": 1}, Error: "boom"},
		{Params: map[string]any{"i": 2}, Value: v(3)},
		{Params: map[string]any{"i": 3}},
		{Params: map[string]any{"i": 4}, Value: v(1)},
		{Params: map[string]any{"i": 5}, Value: v(-2)},
		{Params: map[string]any{"i": 6}, Error: "bang"},
		{Params: map[string]any{"i": 7}, Value: v(3)},
		{Params: map[string]any{"i": 8}},
	}
	for _, tt := range []struct {
		name string
		obj  Objective
		want []int
	}{
		{"max", Objective{Metric: "sharpe_ratio"}, []int{2, 7, 0, 4, 5, 3, 8, 1, 6}},
		{"min", Objective{Metric: "max_drawdown_pct", Minimize: true}, []int{5, 0, 4, 2, 7, 3, 8, 1, 6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(trials)
			Rank(got, tt.obj)
			order := make([]int, len(got))
			for i, tr := range got {
				order[i] = tr.Params["i"].(int)
			}
			if !slices.Equal(order, tt.want) {
				t.Errorf("ranked %v, want %v", order, tt.want)
			}
		})
	}
	Rank(nil, Objective{}) // nothing to rank
}
