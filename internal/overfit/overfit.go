// Package overfit measures how likely the best of many backtests is to be luck, from the
// trials themselves: the Deflated Sharpe Ratio of the best trial (Bailey & López de Prado,
// 2014) and the Probability of Backtest Overfitting by combinatorially symmetric
// cross-validation (Bailey, Borwein, López de Prado & Zhu, 2015). Sharpe ratios here are
// per period (per bar), not annualised, as both papers state their formulas.
package overfit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"sync"
	"sync/atomic"
)

// eulerGamma is the Euler–Mascheroni constant.
const eulerGamma = 0.5772156649015329

// Deflated is the Deflated Sharpe Ratio of a study's best trial.
type Deflated struct {
	// Probability is the DSR: the probability that the best trial's true Sharpe ratio is
	// above zero, given that it is the best of Trials. Above 0.95 is the papers' usual bar.
	Probability float64 `json:"probability"`
	Sharpe      float64 `json:"sharpe"`   // the best trial's Sharpe ratio per period
	Expected    float64 `json:"expected"` // SR0: the best Sharpe ratio expected from Trials trials of pure luck
	Trials      int     `json:"trials"`   // N
	Periods     int     `json:"periods"`  // T: the best trial's returns
	Variance    float64 `json:"variance"` // V: the variance of the trials' Sharpe ratios
	Skewness    float64 `json:"skewness"` // γ3 of the best trial's returns
	Kurtosis    float64 `json:"kurtosis"` // γ4 (not excess: 3 for a normal distribution)
}

// DeflatedSharpe is the DSR of the trial whose returns are best, among trials whose
// Sharpe ratios per period are sharpes (the best's included).
//
//	SR0 = √V · ((1−γ)·Z⁻¹(1−1/N) + γ·Z⁻¹(1−1/(N·e)))
//	DSR = Z( (SR − SR0)·√(T−1) / √(1 − γ3·SR + (γ4−1)/4·SR²) )
//
// with Z the standard normal distribution and γ the Euler–Mascheroni constant (the
// paper's equations 2 and 9 to 11). With one trial SR0 is 0 and the DSR is the
// Probabilistic Sharpe Ratio.
func DeflatedSharpe(best []float64, sharpes []float64) (Deflated, error) {
	if len(best) < 3 {
		return Deflated{}, fmt.Errorf("deflated Sharpe ratio: %d returns, want at least 3", len(best))
	}
	if len(sharpes) == 0 {
		return Deflated{}, errors.New("deflated Sharpe ratio: no trials")
	}
	mean, sd, skew, kurt := moments(best)
	d := Deflated{Trials: len(sharpes), Periods: len(best), Skewness: skew, Kurtosis: kurt}
	if sd > 0 {
		d.Sharpe = mean / sd
	}
	_, spread, _, _ := moments(sharpes)
	d.Variance = spread * spread
	d.Expected = ExpectedMaxSharpe(d.Variance, d.Trials)
	d.Probability = deflated(d.Sharpe, d.Expected, d.Periods, skew, kurt)
	return d, nil
}

// ExpectedMaxSharpe is SR0, the expected largest Sharpe ratio among n trials whose true
// Sharpe ratios are all zero and whose estimates vary with variance v.
func ExpectedMaxSharpe(v float64, n int) float64 {
	if n < 2 || v <= 0 {
		return 0
	}
	fn := float64(n)
	return math.Sqrt(v) * ((1-eulerGamma)*normQuantile(1-1/fn) + eulerGamma*normQuantile(1-1/(fn*math.E)))
}

// deflated is the probability that a Sharpe ratio sr, estimated from t returns of this
// skewness and kurtosis, exceeds sr0.
func deflated(sr, sr0 float64, t int, skew, kurt float64) float64 {
	den := 1 - skew*sr + (kurt-1)/4*sr*sr
	if den <= 0 || t < 2 {
		return math.NaN()
	}
	return normCDF((sr - sr0) * math.Sqrt(float64(t-1)) / math.Sqrt(den))
}

// moments are the mean, standard deviation (population), skewness and kurtosis of x.
func moments(x []float64) (mean, sd, skew, kurt float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var m2, m3, m4 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	m2, m3, m4 = m2/n, m3/n, m4/n
	sd = math.Sqrt(m2)
	if m2 > 0 {
		skew = m3 / math.Pow(m2, 1.5)
		kurt = m4 / (m2 * m2)
	} else {
		kurt = 3
	}
	return mean, sd, skew, kurt
}

