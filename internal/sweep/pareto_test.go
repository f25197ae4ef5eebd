package sweep

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// paretoByDefinition ranks by peeling fronts: each round, the points no remaining point
// dominates.
func paretoByDefinition(x, y []float64, ok []bool) []int {
	ranks := make([]int, len(x))
	left := 0
	for i := range x {
		if ok[i] {
			left++
		}
	}
	for rank := 1; left > 0; rank++ {
		var front []int
		for p := range x {
			if !ok[p] || ranks[p] != 0 {
				continue
			}
			dominated := false
			for q := range x {
				if ok[q] && ranks[q] == 0 && x[q] >= x[p] && y[q] >= y[p] && (x[q] > x[p] || y[q] > y[p]) {
					dominated = true
					break
				}
			}
			if !dominated {
				front = append(front, p)
			}
		}
		for _, p := range front {
			ranks[p] = rank
		}
		left -= len(front)
	}
	return ranks
}

func TestParetoRanks(t *testing.T) {
	t.Parallel()
	// Sharpe against drawdown (negated: less is better): (1, -10) and (2, -20) are the front.
	x := []float64{1, 2, 0.5, 1, 1.5, 3}
	y := []float64{-10, -20, -5, -12, -25, 0}
	ok := []bool{true, true, true, true, true, false}
	if got, want := ParetoRanks(x, y, ok), []int{1, 1, 1, 2, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("ranks %v, want %v", got, want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		x, y, ok := make([]float64, n), make([]float64, n), make([]bool, n)
		for i := range n {
			// Few distinct values, so ties and equal points are common.
			x[i], y[i], ok[i] = float64(r.IntN(8)), float64(r.IntN(8)), r.IntN(10) > 0
		}
		if got, want := ParetoRanks(x, y, ok), paretoByDefinition(x, y, ok); !slices.Equal(got, want) {
			t.Fatalf("case %d: x %v y %v ok %v: ranks %v, by definition %v", trial, x, y, ok, got, want)
		}
	}
}
