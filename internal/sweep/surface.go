package sweep

import "encoding/json"

// SpikeBelow is the plateau score under which a study's best combination is said to sit on
// a spike: its neighbours keep less than half of its objective, so a small change of one
// parameter loses most of what it found.
const SpikeBelow = 0.5

// Point is one combination that ran and its objective (nil: the run does not define it).
type Point struct {
	Params    map[string]any
	Objective *float64
}

// Slice is the objective against one parameter's values, the other parameters at the best
// combination's: Objective[i] is the combination with Values[i] (nil when it did not run or
// has no objective).
type Slice struct {
	Name      string     `json:"name"`
	Values    []any      `json:"values"`
	Objective []*float64 `json:"objective"`
	Best      int        `json:"best"` // the index of the best combination's value
}

// Surface is how a study's objective moves around its best combination. Plateau is the mean
// objective of the best's neighbours (the combinations one step away in one parameter, in
// the order of its values) over the best's own when maximising, and the best's over theirs
// when minimising, so that 1 is flat and less is a fall; nil without a neighbour that ran
// or when the two do not have the same sign (a ratio would mean nothing).
type Surface struct {
	Best       map[string]any `json:"best"`
	Objective  float64        `json:"objective"`
	Parameters []Slice        `json:"parameters"`
	Neighbours int            `json:"neighbours"`
	Plateau    *float64       `json:"plateau"`
	Spike      bool           `json:"spike"`
}

// SurfaceOf computes the surface of points over space around its best point (by obj's
// direction); nil when no point has an objective.
func SurfaceOf(space Space, points []Point, obj Objective) *Surface {
	var best *Point
	for i := range points {
		p := &points[i]
		if p.Objective != nil && (best == nil || obj.Better(*p.Objective, *best.Objective)) {
			best = p
		}
	}
	if best == nil {
		return nil
	}
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	index := make(map[string]*float64, len(points))
	comboKey := func(params map[string]any) string {
		b, _ := json.Marshal(params) // map keys are sorted
		return string(b)
	}
	for _, p := range points {
		index[comboKey(p.Params)] = p.Objective
	}
	at := func(name string, v any) (*float64, bool) {
		c := make(map[string]any, len(best.Params))
		for k, w := range best.Params {
			c[k] = w
		}
		c[name] = v
		o, ran := index[comboKey(c)]
		return o, ran
	}
	s := &Surface{Best: best.Params, Objective: *best.Objective}
	var sum float64
	for _, name := range space.Names() {
		vals := space[name]
		sl := Slice{Name: name, Values: vals, Objective: make([]*float64, len(vals)), Best: -1}
		bk := key(best.Params[name])
		for i, v := range vals {
			if key(v) == bk {
				sl.Best = i
			}
			sl.Objective[i], _ = at(name, v)
		}
		for _, j := range []int{sl.Best - 1, sl.Best + 1} {
			if sl.Best < 0 || j < 0 || j >= len(vals) || sl.Objective[j] == nil {
				continue
			}
			sum += *sl.Objective[j]
			s.Neighbours++
		}
		s.Parameters = append(s.Parameters, sl)
	}
	if s.Neighbours == 0 {
		return s
	}
	mean := sum / float64(s.Neighbours)
	num, den := mean, s.Objective
	if obj.Minimize {
		num, den = den, num
	}
	if den == 0 || (num < 0) != (den < 0) {
		return s
	}
	plateau := num / den
	s.Plateau = &plateau
	s.Spike = plateau < SpikeBelow
	return s
}
