package overfit

import (
	"fmt"
	"math"
	"slices"
)

// MaxCPCVSplits bounds C(N, k), the splits of a combinatorial purged cross-validation:
// each split ranks every trial on its training and test bars.
const MaxCPCVSplits = 1000

// Range is a half-open range of bars [From, To), counted from 0.
type Range struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// CPCVSplit is one split of a combinatorial purged cross-validation.
type CPCVSplit struct {
	Index     int     `json:"index"`
	Groups    []int   `json:"test_groups"` // the test groups, from 0, ascending
	Test      []Range `json:"test"`        // their bars
	Train     []Range `json:"train"`       // the training bars: the rest, less purged and embargoed bars
	Purged    []Range `json:"purged"`      // training bars dropped within E bars before a test group
	Embargoed []Range `json:"embargoed"`   // training bars dropped within E bars after a test group
	// Best is the trial (index into the returns given) that ranks highest on the training
	// bars by the selection; TrainSharpe its Sharpe ratio there, TestSharpe on the test
	// bars; TrainReturn and TestReturn its compounded returns there.
	Best        int     `json:"best"`
	TrainSharpe float64 `json:"train_sharpe"`
	TestSharpe  float64 `json:"test_sharpe"`
	TrainReturn float64 `json:"train_return"`
	TestReturn  float64 `json:"test_return"`
	// Logit is λ = ln(ω/(1−ω)) of Best's relative rank ω out of sample among all trials,
	// by the selection (as in the PBO by CSCV); λ ≤ 0 counts towards PBO.
	Logit float64 `json:"logit"`
}

// CPCVPath is one backtest path: every group once, each tested in a different split by that
// split's chosen trial.
type CPCVPath struct {
	Index  int     `json:"index"`
	Splits []int   `json:"splits"` // per group, the split whose chosen trial's test returns it takes
	Sharpe float64 `json:"sharpe"` // per period, of the path's out-of-sample returns
}

// Selection is what a CPCV split chooses the trial by, on its training bars, and ranks the
// trials by on its test bars.
type Selection string

const (
	// BySharpe ranks by the per-bar Sharpe ratio.
	BySharpe Selection = "sharpe_ratio"
	// ByReturn ranks by the compounded return (the sum of ln(1+r)).
	ByReturn Selection = "total_return"
)

// CPCVResult is a combinatorial purged cross-validation (López de Prado, Advances in
// Financial Machine Learning, ch. 12) of a selection that picks the trial best in sample.
type CPCVResult struct {
	Groups      int         `json:"groups"`       // N
	TestGroups  int         `json:"test_groups"`  // k
	Embargo     int         `json:"embargo_bars"` // E
	Periods     int         `json:"periods"`      // T
	Trials      int         `json:"trials"`
	Selection   Selection   `json:"selection"`    // what each split chose its trial by
	GroupRanges []Range     `json:"group_ranges"` // the bars of each group
	Splits      []CPCVSplit `json:"splits"`       // C(N, k), in lexicographic order of their test groups
	Paths       []CPCVPath  `json:"paths"`        // φ = k/N·C(N, k)
	// Distribution summarises the paths' Sharpe ratios.
	Distribution Distribution `json:"distribution"`
	// PBO is the share of splits whose chosen trial ranks in the lower half out of sample.
	PBO float64 `json:"pbo"`
}

