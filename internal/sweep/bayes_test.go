package sweep

import (
	"fmt"
	"maps"
	"math"
	"testing"
)

// runBayes runs a model-based search of sp over f in rounds, as backtestd sweep does, and
// returns the trials in the order they were proposed.
func runBayes(t *testing.T, sp Space, seed uint64, samples int, f func(map[string]any) *float64, allowed func([]map[string]any) ([]bool, error)) []Observed {
	t.Helper()
	b, err := sp.Bayes(Objective{}, seed)
	if err != nil {
		t.Fatal(err)
	}
	var hist []Observed
	for n := BayesRound(0, samples); n > 0; n = BayesRound(len(hist), samples) {
		combos, err := b.Next(hist, n, allowed)
		if err != nil {
			t.Fatal(err)
		}
		if len(combos) == 0 {
			break
		}
		for _, c := range combos {
			hist = append(hist, Observed{Params: c, Value: f(c)})
		}
	}
	return hist
}

func smooth(c map[string]any) *float64 {
	x, y := float64(c["x"].(int)), float64(c["y"].(int))
	v := -((x-30)*(x-30) + (y-7)*(y-7))
	return &v
}

func TestBayesProposesDistinctCombinations(t *testing.T) {
	t.Parallel()
	xs, _ := Range(0, 99, 1)
	ys, _ := Range(0, 19, 1)
	sp := Space{"x": xs, "y": ys, "mode": {"a", "b", true}}
	f := func(c map[string]any) *float64 {
		if c["mode"] == "b" {
			return nil // as a run that fails
		}
		return smooth(c)
	}
	hist := runBayes(t, sp, 4, 120, f, nil)
	if len(hist) != 120 {
		t.Fatalf("%d trials, want the budget of 120", len(hist))
	}
	seen := map[string]bool{}
	for _, h := range hist {
		k := fmt.Sprint(h.Params)
		if seen[k] {
			t.Fatalf("%v proposed twice", h.Params)
		}
		seen[k] = true
	}
	again := runBayes(t, sp, 4, 120, f, nil)
	for i := range hist {
		if !maps.Equal(hist[i].Params, again[i].Params) {
			t.Fatalf("trial %d: %v, then %v with the same seed", i, hist[i].Params, again[i].Params)
		}
	}
	other := runBayes(t, sp, 5, 120, f, nil)
	if maps.Equal(hist[0].Params, other[0].Params) && maps.Equal(hist[50].Params, other[50].Params) {
		t.Errorf("seeds 4 and 5 propose the same trials")
	}
	best := math.Inf(-1)
	for _, h := range hist {
		if h.Value != nil {
			best = max(best, *h.Value)
		}
	}
	if best < -4 {
		t.Errorf("best %v after 120 of 6,000 combinations of a smooth bowl, want within 2 of its top", best)
	}
}

func TestBayesRespectsTheConstraint(t *testing.T) {
	t.Parallel()
	xs, _ := Range(1, 40, 1)
	ys, _ := Range(1, 40, 1)
	sp := Space{"x": xs, "y": ys}
	calls := 0
	allowed := func(cs []map[string]any) ([]bool, error) {
		calls++
		ok := make([]bool, len(cs))
		for i, c := range cs {
			ok[i] = c["x"].(int) < c["y"].(int)
		}
		return ok, nil
	}
	hist := runBayes(t, sp, 1, 200, smooth, allowed)
	if len(hist) != 200 {
		t.Fatalf("%d trials, want 200", len(hist))
	}
	for _, h := range hist {
		if h.Params["x"].(int) >= h.Params["y"].(int) {
			t.Fatalf("%v breaks the constraint", h.Params)
		}
	}
	if rounds := 1 + (200-BayesStartup+BayesBatch-1)/BayesBatch; calls > 3*rounds {
		t.Errorf("the constraint was asked %d times for %d rounds, want about one call a round", calls, rounds)
	}
}

func TestBayesUsesUpASmallSpace(t *testing.T) {
	t.Parallel()
	sp := Space{"x": {1, 2, 3}, "y": {"p", "q"}}
	allowed := func(cs []map[string]any) ([]bool, error) {
		ok := make([]bool, len(cs))
		for i, c := range cs {
			ok[i] = c["x"] != 2
		}
		return ok, nil
	}
	hist := runBayes(t, sp, 1, 50, func(map[string]any) *float64 { v := 1.0; return &v }, allowed)
	if len(hist) != 4 {
		t.Fatalf("%d trials, want the 4 combinations the constraint allows: %v", len(hist), hist)
	}
}

func TestBayesSpaceBeyondTheGridLimit(t *testing.T) {
	t.Parallel()
	xs, _ := Range(0, 999, 1)
	ys, _ := Range(0, 999, 1)
	zs, _ := Range(0, 0.99, 0.01)
	sp := Space{"x": xs, "y": ys, "z": zs} // 10^8 combinations
	if _, err := sp.Grid(); err == nil {
		t.Fatal("a grid of 10^8 combinations was accepted")
	}
	hist := runBayes(t, sp, 2, 40, func(c map[string]any) *float64 {
		z, _ := toFloat(c["z"]) // 0 is an int
		v := -math.Abs(float64(c["x"].(int))-500) - math.Abs(z-0.5)
		return &v
	}, nil)
	if len(hist) != 40 {
		t.Fatalf("%d trials, want 40", len(hist))
	}
}

func TestBayesRound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ done, samples, want int }{
		{0, 150, BayesStartup}, {0, 3, 3}, {10, 150, BayesBatch}, {146, 150, 4}, {150, 150, 0}, {151, 150, 0},
	} {
		if got := BayesRound(c.done, c.samples); got != c.want {
			t.Errorf("BayesRound(%d, %d) = %d, want %d", c.done, c.samples, got, c.want)
		}
	}
}

func TestRandomSpaceBeyondCounting(t *testing.T) {
	t.Parallel()
	xs, _ := Range(0, 9999, 1)
	sp := Space{"a": xs, "b": xs, "c": {1, 2}} // 2×10^8 combinations, more than Size counts
	got, err := sp.Random(300, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	high := 0
	for _, c := range got {
		seen[fmt.Sprint(c)] = true
		if c["a"].(int) >= 1000 {
			high++
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d distinct combinations, want 300", len(seen))
	}
	if high < 200 { // about 270 expected: the draws cover the whole space, not a prefix
		t.Errorf("%d of 300 draws have a ≥ 1000: the sample does not cover the space", high)
	}
}
