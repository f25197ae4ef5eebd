// Package sweep plans a parameter study: the values each parameter takes (a list, or a
// start:stop:step range), the combinations a grid or a seeded random sample takes from
// them, the objective its runs are ranked by, and the per-bar returns the overfitting
// statistics are computed from.
package sweep

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// MaxCombinations is the most runs one study makes.
const MaxCombinations = 10000

// maxValues bounds one parameter's values, so a range such as 0:1e9:1 is refused before
// it is expanded.
const maxValues = MaxCombinations

// Space is the values each parameter takes, by name.
type Space map[string][]any

// ParseParam reads a command-line parameter: name=start:stop:step (stop included, e.g.
// fast=5:50:5) or name=v1,v2,… (numbers, true/false or text).
func ParseParam(s string) (string, []any, error) {
	name, spec, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(spec) == "" {
		return "", nil, fmt.Errorf("want name=start:stop:step or name=v1,v2,..., got %q", apperr.Quote(s))
	}
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		var f [3]float64
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return "", nil, fmt.Errorf("%s: %q is not a number", apperr.Quote(name), apperr.Quote(p))
			}
			f[i] = v
		}
		vals, err := Range(f[0], f[1], f[2])
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", name, err)
		}
		return name, vals, nil
	}
	var vals []any
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if v, err := strconv.ParseFloat(p, 64); err == nil {
			vals = append(vals, number(v))
		} else if b, err := strconv.ParseBool(p); err == nil {
			vals = append(vals, b)
		} else {
			vals = append(vals, p)
		}
	}
	return name, vals, nil
}

// Range is start, start+step, … up to stop included (within a rounding error), as
// integers when start and step are whole numbers.
func Range(start, stop, step float64) ([]any, error) {
	for _, v := range []float64{start, stop, step} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("a range needs finite numbers")
		}
	}
	if step <= 0 {
		return nil, fmt.Errorf("a range's step must be positive, got %v", step)
	}
	if stop < start {
		return nil, fmt.Errorf("a range's stop (%v) is below its start (%v)", stop, start)
	}
	n := math.Floor((stop-start)/step+1e-9) + 1
	if n > maxValues {
		return nil, fmt.Errorf("the range %v:%v:%v has %.0f values, more than %d", start, stop, step, n, maxValues)
	}
	vals := make([]any, int(n))
	for i := range vals {
		// Each value from start, not by adding steps, so errors do not accumulate.
		vals[i] = number(math.Round((start+float64(i)*step)*1e12) / 1e12)
	}
	return vals, nil
}

// number is v as an int when it is a whole number JSON carries exactly.
func number(v float64) any {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return int(v)
	}
	return v
}