// Sharpe is the Sharpe ratio per period of returns: their mean over their standard
// deviation (0 when they do not vary).
func Sharpe(returns []float64) float64 {
	mean, sd, _, _ := moments(returns)
	if sd == 0 {
		return 0
	}
	return mean / sd
}

func normCDF(x float64) float64      { return 0.5 * math.Erfc(-x/math.Sqrt2) }
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// DefaultBlocks is S, the number of blocks the periods are cut into for the PBO.
const DefaultBlocks = 16

// PBO is the Probability of Backtest Overfitting of a study.
type PBO struct {
	// Probability is the share of splits in which the trial best in-sample ranks in the
	// lower half out-of-sample: near 0.5 for trials that differ only by luck, near 0 when
	// the in-sample winner really is better.
	Probability float64 `json:"probability"`
	Blocks      int     `json:"blocks"`  // S
	Splits      int     `json:"splits"`  // C(S, S/2)
	Periods     int     `json:"periods"` // T used (a multiple of S: the earliest periods left over are dropped)
	Trials      int     `json:"trials"`  // N
	// Logits are λ = ln(ω/(1−ω)) of each split, where ω is the in-sample winner's relative
	// rank out-of-sample (rank/(N+1)); PBO is the share of λ ≤ 0.
	Logits []float64 `json:"logits"`
	// Ranks counts the in-sample winner's out-of-sample rank over the splits: Ranks[i] is
	// how many splits ranked it i+1 of N (1: the worst, N: the best).
	Ranks []int `json:"ranks"`
}

// Overfitting is the PBO by combinatorially symmetric cross-validation over returns, one
// series per trial, all of the same length (the same periods), with blocks (even, 0:
// DefaultBlocks) blocks. Each split takes half the blocks as the in-sample set and the
// rest as the out-of-sample one; performance is the Sharpe ratio. The splits are shared
// among jobs goroutines (below 1: one); the answer does not depend on jobs.
func Overfitting(returns [][]float64, blocks, jobs int) (PBO, error) {
	if blocks == 0 {
		blocks = DefaultBlocks
	}
	if blocks < 2 || blocks%2 != 0 || blocks > 24 {
		return PBO{}, fmt.Errorf("probability of backtest overfitting: %d blocks, want an even number from 2 to 24", blocks)
	}
	n := len(returns)
	if n < 2 {
		return PBO{}, fmt.Errorf("probability of backtest overfitting: %d trials, want at least 2", n)
	}
	t := len(returns[0])
	for i, r := range returns {
		if len(r) != t {
			return PBO{}, fmt.Errorf("probability of backtest overfitting: trial %d has %d returns, trial 0 has %d", i, len(r), t)
		}
	}
	size := t / blocks
	if size < 2 {
		return PBO{}, fmt.Errorf("probability of backtest overfitting: %d returns for %d blocks, want at least %d", t, blocks, 2*blocks)
	}
	skip := t - size*blocks
	// Per block and trial: the sum and the sum of squares of its returns, so that a split's
	// Sharpe ratios are sums over its blocks.
	sum := make([][]float64, blocks)
	sq := make([][]float64, blocks)
	parallel(blocks, jobs, func(b int) {
		sum[b], sq[b] = make([]float64, n), make([]float64, n)
		for j, r := range returns {
			for _, v := range r[skip+b*size : skip+(b+1)*size] {
				sum[b][j] += v
				sq[b][j] += v * v
			}
		}
	})
	c := cscv{blocks: blocks, n: n, sum: sum, sq: sq, half: float64(size * blocks / 2)}
	// The splits are the leaves of a tree that puts block 0, 1, … in or out of sample in
	// turn; a task is a subtree below one choice for the first blocks/2 blocks. Every split
	// has its complement (the halves swapped), whose Sharpe ratios are the same two arrays
	// the other way round, so only the half of the tree with block 0 in sample is walked
	// and each leaf ranks both splits. The largest subtrees go first, so that no large one
	// is left to finish alone while the other goroutines have nothing to do.
	prefixes := c.prefixes(blocks / 2)
	slices.SortStableFunc(prefixes, func(a, b []bool) int { return c.leaves(b) - c.leaves(a) })
	parts := make([]cscvTally, max(1, min(jobs, len(prefixes))))
	var next atomic.Int64
	parallel(len(parts), len(parts), func(w int) {
		s := c.newState()
		for {
			i := int(next.Add(1) - 1)
			if i >= len(prefixes) {
				break
			}
			s.walk(prefixes[i])
		}
		parts[w] = s.tally
	})
	out := PBO{Blocks: blocks, Periods: size * blocks, Trials: n, Ranks: make([]int, n)}
	// A split's logit depends only on its twice rank, 2·lower + ties, and grows with it:
	// the logits in order are each twice rank's, as often as it came, from the smallest.
	// (Sorting 12,870 of them took a millisecond on one core.)
	counts := make([]int, 2*n)
	for _, p := range parts {
		for r, k := range p.ranks {
			out.Ranks[r] += k
		}
		for k, c := range p.counts {
			counts[k] += c
		}
	}
	splits := 0
	for _, c := range counts {
		splits += c
	}
	below := 0
	out.Logits = make([]float64, 0, splits)
	for k, c := range counts {
		if c == 0 {
			continue
		}
		l := logit(n, k)
		if l <= 0 {
			below += c
		}
		for range c {
			out.Logits = append(out.Logits, l)
		}
	}
	out.Splits = len(out.Logits)
	out.Probability = float64(below) / float64(out.Splits)
	return out, nil
}

