package overfit

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"
)

// previousOverfitting is the PBO as it was computed before the splits were shared among
// goroutines (main at 82576d6), kept to hold the new computation to it bit for bit.
func previousOverfitting(returns [][]float64, blocks int) PBO {
	n := len(returns)
	t := len(returns[0])
	size := t / blocks
	skip := t - size*blocks
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
	previousCombinations(blocks, blocks/2, func(chosen []int) {
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
	return out
}

func previousCombinations(n, k int, fn func([]int)) {
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

// TestOverfittingAsBefore: whatever the number of goroutines, the PBO is the previous
// computation's to the bit: the same probability, logits, ranks and splits, ties included.
func TestOverfittingAsBefore(t *testing.T) {
	t.Parallel()
	tied := noise(9, 6, 400, -1)
	tied[3] = tied[1]              // two trials with the same returns
	tied[5] = make([]float64, 400) // one that never trades
	tied[4] = make([]float64, 400) // and another
	for _, tt := range []struct {
		name    string
		returns [][]float64
		blocks  int
	}{
		{"two blocks", noise(1, 5, 100, -1), 2},
		{"eight blocks, an edge", noise(2, 30, 800, 4), 8},
		{"sixteen blocks, noise", noise(3, 50, 1003, -1), 16},
		{"ties", tied, 10},
		{"two trials", noise(4, 2, 300, -1), 12},
	} {
		want := previousOverfitting(tt.returns, tt.blocks)
		for _, jobs := range []int{0, 1, 2, 3, 8, 100} {
			t.Run(fmt.Sprintf("%s/jobs=%d", tt.name, jobs), func(t *testing.T) {
				got, err := Overfitting(tt.returns, tt.blocks, jobs)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("PBO %v over %d splits, ranks %v; before: %v over %d splits, ranks %v",
						got.Probability, got.Splits, got.Ranks, want.Probability, want.Splits, want.Ranks)
				}
			})
		}
	}
}

// TestSharpes: each trial's Sharpe ratio, as Sharpe computes it, whatever the goroutines.
func TestSharpes(t *testing.T) {
	t.Parallel()
	trials := noise(5, 37, 250, 3)
	for _, jobs := range []int{1, 4, 50} {
		got := Sharpes(trials, jobs)
		for i, r := range trials {
			if got[i] != Sharpe(r) {
				t.Fatalf("jobs %d, trial %d: %v, want %v", jobs, i, got[i], Sharpe(r))
			}
		}
	}
}

// BenchmarkOverfittingPrevious is BenchmarkOverfitting's study by the previous computation:
// the baseline, measured in the same run.
func BenchmarkOverfittingPrevious(b *testing.B) {
	trials := noise(1, 1000, 2500, -1)
	for b.Loop() {
		previousOverfitting(trials, 16)
	}
}
