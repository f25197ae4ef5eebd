package overfit

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestCPCVHand checks a tiny case worked by hand: 12 bars in 4 groups of 3, 2 test groups,
// an embargo of 1 bar, and two trials, one winning the first half and losing the second,
// the other its mirror. The returns are binary fractions so that sums are exact.
func TestCPCVHand(t *testing.T) {
	t.Parallel()
	a := []float64{.25, .125, .375, .25, .125, .375, -.25, -.125, -.375, -.25, -.125, -.375}
	b := make([]float64, len(a))
	for i, v := range a {
		b[i] = -v
	}
	got, err := CPCV([][]float64{a, b}, 4, 2, 1, BySharpe)
	if err != nil {
		t.Fatal(err)
	}
	r := func(p ...int) []Range {
		var out []Range
		for i := 0; i < len(p); i += 2 {
			out = append(out, Range{p[i], p[i+1]})
		}
		return out
	}
	if want := r(0, 3, 3, 6, 6, 9, 9, 12); !reflect.DeepEqual(got.GroupRanges, want) {
		t.Errorf("groups %v, want %v", got.GroupRanges, want)
	}
	// Purged: the bar before each test group that is not itself tested; embargoed: the bar
	// after. Best: the trial whose training bars sum higher (both have the same spread).
	splits := []struct {
		groups                         []int
		test, train, purged, embargoed []Range
		best                           int
		logit                          float64
	}{
		{[]int{0, 1}, r(0, 6), r(7, 12), nil, r(6, 7), 1, -math.Ln2},
		{[]int{0, 2}, r(0, 3, 6, 9), r(4, 5, 10, 12), r(5, 6), r(3, 4, 9, 10), 1, 0},
		{[]int{0, 3}, r(0, 3, 9, 12), r(4, 8), r(8, 9), r(3, 4), 0, 0},
		{[]int{1, 2}, r(3, 9), r(0, 2, 10, 12), r(2, 3), r(9, 10), 1, 0},
		{[]int{1, 3}, r(3, 6, 9, 12), r(0, 2, 7, 8), r(2, 3, 8, 9), r(6, 7), 0, 0},
		{[]int{2, 3}, r(6, 12), r(0, 5), r(5, 6), nil, 0, -math.Ln2},
	}
	if len(got.Splits) != len(splits) {
		t.Fatalf("%d splits, want %d", len(got.Splits), len(splits))
	}
	for i, w := range splits {
		s := got.Splits[i]
		if !reflect.DeepEqual(s.Groups, w.groups) || !reflect.DeepEqual(s.Test, w.test) || !reflect.DeepEqual(s.Train, w.train) ||
			!reflect.DeepEqual(s.Purged, w.purged) || !reflect.DeepEqual(s.Embargoed, w.embargoed) {
			t.Errorf("split %d: groups %v test %v train %v purged %v embargoed %v, want %v %v %v %v %v",
				i, s.Groups, s.Test, s.Train, s.Purged, s.Embargoed, w.groups, w.test, w.train, w.purged, w.embargoed)
		}
		if s.Best != w.best || math.Abs(s.Logit-w.logit) > 1e-12 {
			t.Errorf("split %d: best %d logit %v, want %d %v", i, s.Best, s.Logit, w.best, w.logit)
		}
	}
	if got.PBO != 1 {
		t.Errorf("PBO %v, want 1 (every split's choice at or below the median out of sample)", got.PBO)
	}
	// φ = 2/4·6 = 3 paths; group g's j-th testing split goes to path j.
	wantSplits := [][]int{{0, 0, 1, 2}, {1, 3, 3, 4}, {2, 4, 5, 5}}
	// Path 0: group 0 and 1 from split 0 (trial b), group 2 from split 1 (b), group 3
	// from split 2 (a); path 1: b, b, b, a; path 2: a, a, a, a.
	cat := func(parts ...[]float64) []float64 {
		var out []float64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	wantPaths := [][]float64{
		cat(b[0:3], b[3:6], b[6:9], a[9:12]),
		cat(b[0:3], b[3:6], b[6:9], a[9:12]),
		cat(a[0:3], a[3:6], a[6:9], a[9:12]),
	}
	if len(got.Paths) != 3 {
		t.Fatalf("%d paths, want 3", len(got.Paths))
	}
	var sharpes []float64
	for j, p := range got.Paths {
		want := Sharpe(wantPaths[j])
		sharpes = append(sharpes, want)
		if !reflect.DeepEqual(p.Splits, wantSplits[j]) || math.Abs(p.Sharpe-want) > 1e-12 {
			t.Errorf("path %d: splits %v Sharpe %v, want %v %v", j, p.Splits, p.Sharpe, wantSplits[j], want)
		}
	}
	// Path 0 by hand: −a, −a, +a, −a over the groups' (.25, .125, .375): mean −.125,
	// variance .21875/3 − .015625.
	if want := -0.125 / math.Sqrt(0.21875/3-0.015625); math.Abs(sharpes[0]-want) > 1e-12 {
		t.Errorf("path 0 Sharpe %v, want %v", sharpes[0], want)
	}
	d := got.Distribution
	if d.Min != min(sharpes[0], sharpes[2]) || d.Max != max(sharpes[0], sharpes[2]) || d.Median != sharpes[0] {
		t.Errorf("distribution %+v of %v", d, sharpes)
	}
}

// TestCPCVEdge: with one trial that truly earns more, every split chooses it and PBO is 0.
func TestCPCVEdge(t *testing.T) {
	t.Parallel()
	got, err := CPCV(noise(3, 20, 600, 7), 6, 2, 5, BySharpe)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Splits) != 15 || len(got.Paths) != 5 {
		t.Fatalf("%d splits, %d paths, want 15 and 5", len(got.Splits), len(got.Paths))
	}
	for _, s := range got.Splits {
		if s.Best != 7 {
			t.Errorf("split %d chose trial %d, want 7", s.Index, s.Best)
		}
	}
	if got.PBO != 0 || got.Distribution.Min <= 0 {
		t.Errorf("PBO %v, paths' Sharpe %+v: want 0 and all above 0", got.PBO, got.Distribution)
	}
}

