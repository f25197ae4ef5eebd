package tpe

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// peaks is a synthetic objective over a 100 × 71 grid (the size of a moving-average study):
// a hill peaking at about 1 near (22, 34), a lower one of 0.6 elsewhere, and a ripple that
// makes many small local peaks. Lower is better, as the sampler minimises.
func peaks(x []int) float64 {
	a, b := float64(x[0]), float64(x[1])
	v := math.Exp(-((a-22)*(a-22)/300 + (b-34)*(b-34)/120)) +
		0.6*math.Exp(-((a-75)*(a-75)/150+(b-10)*(b-10)/60)) +
		0.04*math.Sin(a/2)*math.Cos(b/3)
	return -v
}

// search runs budget trials proposed by s (one at a time, each the best untried
// candidate) and returns the best value found.
func search(s *Sampler, seed uint64, budget int, f func([]int) float64) float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	var hist []Observation
	tried := map[[2]int]bool{}
	best := math.Inf(1)
	for len(hist) < budget {
		var x []int
		for _, c := range s.Candidates(hist, rng) {
			if !tried[[2]int{c[0], c[1]}] {
				x = c
				break
			}
		}
		for x == nil || tried[[2]int{x[0], x[1]}] {
			x = s.Uniform(rng)
		}
		tried[[2]int{x[0], x[1]}] = true
		v := f(x)
		best = min(best, v)
		hist = append(hist, Observation{X: x, Value: v, OK: true})
	}
	return best
}

func TestBeatsUniformDraws(t *testing.T) {
	t.Parallel()
	dims := []Dim{{N: 100}, {N: 71}}
	const budget = 120
	top := 0.0 // the best of the whole grid
	for a := range 100 {
		for b := range 71 {
			top = max(top, -peaks([]int{a, b}))
		}
	}
	var bayes, random []float64
	for seed := uint64(1); seed <= 5; seed++ {
		bayes = append(bayes, -search(New(dims, Options{}), seed, budget, peaks)/top)
		// Uniform search is the same loop with a model that never leaves its start-up.
		random = append(random, -search(New(dims, Options{Startup: budget + 1}), seed, budget, peaks)/top)
	}
	slices.Sort(bayes)
	slices.Sort(random)
	t.Logf("best of %d trials over the grid's best, seeds 1-5 sorted: tpe %.3f, uniform %.3f", budget, bayes, random)
	if bayes[2] < 0.95 {
		t.Errorf("median best with the estimator %.3f of the grid's best, want at least 0.95", bayes[2])
	}
	if bayes[2] <= random[2] {
		t.Errorf("median best with the estimator %.3f is no better than uniform draws' %.3f", bayes[2], random[2])
	}
}

func TestSameSeedSameCandidates(t *testing.T) {
	t.Parallel()
	dims := []Dim{{N: 30}, {N: 4, Categorical: true}, {N: 1}}
	hist := make([]Observation, 25)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range hist {
		x := []int{r.IntN(30), r.IntN(4), 0}
		hist[i] = Observation{X: x, Value: float64((x[0]-7)*(x[0]-7) + x[1]), OK: i%5 != 0}
	}
	s := New(dims, Options{})
	a := s.Candidates(hist, rand.New(rand.NewPCG(3, 0)))
	b := s.Candidates(hist, rand.New(rand.NewPCG(3, 0)))
	if !slices.EqualFunc(a, b, slices.Equal[[]int]) {
		t.Fatalf("same seed and history, different candidates:\n%v\n%v", a, b)
	}
	for _, x := range a {
		if x[0] < 0 || x[0] >= 30 || x[1] < 0 || x[1] >= 4 || x[2] != 0 {
			t.Fatalf("candidate %v outside the space", x)
		}
	}
}

func TestSplitKeepsFailuresBad(t *testing.T) {
	t.Parallel()
	s := New([]Dim{{N: 10}}, Options{Gamma: 0.5})
	hist := []Observation{{X: []int{1}, OK: false}, {X: []int{2}, Value: 3, OK: true}, {X: []int{3}, Value: 1, OK: true}, {X: []int{4}, Value: 2, OK: true}}
	good, bad := s.split(hist)
	if want := [][]int{{3}, {4}}; !slices.EqualFunc(good, want, slices.Equal[[]int]) {
		t.Errorf("good %v, want %v (the best half, failures never)", good, want)
	}
	if len(bad) != 2 || !slices.ContainsFunc(bad, func(x []int) bool { return x[0] == 1 }) {
		t.Errorf("bad %v, want the rest with the failure", bad)
	}
}

func TestDensityIsAProbability(t *testing.T) {
	t.Parallel()
	s := New([]Dim{{N: 12}, {N: 3, Categorical: true}}, Options{})
	m := s.mixture([][]int{{0, 1}, {11, 2}, {5, 0}})
	sum := 0.0
	for i := range 12 {
		for j := range 3 {
			sum += math.Exp(m.logDensity([]int{i, j}))
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("the mixture's probabilities sum to %v, want 1", sum)
	}
}
