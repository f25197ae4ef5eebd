package jsrt

import (
	"fmt"
	"strconv"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/dop251/goja"
)

// In a run of the look-ahead check, ind.Compute hands its function watched arrays instead
// of plain ones: the same values, but each read of an element records, the first time it
// happens, a read of a bar after the current one. ind.Compute's function may read the
// whole series (its output is judged, bar by bar, by the cuts of internal/bias); what it
// must not do is let the series out and have next(), a notification, a timer or an
// ind.Apply function read a later bar of it. The cuts see such a read only when it changes
// an order or the watched state near a cut; the watched array sees it at the bar it is
// made. An ordinary run hands plain arrays and pays nothing.

// watchSource is one input series of one ind.Compute call, shared by the watched arrays
// made from it (the input itself and the copies its own methods make).
type watchSource struct {
	label string // "ind.Compute input at code line 3"
	feed  int
	n     int  // bars of the series: reads at or after n read nothing
	seen  bool // its first read of a later bar is recorded; later ones are not
}

// watchedArray is a watched array: vals[k] is bar base+k of its source's feed.
type watchedArray struct {
	h    *host
	src  *watchSource
	vals []goja.Value
	base int
	// mutated: the strategy wrote to it (sort, reverse, assignment), so an index no longer
	// says which bar an element is: it is no longer watched, rather than misjudged.
	mutated bool
}

func (a *watchedArray) Len() int { return len(a.vals) }

func (a *watchedArray) Get(idx int) goja.Value {
	if idx < 0 || idx >= len(a.vals) {
		return nil // undefined, or the prototype's
	}
	if !a.mutated && !a.src.seen {
		a.h.watchRead(a, idx)
	}
	return a.vals[idx]
}

func (a *watchedArray) Set(idx int, v goja.Value) bool {
	if idx < 0 {
		return false
	}
	a.mutated = true
	if idx >= len(a.vals) {
		a.vals = append(a.vals, make([]goja.Value, idx+1-len(a.vals))...)
	}
	a.vals[idx] = v
	return true
}

func (a *watchedArray) SetLen(n int) bool {
	if n < 0 {
		return false
	}
	a.mutated = true
	if n <= len(a.vals) {
		clear(a.vals[n:])
		a.vals = a.vals[:n]
	} else {
		a.vals = append(a.vals, make([]goja.Value, n-len(a.vals))...)
	}
	return true
}

// watching is the tracer's state for watched arrays.
type watching struct {
	proto *goja.Object // Array.prototype, plus the copying methods that keep watching
	// inCompute counts the ind.Compute functions running (and the host reading their
	// output): their reads are judged by the output, not recorded.
	inCompute int
	// applyFeed and applyBar are the bar an ind.Apply function is called for (applyFeed
	// -1 outside one): it is the current bar of what that function reads.
	applyFeed, applyBar int
}

// watchedInput is series vals of feed as ind.Compute hands it to its function in a run
// of the check: a watched array named by the Compute call's code line.
func (h *host) watchedInput(vals []float64, feed, k, of int) *goja.Object {
	label := "ind.Compute input"
	if of > 1 {
		label += " " + strconv.Itoa(k+1)
	}
	if at := h.codeLine(); at > 0 {
		label += " at code line " + strconv.Itoa(at)
	}
	a := &watchedArray{h: h, src: &watchSource{label: label, feed: feed, n: len(vals)}, vals: make([]goja.Value, len(vals))}
	for i, v := range vals {
		a.vals[i] = h.rt.ToValue(v)
	}
	return h.watchedObject(a)
}

func (h *host) watchedObject(a *watchedArray) *goja.Object {
	o := h.rt.NewDynamicArray(a)
	_ = o.SetPrototype(h.watchProto())
	return o
}

// codeLine is the line of the strategy's code that is running (0: none).
func (h *host) codeLine() int {
	for _, f := range h.rt.CaptureCallStack(8, nil) {
		if f.SrcName() == scriptName {
			return f.Position().Line
		}
	}
	return 0
}

