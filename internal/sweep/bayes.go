package sweep

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/tpe"
)

// A model-based (bayes) search runs in rounds: BayesStartup combinations drawn uniformly,
// then rounds of BayesBatch proposed from every trial run before (internal/tpe). The
// rounds do not depend on how many runs go at once, so a seed gives the same trials on
// one core, on many, and in the service.
const (
	BayesStartup = 10
	BayesBatch   = 8
)

// BayesRound is how many combinations the round after done trials proposes, for a
// budget of samples (0 when the budget is spent).
func BayesRound(done, samples int) int {
	if done == 0 {
		return min(BayesStartup, samples)
	}
	return max(min(BayesBatch, samples-done), 0)
}

// Observed is a trial a model-based search learns from: its parameters (the varied ones
// at least) and its objective (nil: failed or undefined, which counts among the worst).
type Observed struct {
	Params map[string]any
	Value  *float64
}

// Bayes is a model-based search of a space: a tree-structured Parzen estimator over each
// parameter's values (ordered for numbers, unordered otherwise). Unlike a grid, the space
// may be larger than MaxCombinations: only the budget runs.
type Bayes struct {
	names    []string
	values   [][]any          // per parameter, its values in index order (numbers ascending)
	index    []map[string]int // per parameter, a value's key to its index
	sampler  *tpe.Sampler
	seed     uint64
	minimize bool
}

