package jsrt

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// replayState is a replayed feed of the run and the lines read from it.
type replayState struct {
	feed  int
	r     *engine.Replayed
	lines []*line // every line of the replayed feed: data columns and indicators
}

// replayed returns feeds with those the strategy class names in its static replay
// (backtrader's cerebro.replaydata) replayed: an object {timeframe: 'weeks' | 'months' |
// 'years', compression: 1, data: 0} or an array of them, one per feed replayed (each its
// own timeframe); the other feeds are added as they are. A replayed feed's bars stay the
// steps and the broker fills against them, while the strategy sees the coarser bar being
// rebuilt.
func (h *host) replayed(cls *goja.Object, feeds []engine.Feed) ([]engine.Feed, error) {
	h.replays = make([]*replayState, len(feeds))
	specs, err := staticList(cls, "replay", "an object {timeframe, compression, data}")
	if err != nil {
		return nil, err
	}
	if specs == nil {
		for k, f := range feeds { // replayed by a filter (BarReplayer_Open)
			if f.Replay != nil {
				h.replays[k] = &replayState{feed: k, r: f.Replay}
			}
		}
		return feeds, nil
	}
	if hasStatic(cls, "resample") {
		return nil, errors.New("static replay and static resample cannot be used together")
	}
	out := slices.Clone(feeds)
	for i, s := range specs {
		name := "replay"
		if _, several := cls.Get("replay").Export().([]any); several {
			name = fmt.Sprintf("replay[%d]", i)
		}
		m, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s must be an object {timeframe, compression, data}", name)
		}
		for k := range m {
			if k != "timeframe" && k != "compression" && k != "data" {
				return nil, fmt.Errorf("static %s has no key %q (timeframe, compression, data)", name, k)
			}
		}
		whole := func(key string, def int64) (int64, error) { return wholeKey(m, name, key, def) }
		data, err := whole("data", 0)
		if err != nil {
			return nil, err
		}
		if data < 0 || data >= int64(len(feeds)) {
			return nil, fmt.Errorf("%s.data must be the index of one of the run's %d feeds, got %d", name, len(feeds), data)
		}
		if h.replays[data] != nil {
			return nil, fmt.Errorf("%s: this.datas[%d] is replayed twice", name, data)
		}
		comp, err := whole("compression", 1)
		if err != nil {
			return nil, err
		}
		tf, _ := m["timeframe"].(string)
		f, err := engine.Replay(feeds[data], tf, int(comp))
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "replay: "))
		}
		out[data] = f
		h.replays[data] = &replayState{feed: int(data), r: f.Replay}
	}
	return out, nil
}

// replayAgo is the bar of a replayed feed at which the coarser bar ago (< 0) bars before
// the one bar cur builds ended; -1 before the first.
func replayAgo(r *engine.Replayed, cur, ago int) int {
	k := r.Index[cur] + ago
	if k < 0 {
		return -1
	}
	return r.Last[k]
}

// replayLen is the number of coarser bars seen at bar cur of a replayed feed.
func replayLen(r *engine.Replayed, cur int) int {
	if cur < 0 {
		return 0
	}
	return r.Index[cur] + 1
}

// replayLine makes l a line of the replayed feed: read through r, never memoised (its
// indicators are computed bar by bar below, not by the memo's whole-series calls).
func (h *host) replayLine(l *line, r *engine.Replayed) {
	l.rp, l.key = r, ""
	for _, rs := range h.replays {
		if rs != nil && rs.r == r {
			rs.lines = append(rs.lines, l)
			return
		}
	}
}

// pairFunctions take two lines of which one may be a number (see pair).
var pairFunctions = map[string]bool{
	"CrossOver": true, "CrossUp": true, "CrossDown": true, "Add": true, "Sub": true, "Mul": true, "Div": true,
	"Max": true, "Min": true, "Gt": true, "Ge": true, "Lt": true, "Le": true, "Eq": true, "Ne": true,
}

// wrapReplay makes every indicator (ind.X and the lines' a.op(b)) of a replayed feed's
// lines take the unfinished coarser bar as its current value, as backtrader's do under
// replay, where an indicator is computed again on each update of the bar from the
// finished bars before it and the bar as it stands. The indicators are computed over
// whole series, so at each bar of the feed the call is made again on the finished
// coarser bars plus the bar as it stands then, and its last value kept: O(bars x coarser
// bars) for each indicator, which daily bars replayed into weeks or months afford.
func (h *host) wrapReplay() {
	wrap := func(o *goja.Object, method bool) {
		for _, name := range o.Keys() {
			fn, ok := goja.AssertFunction(o.Get(name))
			if !ok {
				continue
			}
			pairs := method || pairFunctions[name]
			_ = o.Set(name, named(h.rt, name, func(call goja.FunctionCall) goja.Value {
				return h.replayCall(name, fn, call, pairs)
			}))
		}
	}
	wrap(h.rt.Get("ind").ToObject(h.rt), false)
	wrap(h.lineProto, true)
}

// feedsOf adds to seen the feeds whose lines v is or holds (a line, a data feed, a
// multi-line indicator, an array of inputs): a replayed feed's as the feed, any other
// feed's as -1-feed.
func (h *host) feedsOf(v goja.Value, depth int, seen map[int]bool) {
	o, ok := v.(*goja.Object)
	if !ok || depth > 2 {
		return
	}
	if l, ok := o.Export().(*line); ok {
		if l.rp == nil {
			seen[-1-l.feed] = true
			return
		}
		for k, rs := range h.replays {
			if rs != nil && rs.r == l.rp {
				seen[k] = true
			}
		}
		return
	}
	if k := slices.Index(h.datas, o); k >= 0 {
		if h.replays[k] != nil {
			seen[k] = true
		} else {
			seen[-1-k] = true
		}
		return
	}
	if first := o.Get("_first"); first != nil {
		h.feedsOf(first, depth+1, seen)
		return
	}
	if o.ClassName() == "Array" {
		n := int(o.Get("length").ToInteger())
		for i := 0; i < n && i < 64; i++ {
			h.feedsOf(o.Get(fmt.Sprint(i)), depth+1, seen)
		}
	}
}