// where says which of the strategy's functions is running, and its line: the innermost,
// and the outermost (the hook the engine called: next(), notifyOrder()) when it differs.
func (h *host) where() string {
	var frames []string
	for _, f := range h.rt.CaptureCallStack(0, nil) {
		if f.SrcName() != scriptName {
			continue
		}
		name := f.FuncName()
		if name == "" || name == "<anonymous>" {
			name = "a function"
		} else {
			name += "()"
		}
		frames = append(frames, fmt.Sprintf("%s at code line %d", name, f.Position().Line))
	}
	switch len(frames) {
	case 0:
		return "the strategy"
	case 1:
		return frames[0]
	}
	return frames[0] + ", called from " + frames[len(frames)-1]
}

// watchProto is the watched arrays' prototype: Array.prototype, with slice, map, filter
// and concat returning watched arrays (an index of a slice is shifted by its start), so
// that a copy made with them inside ind.Compute's function is watched too. Copies made
// element by element (spread, Array.from, a loop) are the strategy's own plain arrays.
func (h *host) watchProto() *goja.Object {
	w := &h.tracer.arrays
	if w.proto != nil {
		return w.proto
	}
	arrayProto := h.rt.Get("Array").ToObject(h.rt).Get("prototype").ToObject(h.rt)
	p := h.rt.NewObject()
	_ = p.SetPrototype(arrayProto)
	for _, name := range []string{"slice", "map", "filter", "concat"} {
		orig, ok := goja.AssertFunction(arrayProto.Get(name))
		if !ok {
			continue
		}
		fn := named(h.rt, name, func(call goja.FunctionCall) goja.Value {
			res, err := orig(call.This, call.Arguments...)
			if err != nil {
				panic(err)
			}
			o, ok := call.This.(*goja.Object)
			if !ok {
				return res
			}
			a, ok := o.Export().(*watchedArray)
			out, isObj := res.(*goja.Object)
			if !ok || a.mutated || !isObj {
				return res
			}
			base := a.base
			if name == "slice" {
				base += int(relIndex(call.Argument(0).ToInteger(), int64(len(a.vals))))
			}
			n := int(out.Get("length").ToInteger())
			c := &watchedArray{h: h, src: a.src, base: base, vals: make([]goja.Value, n)}
			for k := range n {
				c.vals[k] = out.Get(strconv.Itoa(k))
			}
			return h.watchedObject(c)
		})
		_ = p.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	w.proto = p
	return p
}

// relIndex is a relative index of Array.prototype.slice resolved against length l.
func relIndex(rel, l int64) int64 {
	if rel >= 0 {
		return min(rel, l)
	}
	return max(l+rel, 0)
}

// watchRead records element idx of a read, when it is a bar after the current one and no
// ind.Compute function is running.
func (h *host) watchRead(a *watchedArray, idx int) {
	w := &h.tracer.arrays
	if w.inCompute > 0 {
		return
	}
	src := a.src
	j := a.base + idx
	if j >= src.n {
		return
	}
	feeds := h.eng.Feeds()
	bars := feeds[src.feed].Bars
	if j >= len(bars) { // names no bar of the feed (a replayed feed's input, of coarser bars, is shorter)
		return
	}
	var cur int           // the current bar, of the source's feed
	var at time.Time      // and its time
	hook := "ind.Apply"   // who read
	if w.applyFeed >= 0 { // in an ind.Apply function: its bar is the current one
		ab := feeds[w.applyFeed].Bars
		if w.applyFeed == src.feed {
			cur = w.applyBar
		} else { // the last bar of the source's feed at or before the Apply's bar
			cur = -1
			for cur+1 < len(bars) && !bars[cur+1].Time.After(ab[w.applyBar].Time) {
				cur++
			}
		}
		at = ab[w.applyBar].Time
	} else {
		// Before the first bar (init) no bar is known, but nothing can be decided before
		// the first bar either: reading it then is not reading the future.
		cur = max(*h.eng.Cursor(src.feed), 0)
		at = bars[cur].Time
		hook = ""
	}
	if j <= cur {
		return
	}
	src.seen = true
	where := h.where()
	if hook != "" {
		where = "the ind.Apply function (" + where + ")"
	}
	h.tracer.t.Reads = append(h.tracer.t.Reads, bias.Read{
		What: src.label, Call: "ind.Compute", Feed: src.feed, Bar: max(cur, 0), Time: at.UnixNano(),
		Index: j, IndexTime: bars[j].Time.UnixNano(), Value: valueText(a.vals[idx]), Where: where,
	})
}

func valueText(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	return v.String()
}