// Distribution summarises values.
type Distribution struct {
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"` // population
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// binomial is C(n, k) for 0 ≤ k < n, or -1 when it exceeds limit. C(n, k) ≥ n for
// 0 < k < n, so a larger n is refused before a product could overflow.
func binomial(n, k, limit int) int {
	if k > 0 && n > limit {
		return -1
	}
	c := 1
	for i := 1; i <= k; i++ {
		c = c * (n - k + i) / i
		if c > limit {
			return -1
		}
	}
	return c
}

// CPCVBounds checks N, k and E for t bars: 2 ≤ N ≤ t/2 (two bars a group at least),
// 1 ≤ k < N, 0 ≤ E < t/N, and C(N, k) ≤ MaxCPCVSplits.
func CPCVBounds(t, groups, k, embargo int) error {
	switch {
	case groups < 2:
		return fmt.Errorf("cpcv: %d groups, want at least 2", groups)
	case k < 1 || k >= groups:
		return fmt.Errorf("cpcv: %d test groups, want 1 to %d (fewer than the groups)", k, groups-1)
	case embargo < 0:
		return fmt.Errorf("cpcv: embargo of %d bars, want 0 or more", embargo)
	case binomial(groups, k, MaxCPCVSplits) < 0:
		return fmt.Errorf("cpcv: C(%d, %d) splits, want at most %d", groups, k, MaxCPCVSplits)
	case t < 2*groups:
		return fmt.Errorf("cpcv: %d bars for %d groups, want at least %d", t, groups, 2*groups)
	case embargo >= t/groups:
		return fmt.Errorf("cpcv: embargo of %d bars, want fewer than a group's %d", embargo, t/groups)
	}
	return nil
}

// combinations are the k-subsets of 0..n-1 in lexicographic order.
func combinations(n, k int) [][]int {
	var out [][]int
	c := make([]int, k)
	for i := range c {
		c[i] = i
	}
	for {
		out = append(out, slices.Clone(c))
		i := k - 1
		for i >= 0 && c[i] == n-k+i {
			i--
		}
		if i < 0 {
			return out
		}
		c[i]++
		for j := i + 1; j < k; j++ {
			c[j] = c[j-1] + 1
		}
	}
}

// ranges are the runs of bars where in[b] is true.
func ranges(in []bool) []Range {
	var out []Range
	for b := 0; b < len(in); b++ {
		if !in[b] {
			continue
		}
		from := b
		for b < len(in) && in[b] {
			b++
		}
		out = append(out, Range{From: from, To: b})
	}
	return out
}

// CPCV cross-validates the choice of the trial with the best Sharpe ratio in sample:
// returns holds one series per trial, all of t bars. The bars are cut into groups
// contiguous groups (group g is bars [g·t/N, (g+1)·t/N)); each split tests k of them and
// trains on the rest, less the bars within embargo bars before a test group (purged: their
// outcomes overlap the test period) and after one (embargoed: serial correlation leaks
// the test period into them). The chosen trial's test returns of the splits are assembled
// into φ paths: path j takes, for each group, the j-th split (in split order) that tests it.
func CPCV(returns [][]float64, groups, k, embargo int, by Selection) (CPCVResult, error) {
	if by != BySharpe && by != ByReturn {
		return CPCVResult{}, fmt.Errorf("cpcv: selection must be %s or %s, got %q", BySharpe, ByReturn, by)
	}
	n := len(returns)
	if n < 2 {
		return CPCVResult{}, fmt.Errorf("cpcv: %d trials, want at least 2", n)
	}
	t := len(returns[0])
	for i, r := range returns {
		if len(r) != t {
			return CPCVResult{}, fmt.Errorf("cpcv: trial %d has %d returns, trial 0 has %d", i, len(r), t)
		}
	}
	if err := CPCVBounds(t, groups, k, embargo); err != nil {
		return CPCVResult{}, err
	}
	out := CPCVResult{Groups: groups, TestGroups: k, Embargo: embargo, Periods: t, Trials: n, Selection: by}
	for g := range groups {
		out.GroupRanges = append(out.GroupRanges, Range{From: g * t / groups, To: (g + 1) * t / groups})
	}
	// Each group is tested in C(N−1, k−1) splits; path j takes the j-th of them.
	used := make([]int, groups)
	paths := binomial(groups-1, k-1, math.MaxInt32)
	pathSplits := make([][]int, paths)
	for j := range pathSplits {
		pathSplits[j] = make([]int, groups)
	}
	chosen := make([]int, 0)
	// Per trial: the sum, sum of squares and sum of ln(1+r) of each group's returns, and
	// of all of them.
	gsum, gsq, glog := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	tsum, tsq, tlog := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, r := range returns {
		gsum[i], gsq[i], glog[i] = make([]float64, groups), make([]float64, groups), make([]float64, groups)
		for g, gr := range out.GroupRanges {
			for _, v := range r[gr.From:gr.To] {
				gsum[i][g], gsq[i][g], glog[i][g] = gsum[i][g]+v, gsq[i][g]+v*v, glog[i][g]+math.Log1p(v)
			}
			tsum[i], tsq[i], tlog[i] = tsum[i]+gsum[i][g], tsq[i]+gsq[i][g], tlog[i]+glog[i][g]
		}
	}
	for si, test := range combinations(groups, k) {
		isTest := make([]bool, t)
		purged := make([]bool, t)
		embargoed := make([]bool, t)
		for _, g := range test {
			r := out.GroupRanges[g]
			for b := r.From; b < r.To; b++ {
				isTest[b] = true
			}
		}
		for _, g := range test {
			r := out.GroupRanges[g]
			for b := max(0, r.From-embargo); b < r.From; b++ {
				purged[b] = !isTest[b]
			}
			for b := r.To; b < min(t, r.To+embargo); b++ {
				// A bar both after one test group and before another is purged.
				embargoed[b] = !isTest[b] && !purged[b]
			}
		}
		train := make([]bool, t)
		for b := range train {
			train[b] = !isTest[b] && !purged[b] && !embargoed[b]
		}
		s := CPCVSplit{Index: si, Groups: test, Test: ranges(isTest), Train: ranges(train),
			Purged: ranges(purged), Embargoed: ranges(embargoed), Best: -1}
		var dropped []int
		ok := 0.0
		for b := range t {
			if purged[b] || embargoed[b] {
				dropped = append(dropped, b)
			}
			if isTest[b] {
				ok++
			}
		}
		tk := float64(t) - ok - float64(len(dropped))
		oos := make([]float64, n) // each trial's score on the test bars
		bestIn := math.Inf(-1)
		for i, r := range returns {
			// From the groups' sums: a split costs N + dropped bars per trial, not T.
			var os, oq, ol float64
			for _, g := range test {
				os, oq, ol = os+gsum[i][g], oq+gsq[i][g], ol+glog[i][g]
			}
			ts, tq, tl := tsum[i]-os, tsq[i]-oq, tlog[i]-ol
			for _, b := range dropped {
				ts, tq, tl = ts-r[b], tq-r[b]*r[b], tl-math.Log1p(r[b])
			}
			in := 0.0
			if tk > 0 {
				in = sharpe(ts, tq, tk)
			}
			trainScore, testSharpe := in, sharpe(os, oq, ok)
			oos[i] = testSharpe
			if by == ByReturn {
				trainScore, oos[i] = tl, ol
			}
			if s.Best < 0 || trainScore > bestIn {
				bestIn = trainScore
				s.Best, s.TrainSharpe, s.TestSharpe = i, in, testSharpe
				s.TrainReturn, s.TestReturn = math.Expm1(tl), math.Expm1(ol)
			}
		}
		lower, ties := 0, 0
		for i, v := range oos {
			switch {
			case i == s.Best:
			case v < oos[s.Best]:
				lower++
			case v == oos[s.Best]:
				ties++
			}
		}
		s.Logit = logit(n, 2*lower+ties)
		if s.Logit <= 0 {
			out.PBO++
		}
		for _, g := range test {
			pathSplits[used[g]][g] = si
			used[g]++
		}
		chosen = append(chosen, s.Best)
		out.Splits = append(out.Splits, s)
	}
	out.PBO /= float64(len(out.Splits))
	sharpes := make([]float64, paths)
	for j, ps := range pathSplits {
		var sum, sq, cnt float64
		for g, si := range ps {
			r := out.GroupRanges[g]
			for _, v := range returns[chosen[si]][r.From:r.To] {
				sum, sq, cnt = sum+v, sq+v*v, cnt+1
			}
		}
		sharpes[j] = sharpe(sum, sq, cnt)
		out.Paths = append(out.Paths, CPCVPath{Index: j, Splits: ps, Sharpe: sharpes[j]})
	}
	out.Distribution = distribution(sharpes)
	return out, nil
}

// distribution summarises x (not empty).
func distribution(x []float64) Distribution {
	mean, sd, _, _ := moments(x)
	s := slices.Clone(x)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Distribution{Mean: mean, SD: sd, Min: s[0], Median: med, Max: s[len(s)-1]}
}
