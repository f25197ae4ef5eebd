// Package tpe proposes the next points to try in a discrete search space with a
// tree-structured Parzen estimator (Bergstra, Bardenet, Bengio & Kégl, "Algorithms for
// Hyper-Parameter Optimization", 2011), in the multivariate form Optuna uses (Falkner,
// Klein & Hutter, "BOHB", 2018): the points tried so far are split into the best few and
// the rest, each group becomes a mixture of one kernel per point, and of many candidates
// drawn from the good mixture the one most likely under it relative to the other is
// proposed. Pure Go, no I/O; the same seed and history give the same proposals.
package tpe

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Dim is one dimension of the space: N values, by index 0..N-1. An ordered dimension's
// neighbouring indexes are neighbouring values (a range of numbers), so its kernels are
// Gaussians over the indexes; a categorical one's values have no order.
type Dim struct {
	N           int
	Categorical bool
}

// Observation is a point tried and what it scored: lower Value is better. A point
// without a value (its run failed, or did not define the objective) counts among the worst.
type Observation struct {
	X     []int
	Value float64
	OK    bool
}

// Options tune the estimator; the zero value takes the defaults below.
type Options struct {
	Startup    int     // points drawn uniformly before the model is used (default 10)
	Candidates int     // candidates drawn from the good mixture per proposal (default 24)
	Gamma      float64 // share of the points that are good: ceil(Gamma·n), at most MaxGood (default 0.1)
	MaxGood    int     // default 25
}

func (o Options) withDefaults() Options {
	if o.Startup <= 0 {
		o.Startup = 10
	}
	if o.Candidates <= 0 {
		o.Candidates = 24
	}
	if o.Gamma <= 0 {
		o.Gamma = 0.1
	}
	if o.MaxGood <= 0 {
		o.MaxGood = 25
	}
	return o
}

// Sampler proposes points of a space.
type Sampler struct {
	dims []Dim
	opt  Options
}

// New is a sampler over dims.
func New(dims []Dim, opt Options) *Sampler {
	return &Sampler{dims: slices.Clone(dims), opt: opt.withDefaults()}
}

// Size is the number of points of the space, or math.MaxInt when it is larger.
func (s *Sampler) Size() int {
	n := 1
	for _, d := range s.dims {
		if d.N <= 0 {
			return 0
		}
		if n > math.MaxInt/d.N {
			return math.MaxInt
		}
		n *= d.N
	}
	return n
}

// Candidates are the points to choose one proposal from, best first: the candidates
// drawn from the model (or uniformly while there are fewer observations than
// Options.Startup), ordered by how much more likely they are among the good points than
// among the others. The caller takes the first one it can use (not tried before, allowed
// by its constraint). rng gives the draws.
func (s *Sampler) Candidates(hist []Observation, rng *rand.Rand) [][]int {
	if len(hist) < s.opt.Startup {
		out := make([][]int, s.opt.Candidates)
		for i := range out {
			out[i] = s.uniform(rng)
		}
		return out
	}
	good, bad := s.split(hist)
	l, g := s.mixture(good), s.mixture(bad)
	type scored struct {
		x     []int
		score float64
	}
	cands := make([]scored, s.opt.Candidates)
	for i := range cands {
		x := l.sample(rng)
		cands[i] = scored{x, l.logDensity(x) - g.logDensity(x)}
	}
	// Stable: equal scores keep the order they were drawn in, so the result depends on the
	// seed only.
	slices.SortStableFunc(cands, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([][]int, len(cands))
	for i, c := range cands {
		out[i] = c.x
	}
	return out
}

// Uniform is a point drawn uniformly, for when no candidate can be used.
func (s *Sampler) Uniform(rng *rand.Rand) []int { return s.uniform(rng) }

func (s *Sampler) uniform(rng *rand.Rand) []int {
	x := make([]int, len(s.dims))
	for d, dim := range s.dims {
		x[d] = rng.IntN(dim.N)
	}
	return x
}

// split is the good points (the best ceil(Gamma·n), at most MaxGood, and at least one)
// and the rest. Points without a value are never good; equal values keep history order.
func (s *Sampler) split(hist []Observation) (good, bad [][]int) {
	order := make([]int, len(hist))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ha, hb := hist[a], hist[b]
		switch {
		case ha.OK != hb.OK:
			if ha.OK {
				return -1
			}
			return 1
		case !ha.OK || ha.Value == hb.Value:
			return 0
		case ha.Value < hb.Value:
			return -1
		}
		return 1
	})
	n := min(max(int(math.Ceil(s.opt.Gamma*float64(len(hist)))), 1), s.opt.MaxGood)
	for i, k := range order {
		if i < n && hist[k].OK {
			good = append(good, hist[k].X)
		} else {
			bad = append(bad, hist[k].X)
		}
	}
	return good, bad
}