// replayOf is the replayed feed whose lines an indicator call takes, or nil when it
// takes none; it throws when the call also takes another feed's lines, which run on
// another clock.
func (h *host) replayOf(name string, call goja.FunctionCall) *replayState {
	seen := map[int]bool{}
	h.feedsOf(call.This, 0, seen)
	for _, a := range call.Arguments {
		h.feedsOf(a, 0, seen)
	}
	keys := slices.Sorted(maps.Keys(seen)) // in order, so that errors name the lowest feeds
	var rs *replayState
	for _, k := range keys {
		if k >= 0 {
			if rs != nil {
				h.throw("%s: the lines of two replayed feeds (this.datas[%d] and this.datas[%d]) cannot meet in one indicator: each is rebuilt on its own clock; compare their values in next()", name, rs.feed, k)
			}
			rs = h.replays[k]
		}
	}
	if rs != nil {
		for _, k := range slices.Backward(keys) { // -1 (this.datas[0]) first
			if k < 0 && -1-k != rs.feed {
				h.throw("%s: a replayed feed's lines (this.datas[%d]) cannot meet another feed's (this.datas[%d]) in one indicator: each is rebuilt on its own clock; compare their values in next()", name, rs.feed, -1-k)
			}
		}
	}
	return rs
}

func (h *host) replayCall(name string, fn goja.Callable, call goja.FunctionCall, pairs bool) goja.Value {
	call = goja.FunctionCall{This: call.This, Arguments: slices.Clone(call.Arguments)}
	rs := h.replayOf(name, call)
	if rs == nil {
		v, err := fn(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	}
	if name == "Apply" || name == "Compute" {
		h.throw("%s: a replayed feed's lines take the built-in indicators only", name)
	}
	r := rs.r
	n := len(r.Index)
	for c := range columnNames {
		// made now, so that a call reading the feed itself (ind.SMA(this.data),
		// ind.ATR(this.data)) finds its columns among the lines lent below
		h.views[rs.feed].column(c)
	}
	if pairs { // a number beside a line is a constant line of the replayed feed
		for i := 0; i < len(call.Arguments) && i < 2; i++ {
			if _, isObj := call.Arguments[i].(*goja.Object); !isObj {
				if c := call.Arguments[i].ToFloat(); !math.IsNaN(c) {
					l := newLine(h.rt, engine.Const(c, n), rs.feed, h.eng.IndicatorCursor(rs.feed))
					h.replayLine(l, r)
					call.Arguments[i] = h.lineObject(l)
				}
			}
		}
	}
	// Each line of the feed is lent a series of the finished coarser bars, whose last
	// value is set to the bar as it stands at each bar of the feed in turn.
	type saved struct {
		s    engine.Series
		vals []float64
		cur  *int
		buf  []float64
	}
	lines := rs.lines
	keep := make([]saved, len(lines))
	for j, l := range lines {
		buf := make([]float64, len(r.Last))
		for k, at := range r.Last {
			buf[k] = l.vals[at]
		}
		keep[j] = saved{s: l.s, vals: l.vals, cur: l.cur, buf: buf}
	}
	tracer := h.tracer
	h.tracer = nil // the calls below are not the strategy's lines
	defer func() {
		h.tracer = tracer
		for j, l := range lines {
			l.s, l.vals, l.cur, l.rp = keep[j].s, keep[j].vals, keep[j].cur, r
		}
	}()
	var k int
	var res goja.Value
	var outs [][]float64
	var last []*line
	for i := range n {
		k = r.Index[i]
		for j, l := range lines {
			b := keep[j].buf
			b[k] = keep[j].vals[i]
			l.s = engine.Series{Vals: b[:k+1], First: l.vfirst}
			l.vals, l.cur, l.rp = l.s.Vals, &k, nil
		}
		v, err := fn(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		res, last = v, outputLines(v)
		if outs == nil {
			outs = make([][]float64, len(last))
			for j := range outs {
				outs[j] = make([]float64, n)
			}
		}
		if len(last) != len(outs) {
			h.throw("%s: a replayed feed's indicator changed its lines", name)
		}
		for j, ol := range last {
			outs[j][i] = math.NaN()
			if k < len(ol.vals) {
				outs[j][i] = ol.vals[k]
			}
		}
	}
	for j, ol := range last {
		vf := ol.s.First
		first := n + vf - len(r.Last) // never: past the last bar
		if vf == 0 {
			first = 0
		} else if vf < len(r.Last) {
			first = r.Last[vf-1] + 1
		}
		ol.s = engine.Series{Vals: outs[j], First: first}
		ol.vals, ol.vfirst = outs[j], vf
		h.replayLine(ol, r)
		h.eng.RequireMinPeriod(rs.feed, first+1)
		h.traceLine(ol)
	}
	return res
}

// outputLines are the lines an indicator call returned: the line, or a multi-line
// indicator's lines in key order.
func outputLines(v goja.Value) []*line {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	if l, ok := o.Export().(*line); ok {
		return []*line{l}
	}
	var out []*line
	for _, k := range o.Keys() {
		if x, ok := o.Get(k).(*goja.Object); ok {
			if l, ok := x.Export().(*line); ok {
				out = append(out, l)
			}
		}
	}
	return out
}
