package bias

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

func TestCuts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want []int
	}{
		{5000, []int{312, 625, 1250, 2500, 3750, 4999}},
		{16, []int{2, 4, 8, 12, 15}},
		{3, []int{2}},
		{1, nil},
	}
	for _, tc := range tests {
		if got := Cuts(tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Cuts(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestCheckSynthetic drives Check with traces computed in Go: a prefix-stable line and a
// line of the next bar's value, and a decision taken on the future.
func TestCheckSynthetic(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{{Symbol: "X", Bars: engine.RandomWalk(400, 1)}}
	run := func(future bool) RunFunc {
		return func(_ context.Context, fs []engine.Feed, _ map[int64]bool) (*Trace, error) {
			bars := fs[0].Bars
			n := len(bars)
			times := make([]int64, n)
			past, next := make([]float64, n), make([]float64, n)
			tr := &Trace{}
			for i, b := range bars {
				times[i] = b.Time.UnixNano()
				past[i] = b.Close
				if i > 0 {
					past[i] += bars[i-1].Close
				}
				next[i] = math.NaN()
				if i+1 < n {
					next[i] = bars[i+1].Close
				}
				if future && i+1 < n && bars[i+1].Close > b.Close {
					tr.Decisions = append(tr.Decisions, Decision{Time: times[i], Text: "buy"})
				}
			}
			tr.Times = [][]int64{times}
			tr.Lines = []Line{{Name: "this.past", Call: "ind.Compute", Vals: past}}
			if future {
				tr.Lines = append(tr.Lines, Line{Name: "this.next", Call: "ind.Compute", Vals: next})
			}
			return tr, nil
		}
	}
	rep, err := Check(context.Background(), feeds, run(false))
	if err != nil || rep.Lookahead || rep.Cuts != 6 || len(rep.Warmup) != 1 || rep.Warmup[0].Bars != 1 {
		t.Fatalf("causal: %v %+v", err, rep)
	}
	rep, err = Check(context.Background(), feeds, run(true))
	if err != nil || !rep.Lookahead {
		t.Fatalf("biased: %v %+v", err, rep)
	}
	var what []string
	for _, f := range rep.Findings {
		what = append(what, f.What)
	}
	if !slices.Contains(what, "this.next") || slices.Contains(what, "this.past") {
		t.Errorf("findings %v", what)
	}
	if f := rep.Findings[0]; f.Bar != f.CutAt-1 || f.Cut != "NaN" {
		t.Errorf("first finding %+v: want the bar before the cut, NaN in the cut run", f)
	}
}