func TestCPCVBounds(t *testing.T) {
	t.Parallel()
	ok := [][]float64{make([]float64, 100), make([]float64, 100)}
	for _, c := range []struct {
		returns           [][]float64
		groups, k, embarg int
		want              string
	}{
		{ok, 1, 1, 0, "groups"},
		{ok, 4, 0, 0, "test groups"},
		{ok, 4, 4, 0, "test groups"},
		{ok, 4, 2, -1, "embargo"},
		{ok, 4, 2, 25, "embargo"},
		{ok, 51, 1, 0, "bars"},
		{ok, 40, 20, 0, "splits"},
		{ok[:1], 4, 2, 0, "trials"},
		{[][]float64{make([]float64, 100), make([]float64, 99)}, 4, 2, 0, "returns"},
	} {
		_, err := CPCV(c.returns, c.groups, c.k, c.embarg, BySharpe)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("N=%d k=%d E=%d: %v, want an error about %s", c.groups, c.k, c.embarg, err, c.want)
		}
	}
}

// FuzzCPCV: any N, k and E either fail the bounds or give C(N, k) splits whose training
// bars keep E bars away from every test group, and φ paths that each take every group once.
func FuzzCPCV(f *testing.F) {
	f.Add(4, 2, 1, 40)
	f.Add(6, 3, 0, 13)
	f.Add(2, 1, 9, 20)
	f.Fuzz(func(t *testing.T, groups, k, embargo, bars int) {
		bars = max(0, min(bars, 300))
		returns := noise(uint64(bars), 3, bars, 1)
		got, err := CPCV(returns, groups, k, embargo, BySharpe)
		if err != nil {
			return
		}
		if len(got.Splits) != binomial(groups, k, MaxCPCVSplits) || len(got.Paths)*groups != k*len(got.Splits) {
			t.Fatalf("N=%d k=%d: %d splits %d paths", groups, k, len(got.Splits), len(got.Paths))
		}
		for _, s := range got.Splits {
			for _, tr := range s.Train {
				for _, te := range s.Test {
					if tr.From < te.To+embargo && te.From-embargo < tr.To {
						t.Fatalf("split %d: training %v within %d bars of test %v", s.Index, tr, embargo, te)
					}
				}
			}
		}
		for _, p := range got.Paths {
			for g, si := range p.Splits {
				if !slices.Contains(got.Splits[si].Groups, g) {
					t.Fatalf("path %d takes group %d from split %d, which does not test it", p.Index, g, si)
				}
			}
		}
	})
}

func TestBinomial(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, k, limit, want int }{
		{4, 2, 1000, 6}, {3, 0, 1000, 1}, {16, 8, 1000, -1}, {16, 8, 20000, 12870}, {math.MaxInt / 2, 2, 1000, -1}, {1001, 1, 1000, -1},
	} {
		if got := binomial(c.n, c.k, c.limit); got != c.want {
			t.Errorf("C(%d, %d) limit %d = %d, want %d", c.n, c.k, c.limit, got, c.want)
		}
	}
}

// BenchmarkCPCV is the largest split count allowed near its bound: C(12, 6) = 924 splits
// of 200 trials over 2,500 bars.
func BenchmarkCPCV(b *testing.B) {
	returns := noise(5, 200, 2500, -1)
	for b.Loop() {
		if _, err := CPCV(returns, 12, 6, 10, BySharpe); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCPCVSelection: a steady trial (A: +1%, +3%, ..., Sharpe 2 a bar) and a volatile one
// that compounds to more (B: −5%, +15%, ..., Sharpe 0.5): by Sharpe each split chooses A,
// by return B, whose compounded return over a group of 4 bars is (0.95·1.15)² − 1.
func TestCPCVSelection(t *testing.T) {
	t.Parallel()
	a := []float64{.01, .03, .01, .03, .01, .03, .01, .03}
	b := []float64{-.05, .15, -.05, .15, -.05, .15, -.05, .15}
	for _, c := range []struct {
		by   Selection
		best int
		ret  float64
	}{
		{BySharpe, 0, 1.01*1.03*1.01*1.03 - 1},
		{ByReturn, 1, 0.95*1.15*0.95*1.15 - 1},
	} {
		got, err := CPCV([][]float64{a, b}, 2, 1, 0, c.by)
		if err != nil {
			t.Fatal(err)
		}
		if got.Selection != c.by || len(got.Splits) != 2 || got.PBO != 0 {
			t.Fatalf("%s: selection %s, %d splits, PBO %v", c.by, got.Selection, len(got.Splits), got.PBO)
		}
		for _, s := range got.Splits {
			if s.Best != c.best || math.Abs(s.TrainReturn-c.ret) > 1e-12 || math.Abs(s.TestReturn-c.ret) > 1e-12 {
				t.Errorf("%s split %d: best %d, returns %v in and %v out, want %d and %v", c.by, s.Index, s.Best, s.TrainReturn, s.TestReturn, c.best, c.ret)
			}
		}
	}
	if _, err := CPCV([][]float64{a, b}, 2, 1, 0, "sqn"); err == nil || !strings.Contains(err.Error(), `selection must be sharpe_ratio or total_return, got "sqn"`) {
		t.Errorf("error %v", err)
	}
}