// mixture is an equally weighted mixture of one kernel per point and a wide prior (the
// whole space, weight one), as Optuna's multivariate TPE builds it.
type mixture struct {
	dims   []Dim
	points [][]int     // the kernels' centres; the prior is index len(points)
	sigma  []float64   // per ordered dimension, the kernels' bandwidth
	cat    []float64   // per categorical dimension: the weight of the kernel's own value
	mass   [][]float64 // per ordered dimension and kernel: its normal's mass on the range
}

func (s *Sampler) mixture(points [][]int) *mixture {
	m := &mixture{dims: s.dims, points: points, sigma: make([]float64, len(s.dims)), cat: make([]float64, len(s.dims))}
	n := float64(len(points) + 1)
	for d, dim := range s.dims {
		if dim.Categorical {
			// The kernel keeps its point's value with weight 1-a, a spread evenly.
			m.cat[d] = 1 - 1/(1+float64(len(points)))
			continue
		}
		span := float64(dim.N - 1)
		// Scott's rule, as Optuna's multivariate estimator: narrower with more points and
		// fewer dimensions, never below one step or a hundredth of the range.
		sig := 0.2 * math.Pow(n, -1/(float64(len(s.dims))+4)) * span
		m.sigma[d] = max(sig, span/min(100, 1+n), 0.5)
	}
	m.mass = make([][]float64, len(s.dims))
	for d, dim := range s.dims {
		if dim.Categorical {
			continue
		}
		m.mass[d] = make([]float64, len(points)+1)
		for k := range m.mass[d] {
			m.mass[d][k] = m.cdf(k, d, float64(dim.N)-0.5) - m.cdf(k, d, -0.5)
		}
	}
	return m
}

// centre is kernel k's centre in dimension d; the prior's is the middle of the range.
func (m *mixture) centre(k, d int) float64 {
	if k == len(m.points) {
		return float64(m.dims[d].N-1) / 2
	}
	return float64(m.points[k][d])
}

// width is kernel k's bandwidth in ordered dimension d; the prior's is the whole range.
func (m *mixture) width(k, d int) float64 {
	if k == len(m.points) {
		return max(float64(m.dims[d].N-1), 0.5)
	}
	return m.sigma[d]
}

// prob is kernel k's probability of value i in dimension d: for an ordered dimension the
// normal distribution's mass over [i-½, i+½], over its mass on the whole range.
func (m *mixture) prob(k, d, i int) float64 {
	dim := m.dims[d]
	if dim.Categorical {
		if k == len(m.points) {
			return 1 / float64(dim.N)
		}
		keep := m.cat[d]
		p := (1 - keep) / float64(dim.N)
		if m.points[k][d] == i {
			p += keep
		}
		return p
	}
	total := m.mass[d][k]
	p := m.cdf(k, d, float64(i)+0.5) - m.cdf(k, d, float64(i)-0.5)
	if total <= 0 || p <= 0 {
		return 1e-300
	}
	return p / total
}

// cdf is kernel k's normal distribution function at x in ordered dimension d.
func (m *mixture) cdf(k, d int, x float64) float64 {
	return 0.5 * math.Erfc(-(x-m.centre(k, d))/(m.width(k, d)*math.Sqrt2))
}

// logDensity is the mixture's log probability of x.
func (m *mixture) logDensity(x []int) float64 {
	// log Σ_k exp(Σ_d log p_kd), kept finite with the largest term factored out.
	terms := make([]float64, len(m.points)+1)
	hi := math.Inf(-1)
	for k := range terms {
		lp := 0.0
		for d := range m.dims {
			lp += math.Log(m.prob(k, d, x[d]))
		}
		terms[k] = lp
		hi = max(hi, lp)
	}
	sum := 0.0
	for _, t := range terms {
		sum += math.Exp(t - hi)
	}
	return hi + math.Log(sum/float64(len(terms)))
}

// sample draws a point: a kernel chosen uniformly (the prior among them), then each
// dimension from it.
func (m *mixture) sample(rng *rand.Rand) []int {
	k := rng.IntN(len(m.points) + 1)
	x := make([]int, len(m.dims))
	for d, dim := range m.dims {
		if dim.Categorical {
			if k < len(m.points) && rng.Float64() < m.cat[d] {
				x[d] = m.points[k][d]
			} else {
				x[d] = rng.IntN(dim.N)
			}
			continue
		}
		mu, sig := m.centre(k, d), m.width(k, d)
		// The truncated normal by rejection: the kernels sit inside the range, so few draws
		// fall outside; after many, the nearest edge.
		v := -1
		for range 64 {
			r := int(math.Round(mu + sig*rng.NormFloat64()))
			if r >= 0 && r < dim.N {
				v = r
				break
			}
		}
		if v < 0 {
			v = min(max(int(math.Round(mu)), 0), dim.N-1)
		}
		x[d] = v
	}
	return x
}