// cscv is the combinatorially symmetric cross-validation of one PBO: per block and trial,
// the sum and the sum of squares of the block's returns.
type cscv struct {
	blocks, n int
	sum, sq   [][]float64
	half      float64 // periods in a half
}

// cscvTally is what a share of the splits found: how many splits' in-sample best had
// each twice rank out of sample (2·lower + ties, see add), and each rank (Ranks').
type cscvTally struct {
	counts []int
	ranks  []int
}

// cscvState is one goroutine's walk through splits. A split's in-sample sums add its
// in-sample blocks in ascending order, as do the out-of-sample ones: in[k] holds the sums
// of the first k in-sample blocks of the current path (s and q, each per trial), out[k]
// those of the first k out-of-sample ones. Paths that share a beginning share its sums,
// and each sum is formed in the same order as adding the split's blocks one by one.
type cscvState struct {
	c           *cscv
	inS, inQ    [][]float64
	outS, outQ  [][]float64
	isSR, oosSR []float64
	tally       cscvTally
}

func (c *cscv) newState() *cscvState {
	h := c.blocks / 2
	level := func() [][]float64 {
		l := make([][]float64, h+1)
		for k := range l {
			l[k] = make([]float64, c.n)
		}
		return l
	}
	return &cscvState{c: c, inS: level(), inQ: level(), outS: level(), outQ: level(),
		isSR: make([]float64, c.n), oosSR: make([]float64, c.n), tally: cscvTally{counts: make([]int, 2*c.n), ranks: make([]int, c.n)}}
}

// prefixes are the ways to put the first depth blocks in (true) or out of sample with
// neither side over half the blocks.
func (c *cscv) prefixes(depth int) [][]bool {
	h := c.blocks / 2
	var out [][]bool
	var rec func(p []bool, ins int)
	rec = func(p []bool, ins int) {
		if len(p) == depth {
			out = append(out, slices.Clone(p))
			return
		}
		if ins < h {
			rec(append(p, true), ins+1)
		}
		if len(p)-ins < h {
			rec(append(p, false), ins)
		}
	}
	// Block 0 is in sample: the other half of the splits are these' complements.
	rec(append(make([]bool, 0, depth), true), 1)
	return out
}

// leaves is the number of splits below prefix: the ways to fill the blocks after it.
func (c *cscv) leaves(prefix []bool) int {
	ins := 0
	for _, in := range prefix {
		if in {
			ins++
		}
	}
	rest, need := c.blocks-len(prefix), c.blocks/2-ins
	k := 1 // C(rest, need), exact in an int for 24 blocks
	for i := 1; i <= need; i++ {
		k = k * (rest - need + i) / i
	}
	return k
}

// walk visits every split that begins with prefix.
func (s *cscvState) walk(prefix []bool) {
	ins := 0
	for b, in := range prefix {
		s.add(b, ins, b-ins, in)
		if in {
			ins++
		}
	}
	s.descend(len(prefix), ins)
}

