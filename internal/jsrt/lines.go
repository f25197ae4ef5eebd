package jsrt

import (
	"math"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// line is a series seen from the current bar: index 0 is the current bar,
// -1 the one before. It backs a goja DynamicArray, so reads cost one Go
// call and no property lookup.
type line struct {
	rt    *goja.Runtime
	s     engine.Series
	feed  int
	cur   *int
	vals  []float64
	small [3]goja.Value // -1, 0, 1
	date  bool          // values are Unix milliseconds shown as Date
	key   string        // names the series in a Memo ("" when it is not memoised)
	// rp, for a line of a replayed feed, maps bars to coarser bars: vals holds the value at
	// each bar of the feed, [0] is the current one and [-n] the value n coarser bars back,
	// as it stood at that bar's end. vfirst is the first coarser bar with a value.
	rp     *engine.Replayed
	vfirst int
}

func newLine(rt *goja.Runtime, s engine.Series, feed int, cur *int) *line {
	l := &line{rt: rt, s: s, feed: feed, cur: cur, vals: s.Vals}
	l.small = [3]goja.Value{rt.ToValue(-1), rt.ToValue(0), rt.ToValue(1)}
	return l
}

func (l *line) Len() int {
	if l.rp != nil && *l.cur >= 0 {
		return l.rp.Index[*l.cur] + 1
	}
	return *l.cur + 1
}

func (l *line) Get(idx int) goja.Value {
	i := *l.cur + idx
	if l.rp != nil && idx < 0 && *l.cur >= 0 {
		i = replayAgo(l.rp, *l.cur, idx)
	}
	if idx > 0 || i < 0 || i >= len(l.vals) {
		return goja.NaN()
	}
	v := l.vals[i]
	if l.date {
		d, _ := l.rt.New(l.rt.Get("Date"), l.rt.ToValue(v))
		return d
	}
	switch v {
	case 0:
		return l.small[1]
	case 1:
		return l.small[2]
	case -1:
		return l.small[0]
	}
	if math.IsNaN(v) {
		return goja.NaN()
	}
	return l.rt.ToValue(v)
}

func (l *line) Set(int, goja.Value) bool { return false }
func (l *line) SetLen(int) bool          { return false }