// Names are the space's parameters in order.
func (s Space) Names() []string {
	names := make([]string, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Size is the number of combinations of the whole grid.
func (s Space) Size() int {
	n := 1
	for _, vals := range s {
		if n *= len(vals); n > MaxCombinations*1000 || len(vals) == 0 {
			return n
		}
	}
	return n
}

// Grid is every combination, the last parameter by name varying fastest.
func (s Space) Grid() ([]map[string]any, error) {
	if err := s.check(s.Size(), true); err != nil {
		return nil, err
	}
	return s.pick(nil), nil
}

// Random is samples distinct combinations of the grid chosen with seed (the same seed, the
// same sample), in grid order; the whole grid when it has no more.
func (s Space) Random(samples int, seed uint64) ([]map[string]any, error) {
	if samples < 1 {
		return nil, fmt.Errorf("samples must be at least 1")
	}
	if err := s.check(samples, false); err != nil {
		return nil, err
	}
	total := s.Size()
	if samples >= total {
		return s.pick(nil), nil
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	if total > MaxCombinations*1000 {
		return s.randomLarge(samples, r), nil
	}
	chosen := make(map[int]bool, samples)
	for len(chosen) < samples {
		chosen[r.IntN(total)] = true
	}
	idx := make([]int, 0, samples)
	for i := range chosen {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return s.pick(idx), nil
}

// randomLarge is samples distinct combinations of a space too large to number (Size
// stops counting), each parameter's value drawn on its own, in the order drawn.
func (s Space) randomLarge(samples int, r *rand.Rand) []map[string]any {
	names := s.Names()
	seen := make(map[string]bool, samples)
	var out []map[string]any
	for len(out) < samples {
		c := make(map[string]any, len(names))
		var key strings.Builder
		for _, n := range names {
			i := r.IntN(len(s[n]))
			c[n] = s[n][i]
			fmt.Fprintf(&key, "%d,", i)
		}
		if !seen[key.String()] {
			seen[key.String()] = true
			out = append(out, c)
		}
	}
	return out
}

// total is the exact number of combinations of the whole grid, however large (Size stops
// counting past MaxCombinations*1000): what a refusal of a grid says.
func (s Space) total() *big.Int {
	n := big.NewInt(1)
	for _, vals := range s {
		n.Mul(n, big.NewInt(int64(len(vals))))
	}
	return n
}

// check refuses an empty space and more than MaxCombinations runs: n of them, or the whole
// grid when grid is set (its exact size, not Size's).
func (s Space) check(n int, grid bool) error {
	if len(s) == 0 {
		return fmt.Errorf("give at least one parameter to vary")
	}
	for name, vals := range s {
		if len(vals) == 0 {
			return fmt.Errorf("%s has no values", name)
		}
	}
	if n > MaxCombinations {
		count := strconv.Itoa(n)
		if grid {
			count = s.total().String()
		}
		return fmt.Errorf("%s combinations, more than the %d a study may run: use fewer values, a constraint, or a random or bayes sample", count, MaxCombinations)
	}
	return nil
}

// pick is the combinations at the grid indexes idx (nil: all).
func (s Space) pick(idx []int) []map[string]any {
	names := s.Names()
	at := func(i int) map[string]any {
		c := make(map[string]any, len(names))
		for k := len(names) - 1; k >= 0; k-- {
			vals := s[names[k]]
			c[names[k]] = vals[i%len(vals)]
			i /= len(vals)
		}
		return c
	}
	if idx == nil {
		out := make([]map[string]any, s.Size())
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	out := make([]map[string]any, len(idx))
	for j, i := range idx {
		out[j] = at(i)
	}
	return out
}

// Objective is what a study ranks its runs by: a summary field (sharpe_ratio,
// total_return, …) or a statistic's key, to be maximised or minimised.
type Objective struct {
	Metric   string
	Minimize bool
}

// Value is the run's objective; false when the run does not define it (no trades for a
// profit factor, say), and such a run ranks last.
func (o Objective) Value(sum engine.Summary, stats *engine.Statistics) (float64, bool) {
	if f, ok := summaryFields[o.Metric]; ok && summaryEncodes(sum) {
		v := reflect.ValueOf(sum).FieldByIndex(f.index)
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return 0, false // JSON's null
			}
			x := v.Elem().Float()
			return x, !math.IsNaN(x) && !math.IsInf(x, 0)
		case reflect.Float64:
			x := v.Float()
			return x, !math.IsNaN(x) && !math.IsInf(x, 0)
		case reflect.Int:
			return float64(v.Int()), true
		}
		return 0, false
	}
	if stats != nil {
		if m := stats.Get(o.Metric); m != nil && m.Value != nil {
			return *m.Value, !math.IsNaN(*m.Value) && !math.IsInf(*m.Value, 0)
		}
	}
	return 0, false
}

// summaryFields are the summary's fields by their JSON names. Value reads the field
// itself: it read it from the summary encoded as JSON and decoded again, the same number
// (JSON carries a float64 exactly, and these ints are far below 2⁵³) at the cost of about
// 40 allocations a run.
var summaryFields = func() map[string]struct{ index []int } {
	out := map[string]struct{ index []int }{}
	t := reflect.TypeFor[engine.Summary]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && f.IsExported() {
			out[name] = struct{ index []int }{f.Index}
		}
	}
	return out
}()

// summaryEncodes says whether JSON can encode sum: not when a number is NaN or infinite,
// and then, as when Value went through JSON, the summary names no objective.
func summaryEncodes(sum engine.Summary) bool {
	v := reflect.ValueOf(sum)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			return false
		}
	}
	return true
}

// Known says whether metric names a summary field or one of stats' keys.
func Known(metric string, stats *engine.Statistics) bool {
	if _, ok := summaryFields[metric]; ok {
		return true
	}
	return stats != nil && stats.Get(metric) != nil
}

// Better says whether objective value a ranks above b.
func (o Objective) Better(a, b float64) bool {
	if o.Minimize {
		return a < b
	}
	return a > b
}

// Returns are a run's per-bar returns (value over previous value less one), the series
// the overfitting statistics compare runs by.
func Returns(eq []engine.EquityPoint) []float64 {
	if len(eq) < 2 {
		return nil
	}
	out := make([]float64, len(eq)-1)
	for i := range out {
		out[i] = eq[i+1].Return
	}
	return out
}

// Complete gives every combination the shared values of fixed (a combination's own values
// win) and checks it with the strategy's parameter rules, keeping the checked values. On a
// failure it returns the index of the combination that failed.
func Complete(combos []map[string]any, fixed map[string]any, info *jsrt.StrategyInfo) (int, error) {
	for i, c := range combos {
		merged := make(map[string]any, len(fixed)+len(c))
		maps.Copy(merged, fixed)
		maps.Copy(merged, c)
		checked, err := jsrt.ValidateParams(info, merged)
		if err != nil {
			return i, err
		}
		combos[i] = checked
	}
	return 0, nil
}

// Keep returns the combinations keep marks true (a constraint's verdicts), in order, in
// combos' own storage.
func Keep(combos []map[string]any, keep []bool) []map[string]any {
	kept := combos[:0]
	for i, c := range combos {
		if keep[i] {
			kept = append(kept, c)
		}
	}
	return kept
}