// add puts block b in (in) or out of sample after ins in-sample and outs out-of-sample
// blocks.
func (s *cscvState) add(b, ins, outs int, in bool) {
	sum, sq := s.c.sum[b], s.c.sq[b]
	if in {
		fromS, fromQ, toS, toQ := s.inS[ins], s.inQ[ins], s.inS[ins+1], s.inQ[ins+1]
		for j := range toS {
			toS[j], toQ[j] = fromS[j]+sum[j], fromQ[j]+sq[j]
		}
		return
	}
	fromS, fromQ, toS, toQ := s.outS[outs], s.outQ[outs], s.outS[outs+1], s.outQ[outs+1]
	for j := range toS {
		toS[j], toQ[j] = fromS[j]+sum[j], fromQ[j]+sq[j]
	}
}

// descend visits every split that continues the current path from block b, with ins of
// the blocks before it in sample.
func (s *cscvState) descend(b, ins int) {
	h := s.c.blocks / 2
	if b == s.c.blocks {
		s.split()
		return
	}
	if ins < h {
		s.add(b, ins, b-ins, true)
		s.descend(b+1, ins+1)
	}
	if b-ins < h {
		s.add(b, ins, b-ins, false)
		s.descend(b+1, ins)
	}
}

// split ranks the trials of the split the current path has reached and of its complement:
// the in-sample Sharpe ratios of one are the out-of-sample ones of the other, each sum
// formed from its blocks in ascending order either way. One pass computes both halves'
// ratios and the best of each (the first of equals), a second ranks each best in the other
// half.
func (s *cscvState) split() {
	h, n, half := s.c.blocks/2, s.c.n, s.c.half
	inS, inQ, outS, outQ := s.inS[h], s.inQ[h], s.outS[h], s.outQ[h]
	a, b := s.isSR, s.oosSR
	bestA, bestB := 0, 0
	for j := range n {
		a[j], b[j] = sharpe(inS[j], inQ[j], half), sharpe(outS[j], outQ[j], half)
		if a[j] > a[bestA] {
			bestA = j
		}
		if b[j] > b[bestB] {
			bestB = j
		}
	}
	// Each best's rank in the other half, 1 (worst) to N (best), ties shared.
	ta, tb := b[bestA], a[bestB]
	var lowerA, tiesA, lowerB, tiesB int
	for j := range n {
		switch {
		case b[j] < ta:
			lowerA++
		case b[j] == ta && j != bestA:
			tiesA++
		}
		switch {
		case a[j] < tb:
			lowerB++
		case a[j] == tb && j != bestB:
			tiesB++
		}
	}
	s.tally.add(n, lowerA, tiesA)
	s.tally.add(n, lowerB, tiesB)
}

// add counts a split whose in-sample best has lower trials below it out of sample and
// ties equal to it, of n.
func (t *cscvTally) add(n, lower, ties int) {
	t.counts[2*lower+ties]++
	t.ranks[min(n-1, lower+ties/2)]++
}

// logit is λ of a split whose in-sample best has lower of n trials below it out of
// sample and ties equal to it, twice = 2·lower + ties: its rank is lower + 1 + ties/2
// (the same float: these are halves far below 2⁵³).
func logit(n, twice int) float64 {
	rank := float64(twice)/2 + 1
	w := rank / float64(n+1)
	return math.Log(w / (1 - w))
}

// parallel calls fn(i) for i from 0 to n-1 on up to jobs goroutines (below 1: one) and
// returns when all have returned.
func parallel(n, jobs int, fn func(i int)) {
	jobs = max(1, min(jobs, n))
	if jobs == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// Sharpes are the Sharpe ratios per period of each of returns (see Sharpe), computed on
// up to jobs goroutines.
func Sharpes(returns [][]float64, jobs int) []float64 {
	out := make([]float64, len(returns))
	parallel(len(returns), jobs, func(i int) { out[i] = Sharpe(returns[i]) })
	return out
}

// sharpe is the Sharpe ratio of k returns whose sum is s and sum of squares q.
func sharpe(s, q, k float64) float64 {
	mean := s / k
	v := q/k - mean*mean
	if v <= 1e-24 {
		return 0
	}
	return mean / math.Sqrt(v)
}
