package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The values of these indicators against real backtrader are pinned by internal/jsrt's
// TestRegistryParity; these cases pin what the fixtures show only implicitly.

func sameVals(t *testing.T, name string, got Series, want []float64) {
	t.Helper()
	if len(got.Vals) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got.Vals), len(want))
	}
	for i := range want {
		g, w := got.Vals[i], want[i]
		if !(math.IsNaN(g) && math.IsNaN(w)) && math.Abs(g-w) > 1e-12 {
			t.Fatalf("%s: bar %d = %v, want %v (all: %v)", name, i, g, w, got.Vals)
		}
	}
}

func TestMiscIndicatorSemantics(t *testing.T) {
	nan := math.NaN()
	close := Line([]float64{10, 11, 12, 13, 14})
	tests := []struct {
		name string
		got  Series
		want []float64
	}{
		// the close shift bars ahead: the value at a bar is a later bar's close
		{"Chikou", Chikou(close, 2), []float64{12, 13, 14, nan, nan}},
		// strictly below the current value, over the window that holds it
		{"PercentRank", PercentRank(Line([]float64{3, 1, 2, 2, 5}), 3), []float64{nan, nan, 1.0 / 3, 1.0 / 3, 2.0 / 3}},
		{"UpMove", UpMove(close), []float64{nan, 1, 1, 1, 1}},
		// a later warm-up (ParabolicSAR's period); an earlier one changes nothing
		{"WarmUntil", WarmUntil(close, 2), []float64{nan, nan, 12, 13, 14}},
		{"WarmUntil before the first", WarmUntil(UpMove(close), 0), []float64{nan, 1, 1, 1, 1}},
		{"DownMove", DownMove(close), []float64{nan, -1, -1, -1, -1}},
		{"TrueHigh", TrueHigh(Line([]float64{5, 9, 3}), Line([]float64{6, 4, 8})), []float64{nan, 9, 4}},
		{"TrueLow", TrueLow(Line([]float64{5, 9, 3}), Line([]float64{6, 4, 8})), []float64{nan, 6, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { sameVals(t, tc.name, tc.got, tc.want) })
	}
}

// A fractal is written two bars back, at the bar where the window's first maximum sits
// at shift, and nowhere else.
func TestFractalWritesBack(t *testing.T) {
	high := Line([]float64{1, 2, 5, 2, 1, 1, 1})
	low := Line([]float64{5, 4, 1, 4, 5, 5, 5})
	be, bu := Fractal(high, low, 5, 0.1, 2)
	nan := math.NaN()
	sameVals(t, "bearish", be, []float64{nan, nan, 5 * 1.1, nan, nan, nan, nan})
	sameVals(t, "bullish", bu, []float64{nan, nan, 1 * 0.9, nan, nan, nan, nan})
	if be.First != 4 {
		t.Errorf("First = %d, want 4 (backtrader's minperiod 5)", be.First)
	}
}

// DemarkPivotPoint follows backtrader's CmpEx (runonce): close below the open, above it
// and at it each take their own x.
func TestDemarkPivotBranches(t *testing.T) {
	open := Line([]float64{10, 10, 10})
	high := Line([]float64{12, 12, 12})
	low := Line([]float64{8, 8, 8})
	close := Line([]float64{9, 11, 10})
	p, s1, r1 := DemarkPivotPoint(open, high, low, close)
	x := []float64{12 + 16 + 9, 12 + 8 + 22, 24 + 8 + 10}
	for i, xi := range x {
		if p.Vals[i] != xi/4 || s1.Vals[i] != xi/2-12 || r1.Vals[i] != xi/2-8 {
			t.Errorf("bar %d: p %v s1 %v r1 %v, want x = %v", i, p.Vals[i], s1.Vals[i], r1.Vals[i], xi)
		}
	}
}

// pairwiseSum is exact where every partial sum is (whole numbers), at every length
// through its three regimes, and close to an exactly rounded sum elsewhere.
func TestPairwiseSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 127, 128, 129, 300, 1000} {
		ints, floats := make([]float64, n), make([]float64, n)
		want := 0.0
		for i := range ints {
			ints[i] = float64(r.IntN(1000) - 500)
			want += ints[i]
			floats[i] = r.Float64()*200 - 100
		}
		if got := pairwiseSum(ints); got != want {
			t.Errorf("n=%d: %v, want %v", n, got, want)
		}
		if got, exact := pairwiseSum(floats), Fsum(slices.Clone(floats)); math.Abs(got-exact) > 1e-10 {
			t.Errorf("n=%d: %v, exactly %v", n, got, exact)
		}
	}
}

// Coint's edges: outside MacKinnon's tables the p-value is 0 or 1, an unknown trend
// gives no value; its values against statsmodels are TestRegistryParity's (CointN).
func TestCointEdges(t *testing.T) {
	if p := mackinnon["c"].pvalue(-30); p != 0 {
		t.Errorf("p-value far below the table: %v, want 0", p)
	}
	if p := mackinnon["c"].pvalue(5); p != 1 {
		t.Errorf("p-value above the table: %v, want 1", p)
	}
	x := Line([]float64{1, 3, 2, 5, 4, 6, 8, 7, 9, 12, 10, 11})
	y := Line([]float64{2, 1, 4, 3, 6, 5, 7, 9, 8, 10, 13, 12})
	s, p := Coint(x, y, 10, "x")
	for i := range s.Vals {
		if !math.IsNaN(s.Vals[i]) || !math.IsNaN(p.Vals[i]) {
			t.Fatalf("unknown trend: bar %d has %v, %v", i, s.Vals[i], p.Vals[i])
		}
	}
	s, p = Coint(x, y, 10, "c")
	if s.First != 9 || math.IsNaN(p.Vals[9]) || p.Vals[9] < 0 || p.Vals[9] > 1 {
		t.Errorf("first value at %d, p-value %v", s.First, p.Vals[9])
	}
}
