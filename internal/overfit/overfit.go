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
	"sort"
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
// rest as the out-of-sample one; performance is the Sharpe ratio.
func Overfitting(returns [][]float64, blocks int) (PBO, error) {
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
	for b := range blocks {
		sum[b], sq[b] = make([]float64, n), make([]float64, n)
		for j, r := range returns {
			for _, v := range r[skip+b*size : skip+(b+1)*size] {
				sum[b][j] += v
				sq[b][j] += v * v
			}
		}
	}
	out := PBO{Blocks: blocks, Periods: size * blocks, Trials: n, Ranks: make([]int, n)}
	in := make([]bool, blocks)
	isS, oosS := make([]float64, n), make([]float64, n)
	var below int
	combinations(blocks, blocks/2, func(chosen []int) {
		clear(in)
		for _, b := range chosen {
			in[b] = true
		}
		half := float64(size * blocks / 2)
		for j := range n {
			var s1, q1, s2, q2 float64
			for b := range blocks {
				if in[b] {
					s1, q1 = s1+sum[b][j], q1+sq[b][j]
				} else {
					s2, q2 = s2+sum[b][j], q2+sq[b][j]
				}
			}
			isS[j], oosS[j] = sharpe(s1, q1, half), sharpe(s2, q2, half)
		}
		best := 0
		for j := 1; j < n; j++ {
			if isS[j] > isS[best] {
				best = j
			}
		}
		// Its rank out-of-sample, 1 (worst) to N (best), ties shared.
		var lower, ties int
		for j := range n {
			switch {
			case oosS[j] < oosS[best]:
				lower++
			case oosS[j] == oosS[best] && j != best:
				ties++
			}
		}
		rank := float64(lower) + 1 + float64(ties)/2
		w := rank / float64(n+1)
		l := math.Log(w / (1 - w))
		out.Logits = append(out.Logits, l)
		out.Ranks[min(n-1, lower+ties/2)]++
		if l <= 0 {
			below++
		}
	})
	out.Splits = len(out.Logits)
	out.Probability = float64(below) / float64(out.Splits)
	sort.Float64s(out.Logits)
	return out, nil
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

// combinations calls fn with each k-subset of 0..n-1, in lexicographic order.
func combinations(n, k int, fn func([]int)) {
	c := make([]int, k)
	for i := range c {
		c[i] = i
	}
	for {
		fn(c)
		i := k - 1
		for i >= 0 && c[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		c[i]++
		for j := i + 1; j < k; j++ {
			c[j] = c[j-1] + 1
		}
	}
}
