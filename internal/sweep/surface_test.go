package sweep

import (
	"math"
	"testing"
)

func f(v float64) *float64 { return &v }

// grid is every combination of fast and slow with the objective obj(fast, slow).
func grid(fasts, slows []any, obj func(a, b int) *float64) []Point {
	var out []Point
	for _, a := range fasts {
		for _, b := range slows {
			out = append(out, Point{Params: map[string]any{"fast": a, "slow": b}, Objective: obj(a.(int), b.(int))})
		}
	}
	return out
}

// TestSurface against hand computations: the slices through the best, its neighbours and
// the plateau score, maximising and minimising.
func TestSurface(t *testing.T) {
	space := Space{"fast": {5, 10, 15}, "slow": {20, 30, 40}}
	// A spike at fast=10, slow=30: 2.0, its four neighbours 0.4, 0.6, 0.2, 0.2 → mean 0.35,
	// plateau 0.175.
	spike := map[[2]int]float64{{10, 30}: 2, {5, 30}: 0.4, {15, 30}: 0.6, {10, 20}: 0.2, {10, 40}: 0.2}
	s := SurfaceOf(space, grid(space["fast"], space["slow"], func(a, b int) *float64 {
		if v, ok := spike[[2]int{a, b}]; ok {
			return f(v)
		}
		return f(0.1)
	}), Objective{})
	if s.Best["fast"] != 10 || s.Best["slow"] != 30 || s.Objective != 2 || s.Neighbours != 4 {
		t.Fatalf("spike: %+v", s)
	}
	if s.Plateau == nil || math.Abs(*s.Plateau-0.175) > 1e-12 || !s.Spike {
		t.Errorf("spike's plateau %v spike %v, want 0.175 true", s.Plateau, s.Spike)
	}
	if sl := s.Parameters[0]; sl.Name != "fast" || sl.Best != 1 || *sl.Objective[0] != 0.4 || *sl.Objective[2] != 0.6 {
		t.Errorf("fast slice: %+v", sl)
	}

	// A plateau: 1.0 at the best corner (15, 40), 0.9 next to it: neighbours (10,40) and
	// (15,30) → 0.9.
	s = SurfaceOf(space, grid(space["fast"], space["slow"], func(a, b int) *float64 {
		switch {
		case a == 15 && b == 40:
			return f(1)
		case a == 10 && b == 40, a == 15 && b == 30:
			return f(0.9)
		}
		return f(0.5)
	}), Objective{})
	if s.Neighbours != 2 || math.Abs(*s.Plateau-0.9) > 1e-12 || s.Spike {
		t.Errorf("plateau: %+v plateau %v", s, *s.Plateau)
	}

	// Minimising a drawdown: best 10 at (5, 20), neighbours 12 and 14 → 10/13.
	s = SurfaceOf(space, grid(space["fast"], space["slow"], func(a, b int) *float64 {
		switch {
		case a == 5 && b == 20:
			return f(10)
		case a == 10 && b == 20:
			return f(12)
		case a == 5 && b == 30:
			return f(14)
		}
		return f(30)
	}), Objective{Minimize: true})
	if math.Abs(*s.Plateau-10.0/13) > 1e-12 || s.Spike {
		t.Errorf("minimising: %v", *s.Plateau)
	}

	// A missing neighbour (random sampling) is left out; signs that differ give no score;
	// no objective at all gives no surface.
	pts := []Point{{Params: map[string]any{"fast": 10, "slow": 30}, Objective: f(1)}, {Params: map[string]any{"fast": 5, "slow": 30}, Objective: f(-1)}}
	s = SurfaceOf(space, pts, Objective{})
	if s.Neighbours != 1 || s.Plateau != nil || s.Spike || s.Parameters[1].Objective[0] != nil {
		t.Errorf("sparse, signs differ: %+v", s)
	}
	if SurfaceOf(space, []Point{{Params: map[string]any{"fast": 5, "slow": 20}}}, Objective{}) != nil {
		t.Error("a surface without objectives")
	}
}