// Bayes is a model-based search of s for objective o, seeded with seed.
func (s Space) Bayes(o Objective, seed uint64) (*Bayes, error) {
	if err := s.check(0, false); err != nil {
		return nil, err
	}
	b := &Bayes{names: s.Names(), seed: seed, minimize: o.Minimize}
	dims := make([]tpe.Dim, len(b.names))
	for d, name := range b.names {
		vals := slices.Clone(s[name])
		numeric := !slices.ContainsFunc(vals, func(v any) bool { _, ok := toFloat(v); return !ok })
		if numeric {
			slices.SortStableFunc(vals, func(a, b any) int {
				fa, _ := toFloat(a)
				fb, _ := toFloat(b)
				switch {
				case fa < fb:
					return -1
				case fa > fb:
					return 1
				}
				return 0
			})
		}
		idx := make(map[string]int, len(vals))
		for i, v := range vals {
			if _, dup := idx[valueKey(v)]; dup {
				return nil, fmt.Errorf("%s: the value %v is given twice", name, v)
			}
			idx[valueKey(v)] = i
		}
		b.values = append(b.values, vals)
		b.index = append(b.index, idx)
		dims[d] = tpe.Dim{N: len(vals), Categorical: !numeric}
	}
	b.sampler = tpe.New(dims, tpe.Options{Startup: BayesStartup})
	return b, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// valueKey identifies a parameter value whatever Go type it was decoded as (10 and 10.0
// are one value).
func valueKey(v any) string {
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func pointKey(x []int) string {
	var sb strings.Builder
	for _, v := range x {
		sb.WriteString(strconv.Itoa(v))
		sb.WriteByte(',')
	}
	return sb.String()
}

// point is the index vector of params, false when a value is not in the space.
func (b *Bayes) point(params map[string]any) ([]int, bool) {
	x := make([]int, len(b.names))
	for d, name := range b.names {
		i, ok := b.index[d][valueKey(params[name])]
		if !ok {
			return nil, false
		}
		x[d] = i
	}
	return x, true
}

func (b *Bayes) combo(x []int) map[string]any {
	c := make(map[string]any, len(b.names))
	for d, name := range b.names {
		c[name] = b.values[d][x[d]]
	}
	return c
}

// Next proposes up to n combinations of the varied parameters, none of them in hist (the
// trials so far, in the order they were proposed) and each one allowed (a constraint's
// verdicts on a list of combinations; nil allows all). The proposals depend only on the
// seed, hist and the verdicts. Fewer than n come back only when no other allowed
// combination could be found: the space is (nearly) used up.
func (b *Bayes) Next(hist []Observed, n int, allowed func([]map[string]any) ([]bool, error)) ([]map[string]any, error) {
	rng := rand.New(rand.NewPCG(b.seed, 0xba7e5^uint64(len(hist))))
	tried := make(map[string]bool, len(hist)+n)
	obs := make([]tpe.Observation, 0, len(hist))
	for _, h := range hist {
		x, ok := b.point(h.Params)
		if !ok {
			continue
		}
		tried[pointKey(x)] = true
		o := tpe.Observation{X: x, OK: h.Value != nil}
		if o.OK {
			if o.Value = *h.Value; !b.minimize {
				o.Value = -o.Value
			}
		}
		obs = append(obs, o)
	}
	verdict := map[string]bool{}
	// judge asks for the verdicts of the points not judged yet, in one call.
	judge := func(xs [][]int) error {
		var ask [][]int
		seen := map[string]bool{}
		for _, x := range xs {
			k := pointKey(x)
			if _, known := verdict[k]; !known && !tried[k] && !seen[k] {
				seen[k] = true
				ask = append(ask, x)
			}
		}
		if len(ask) == 0 {
			return nil
		}
		if allowed == nil {
			for _, x := range ask {
				verdict[pointKey(x)] = true
			}
			return nil
		}
		combos := make([]map[string]any, len(ask))
		for i, x := range ask {
			combos[i] = b.combo(x)
		}
		ok, err := allowed(combos)
		if err != nil {
			return err
		}
		for i, x := range ask {
			verdict[pointKey(x)] = ok[i]
		}
		return nil
	}
	var out []map[string]any
	take := func(x []int) bool {
		k := pointKey(x)
		if tried[k] || !verdict[k] {
			return false
		}
		tried[k] = true
		out = append(out, b.combo(x))
		return true
	}
	n = min(n, b.sampler.Size()-len(tried))
	// Each proposal is the best candidate of its own draw that can be used; a proposal
	// whose candidates were all tried or not allowed draws again, a few times.
	for pass := 0; len(out) < n && pass < 8; pass++ {
		groups := make([][][]int, n-len(out))
		var all [][]int
		for j := range groups {
			groups[j] = b.sampler.Candidates(obs, rng)
			if pass > 0 { // widen the search: some uniform candidates too
				for range 8 {
					groups[j] = append(groups[j], b.sampler.Uniform(rng))
				}
			}
			all = append(all, groups[j]...)
		}
		if err := judge(all); err != nil {
			return nil, err
		}
		for _, g := range groups {
			for _, x := range g {
				if take(x) {
					break
				}
			}
		}
	}
	if len(out) < n {
		// The space is nearly used up, or the constraint allows little of it: go through
		// the untried combinations in a random order.
		if err := b.scan(rng, tried, n-len(out), judge, take); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxScan bounds the combinations Next goes through one by one when its draws find too
// few: a space larger than this is searched by uniform draws instead.
const maxScan = 1_000_000

// scan takes up to want untried, allowed combinations: in a random order of the whole
// space when it is small enough, else by uniform draws.
func (b *Bayes) scan(rng *rand.Rand, tried map[string]bool, want int, judge func([][]int) error, take func([]int) bool) error {
	size := b.sampler.Size()
	next := func() []int { return b.sampler.Uniform(rng) }
	limit := 64 * want
	if size <= maxScan {
		perm := rng.Perm(size)
		pos := 0
		next = func() []int {
			i := perm[pos]
			pos++
			x := make([]int, len(b.values))
			for d := len(b.values) - 1; d >= 0; d-- {
				x[d] = i % len(b.values[d])
				i /= len(b.values[d])
			}
			return x
		}
		limit = size
	}
	for got, seen := 0, 0; got < want && seen < limit; {
		var chunk [][]int
		for len(chunk) < 1000 && seen < limit {
			x := next()
			seen++
			if !tried[pointKey(x)] {
				chunk = append(chunk, x)
			}
		}
		if err := judge(chunk); err != nil {
			return err
		}
		for _, x := range chunk {
			if got < want && take(x) {
				got++
			}
		}
	}
	return nil
}
