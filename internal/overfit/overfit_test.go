package overfit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestDeflatedSharpePaperExample is the worked example of Bailey & López de Prado (2014),
// section 5: an annualised Sharpe ratio of 2.5 over 1,250 daily returns with skewness −3
// and kurtosis 10, the best of 100 trials whose annualised Sharpe ratios vary with
// variance 0.5, has a DSR of 0.9004.
func TestDeflatedSharpePaperExample(t *testing.T) {
	t.Parallel()
	const year = 250
	sr0 := ExpectedMaxSharpe(0.5/year, 100)
	if got := sr0 * math.Sqrt(year); math.Abs(got-1.7894) > 5e-4 { // the paper's E[max SR], annualised
		t.Errorf("SR0 = %.4f annualised, want 1.7894", got)
	}
	if got := deflated(2.5/math.Sqrt(year), sr0, 1250, -3, 10); math.Abs(got-0.9004) > 5e-4 {
		t.Errorf("DSR = %.4f, want 0.9004", got)
	}
}

// noise is n trials of t returns, normal with mean 0 and sd 1%; edge, when >= 0, gets a
// true mean of 0.2% per period.
func noise(seed uint64, n, t, edge int) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, t)
		for k := range out[i] {
			out[i][k] = 0.01 * r.NormFloat64()
			if i == edge {
				out[i][k] += 0.002
			}
		}
	}
	return out
}

// bestOf is the trial with the highest Sharpe ratio and every trial's Sharpe ratio,
// computed plainly.
func bestOf(trials [][]float64) (int, []float64) {
	srs := make([]float64, len(trials))
	best := 0
	for i, r := range trials {
		srs[i] = plainSharpe(r)
		if srs[i] > srs[best] {
			best = i
		}
	}
	return best, srs
}

func plainSharpe(r []float64) float64 {
	var m float64
	for _, v := range r {
		m += v
	}
	m /= float64(len(r))
	var v float64
	for _, x := range r {
		v += (x - m) * (x - m)
	}
	return m / math.Sqrt(v/float64(len(r)))
}

func TestDeflatedSharpe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		edge     int
		min, max float64
	}{
		{"pure noise: the best of 200 is luck", -1, 0, 0.9},
		{"one real edge", 3, 0.99, 1},
	} {
		trials := noise(1, 200, 1000, tt.edge)
		best, srs := bestOf(trials)
		d, err := DeflatedSharpe(trials[best], srs)
		if err != nil {
			t.Fatal(err)
		}
		if d.Probability < tt.min || d.Probability > tt.max {
			t.Errorf("%s: DSR %.4f (SR %.4f, SR0 %.4f), want %.2f to %.2f", tt.name, d.Probability, d.Sharpe, d.Expected, tt.min, tt.max)
		}
		if d.Trials != 200 || d.Periods != 1000 || math.Abs(d.Sharpe-srs[best]) > 1e-12 || math.Abs(d.Kurtosis-3) > 0.5 {
			t.Errorf("%s: %+v", tt.name, d)
		}
	}
	if _, err := DeflatedSharpe([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("2 returns: no error")
	}
}

// naivePBO computes the PBO the long way, from the definition: for every split of the
// blocks into two halves, the in-sample and out-of-sample Sharpe ratios of every trial
// from its returns, the out-of-sample relative rank of the in-sample best, its logit.
func naivePBO(returns [][]float64, blocks int) (float64, []float64) {
	t := len(returns[0])
	size := t / blocks
	skip := t - size*blocks
	var logits []float64
	below := 0
	var rec func(start int, chosen []int)
	rec = func(start int, chosen []int) {
		if len(chosen) == blocks/2 {
			isSet := map[int]bool{}
			for _, b := range chosen {
				isSet[b] = true
			}
			var isSR, oosSR []float64
			for _, r := range returns {
				var in, out []float64
				for b := range blocks {
					part := r[skip+b*size : skip+(b+1)*size]
					if isSet[b] {
						in = append(in, part...)
					} else {
						out = append(out, part...)
					}
				}
				isSR = append(isSR, plainSharpe(in))
				oosSR = append(oosSR, plainSharpe(out))
			}
			best := 0
			for j := range isSR {
				if isSR[j] > isSR[best] {
					best = j
				}
			}
			rank := 1.0
			for j := range oosSR {
				if oosSR[j] < oosSR[best] {
					rank++
				}
			}
			w := rank / float64(len(returns)+1)
			l := math.Log(w / (1 - w))
			logits = append(logits, l)
			if l <= 0 {
				below++
			}
			return
		}
		for b := start; b < blocks; b++ {
			rec(b+1, append(chosen, b))
		}
	}
	rec(0, nil)
	return float64(below) / float64(len(logits)), logits
}

func TestOverfitting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		n, t     int
		blocks   int
		edge     int
		min, max float64
	}{
		// One noise study's PBO varies a lot from sample to sample (its splits share blocks,
		// and a half's luck is the other half's bad luck): these two are checked against the
		// definition, and the level of noise on the mean of many studies below.
		{"pure noise", 12, 323, 16, -1, 0, 1}, // 323: the 3 earliest returns are dropped
		{"pure noise, 8 blocks", 30, 800, 8, -1, 0, 1},
		{"one real edge", 20, 640, 16, 5, 0, 0.05},
	} {
		trials := noise(uint64(tt.n*tt.t), tt.n, tt.t, tt.edge)
		got, err := Overfitting(trials, tt.blocks, 3)
		if err != nil {
			t.Fatal(err)
		}
		want, logits := naivePBO(trials, tt.blocks)
		if math.Abs(got.Probability-want) > 1e-12 || got.Splits != len(logits) {
			t.Errorf("%s: PBO %.4f over %d splits, the definition gives %.4f over %d", tt.name, got.Probability, got.Splits, want, len(logits))
		}
		if got.Probability < tt.min || got.Probability > tt.max {
			t.Errorf("%s: PBO %.4f, want %.2f to %.2f", tt.name, got.Probability, tt.min, tt.max)
		}
		ranks := 0
		for _, r := range got.Ranks {
			ranks += r
		}
		if ranks != got.Splits || got.Periods != tt.t/tt.blocks*tt.blocks {
			t.Errorf("%s: ranks count %d of %d splits; %d periods", tt.name, ranks, got.Splits, got.Periods)
		}
	}
	var mean float64
	const studies = 20
	for i := range studies {
		p, err := Overfitting(noise(uint64(100+i), 40, 1000, -1), 16, 2)
		if err != nil {
			t.Fatal(err)
		}
		mean += p.Probability / studies
	}
	if mean < 0.4 || mean > 0.6 {
		t.Errorf("pure noise: mean PBO of %d studies %.3f, want near 0.5", studies, mean)
	}
	for _, bad := range []struct {
		returns [][]float64
		blocks  int
	}{
		{noise(1, 1, 100, -1), 16},
		{noise(1, 3, 100, -1), 7},
		{noise(1, 3, 20, -1), 16},
		{[][]float64{make([]float64, 100), make([]float64, 99)}, 4},
	} {
		if _, err := Overfitting(bad.returns, bad.blocks, 2); err == nil {
			t.Errorf("%d trials of %d returns in %d blocks: no error", len(bad.returns), len(bad.returns[0]), bad.blocks)
		}
	}
}

// BenchmarkOverfitting is the PBO of a study of 1,000 trials of 2,500 returns, on one
// goroutine and on every core.
func BenchmarkOverfitting(b *testing.B) {
	trials := noise(1, 1000, 2500, -1)
	for _, jobs := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for b.Loop() {
				if _, err := Overfitting(trials, 16, jobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
