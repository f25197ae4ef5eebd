package jsrt

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// A data filter written in JavaScript: a static filters entry whose filter is a class
// (backtrader's data.addfilter(cls, **kwargs): constructed with the feed and the entry's
// other keys, then call(data) on each bar, last(data) when the source runs out) or a plain
// function (backtrader's addfilter with a callable: fn(data, params) on each bar). It runs
// in the strategy's runtime, under the run's limits, before init().

// maxFilterGrowth bounds the bars a feed's filters may deliver for each bar they read (and
// the bars waiting on its stacks), so a filter that adds bars without end fails clearly
// instead of filling the runner's memory.
const maxFilterGrowth = 10

// userFilter is one filter of a feed: the instance and its methods, or the function.
type userFilter struct {
	at     int    // its index in static filters
	name   string // the class's or function's name, for errors
	this   goja.Value
	call   goja.Callable
	last   goja.Callable // nil: none
	params goja.Value    // a plain function's second argument
}

// filterBar is a bar in a filtered feed's buffer, with backtrader's lines (volume and
// open interest as numbers: a filter may write any value; the result's are checked).
type filterBar struct {
	t    time.Time
	v    [6]float64 // open high low close volume openinterest
	void bool       // a slot forward() made and nothing filled
}

var filterLines = [...]string{"open", "high", "low", "close", "volume", "openinterest"}

// filterColumns are the lines a filter's data shows: filterLines, then datetime (column 6).
var filterColumns = [...]string{"open", "high", "low", "close", "volume", "openinterest", "datetime"}

// filterFeed is one feed as its filters see it: backtrader's buffer, bar stack and stash,
// and its load loop (feed.py's load, _last, _add2stack, _save2stack, _updatebar,
// _fromstack and backwards), run as backtrader's preload runs them: every raw bar through
// the filters, in order, then each filter's last(). The buffer is then the feed.
type filterFeed struct {
	h       *host
	feed    int
	symbol  string
	src     []engine.Bar
	next    int
	buf     []filterBar
	stack   []filterBar
	stash   []filterBar
	filters []userFilter
	limit   int
	start   time.Duration // the entry's sessionstart and sessionend (backtrader's data.p)
	end     time.Duration
	obj     *goja.Object
	lineObj [7]*goja.Object
	fns     map[string]goja.Value
	err     error // a limit passed inside a call back into Go
}

// userFiltered runs the JavaScript filters of feed f (entries of static filters) over its
// bars and returns the feed they deliver.
func (h *host) userFiltered(f engine.Feed, feed int, entries []*goja.Object, at []int) (engine.Feed, error) {
	ff := &filterFeed{h: h, feed: feed, symbol: f.Symbol, src: f.Bars, end: engine.DefaultSessionEnd,
		limit: maxFilterGrowth*len(f.Bars) + 1000}
	ff.obj = h.rt.NewDynamicObject(&filterDataView{ff})
	ff.fns = ff.functions()
	for n, e := range entries {
		uf, err := ff.instantiate(e, at[n])
		if err != nil {
			return f, err
		}
		ff.filters = append(ff.filters, uf)
	}
	if err := ff.preload(); err != nil {
		return f, err
	}
	bars, err := ff.bars()
	if err != nil {
		return f, err
	}
	return engine.Feed{Symbol: f.Symbol, Bars: bars}, nil
}

// instantiate makes the filter of entry e: a class is constructed with the data and the
// entry's parameters (its keys but filter and data); a function is kept as it is.
func (ff *filterFeed) instantiate(e *goja.Object, at int) (userFilter, error) {
	rt := ff.h.rt
	fv := e.Get("filter")
	fo, ok := fv.(*goja.Object)
	fn, isFn := goja.AssertFunction(fv)
	if !ok || !isFn {
		return userFilter{}, fmt.Errorf("filters[%d].filter must be a built-in filter's name or a class or function of the strategy file, got %v", at, fv)
	}
	uf := userFilter{at: at, name: fo.Get("name").String()}
	params := rt.NewObject()
	for _, k := range e.Keys() {
		if k != "filter" && k != "data" {
			_ = params.Set(k, e.Get(k))
		}
	}
	if t, err := sessionOf(e); err != nil {
		return uf, fmt.Errorf("filters[%d]: %w", at, err)
	} else if t != nil {
		ff.start, ff.end = t[0], t[1]
	}
	proto, _ := fo.Get("prototype").(*goja.Object)
	if proto == nil || proto.Get("call") == nil || goja.IsUndefined(proto.Get("call")) {
		if strings.HasPrefix(fo.String(), "class") {
			return uf, fmt.Errorf("filters[%d]: %s is a class without a call(data) method (backtrader's __call__)", at, uf.name)
		}
		uf.this, uf.call, uf.params = goja.Undefined(), fn, params
		return uf, nil
	}
	inst, err := rt.New(fo, ff.obj, params)
	if err != nil {
		return uf, ff.jsError(uf, "constructor", err)
	}
	if uf.call, ok = goja.AssertFunction(inst.Get("call")); !ok {
		return uf, fmt.Errorf("filters[%d]: %s's call must be a method (call(data), backtrader's __call__)", at, uf.name)
	}
	if l := inst.Get("last"); l != nil && !goja.IsUndefined(l) {
		if uf.last, ok = goja.AssertFunction(l); !ok {
			return uf, fmt.Errorf("filters[%d]: %s's last must be a method (last(data))", at, uf.name)
		}
	}
	uf.this = inst
	return uf, nil
}

// sessionOf reads an entry's sessionstart and sessionend, nil when it gives neither.
func sessionOf(e *goja.Object) (*[2]time.Duration, error) {
	m := map[string]any{}
	for _, k := range []string{"sessionstart", "sessionend"} {
		if v := e.Get(k); v != nil && !goja.IsUndefined(v) {
			m[k] = v.Export()
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	s, t, err := sessionTimes(m)
	return &[2]time.Duration{s, t}, err
}

// jsError names the filter and method a JavaScript error came from, keeping an
// interruption (time or memory limit) as it is, for the run to report.
func (ff *filterFeed) jsError(uf userFilter, method string, err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return err
	}
	if ff.err != nil {
		return ff.err
	}
	msg, line, _ := jsErrorInfo(err)
	return &RunError{Kind: KindStrategy, Message: fmt.Sprintf("filters[%d]: %s.%s: %s", uf.at, uf.name, method, msg), Line: line}
}

// apply calls one filter on the current bar: true when it took the bar out of the stream.
func (ff *filterFeed) apply(uf userFilter) (bool, error) {
	var v goja.Value
	var err error
	if uf.params != nil {
		v, err = uf.call(uf.this, ff.obj, uf.params)
	} else {
		v, err = uf.call(uf.this, ff.obj)
	}
	if err != nil {
		return false, ff.jsError(uf, "call", err)
	}
	return v.ToBoolean(), ff.err
}

// load is backtrader's AbstractDataBase.load for a preloaded feed whose range the run
// already cut: the next bar from the stack, the stash or the source, through the filters.
func (ff *filterFeed) load() (bool, error) {
	for {
		if err := ff.forward(); err != nil {
			return false, err
		}
		if ff.fromStack(false) {
			return true, nil
		}
		if !ff.fromStack(true) {
			if ff.next >= len(ff.src) {
				ff.buf = ff.buf[:len(ff.buf)-1]
				return false, nil
			}
			b := ff.src[ff.next]
			ff.next++
			ff.buf[len(ff.buf)-1] = filterBar{t: b.Time, v: [6]float64{b.Open, b.High, b.Low, b.Close, float64(b.Volume), 0}}
		}
		removed := false
		for _, uf := range ff.filters {
			var err error
			if n := len(ff.stack); n > 0 {
				// a previous filter put bars on the stack: this one sees each of them
				for range n {
					if err = ff.forward(); err == nil {
						ff.fromStack(false)
						removed, err = ff.apply(uf)
					}
					if err != nil {
						break
					}
				}
			} else {
				removed, err = ff.apply(uf)
			}
			if err != nil {
				return false, err
			}
			if removed {
				break
			}
		}
		if !removed {
			return true, nil
		}
	}
}

// preload is backtrader's preload: load until the source runs out, then each filter's
// last(data), then the bars those left on the stack.
func (ff *filterFeed) preload() error {
	for {
		ok, err := ff.load()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	for _, uf := range ff.filters {
		if uf.last == nil {
			continue
		}
		if _, err := uf.last(uf.this, ff.obj); err != nil {
			return ff.jsError(uf, "last", err)
		}
		if ff.err != nil {
			return ff.err
		}
	}
	for len(ff.stack) > 0 {
		if err := ff.forward(); err != nil {
			return err
		}
		ff.fromStack(false)
	}
	return nil
}

func (ff *filterFeed) forward() error {
	if len(ff.buf) >= ff.limit {
		return ff.tooMany()
	}
	ff.buf = append(ff.buf, filterBar{void: true})
	return nil
}

func (ff *filterFeed) tooMany() error {
	return &RunError{Kind: KindStrategy, Message: fmt.Sprintf(
		"filters: the filters of this.datas[%d] delivered or stacked more than %d bars from %d (at most %d a bar read)",
		ff.feed, ff.limit, len(ff.src), maxFilterGrowth)}
}

// fromStack moves the oldest bar of the stack (or the stash) into the current slot.
func (ff *filterFeed) fromStack(stash bool) bool {
	q := &ff.stack
	if stash {
		q = &ff.stash
	}
	if len(*q) == 0 {
		return false
	}
	ff.buf[len(ff.buf)-1] = (*q)[0]
	*q = (*q)[1:]
	return true
}

// bars are the buffer as engine bars: each filled, in ascending time, with finite prices
// and a whole, non-negative volume, or an error naming the first that is not.
func (ff *filterFeed) bars() ([]engine.Bar, error) {
	out := make([]engine.Bar, 0, len(ff.buf))
	for i, b := range ff.buf {
		where := fmt.Sprintf("filters: bar %d of this.datas[%d] as its filters left it", i, ff.feed)
		if b.void {
			return nil, &RunError{Kind: KindStrategy, Message: where + " was never filled (a filter moved forward and wrote no bar)"}
		}
		where += " (" + b.t.UTC().Format(time.RFC3339Nano) + ")"
		for k, v := range b.v[:4] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &RunError{Kind: KindStrategy, Message: fmt.Sprintf("%s has %s %v: prices must be finite numbers", where, filterLines[k], v)}
			}
		}
		if vol := b.v[4]; vol != math.Trunc(vol) || vol < 0 || vol > 1e15 {
			return nil, &RunError{Kind: KindStrategy, Message: fmt.Sprintf("%s has volume %v: volumes are whole numbers of 0 or more", where, vol)}
		}
		if i > 0 && !b.t.After(ff.buf[i-1].t) {
			return nil, &RunError{Kind: KindStrategy, Message: fmt.Sprintf("%s is not after the bar before it (%s): bars must be in ascending time",
				where, ff.buf[i-1].t.UTC().Format(time.RFC3339Nano))}
		}
		out = append(out, engine.Bar{Time: b.t, Open: b.v[0], High: b.v[1], Low: b.v[2], Close: b.v[3], Volume: int64(b.v[4])})
	}
	if len(out) == 0 {
		return nil, &RunError{Kind: KindStrategy, Message: fmt.Sprintf("filters: the filters of this.datas[%d] left none of its %d bars", ff.feed, len(ff.src))}
	}
	return out, nil
}

// at is the buffer index of ago (0 the current bar, -1 the one before), or -1.
func (ff *filterFeed) at(ago int) int {
	i := len(ff.buf) - 1 + ago
	if ago > 0 || i < 0 || i >= len(ff.buf) {
		return -1
	}
	return i
}

// barObject is bar i as the object filters read and write: {datetime, open, high, low,
// close, volume, openinterest}.
func (ff *filterFeed) barObject(b filterBar) goja.Value {
	rt := ff.h.rt
	o := rt.NewObject()
	if !b.void {
		_ = o.Set("datetime", ff.dateValue(b.t))
	}
	for k, n := range filterLines {
		_ = o.Set(n, b.v[k])
	}
	return o
}

func (ff *filterFeed) dateValue(t time.Time) goja.Value {
	v, err := ff.h.rt.New(ff.h.rt.Get("Date"), ff.h.rt.ToValue(float64(t.UnixNano())/1e6))
	if err != nil {
		return goja.Undefined()
	}
	return v
}

// barOf reads a bar a filter gives: an object with datetime (a Date or milliseconds since
// the epoch) and any of the lines (missing ones NaN, as backtrader's void bar).
func (ff *filterFeed) barOf(v goja.Value, fn string) filterBar {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() == "Array" {
		ff.h.throw("%s expects a bar {datetime, open, high, low, close, volume, openinterest}, got %v", fn, v)
	}
	b := filterBar{t: ff.timeOf(o.Get("datetime"), fn+": the bar's datetime")}
	for k, n := range filterLines {
		b.v[k] = math.NaN()
		if x := o.Get(n); x != nil && !goja.IsUndefined(x) && !goja.IsNull(x) {
			b.v[k] = x.ToFloat()
		}
	}
	return b
}

// timeOf reads a Date (or milliseconds since the epoch) a filter gives.
func (ff *filterFeed) timeOf(v goja.Value, what string) time.Time {
	ms := math.NaN()
	if v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		ms = v.ToFloat()
	}
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 8.64e15 {
		if v == nil {
			v = goja.Undefined()
		}
		ff.h.throw("%s must be a Date or milliseconds since 1970, got %v", what, v)
	}
	sec := math.Floor(ms / 1000)
	return time.Unix(int64(sec), int64(math.Round((ms-sec*1000)*1e6))).UTC()
}

func (ff *filterFeed) push(stash bool, b filterBar) {
	q := &ff.stack
	if stash {
		q = &ff.stash
	}
	if len(*q) >= ff.limit {
		ff.err = ff.tooMany()
		ff.h.throw("%s", ff.err.Error())
	}
	*q = append(*q, b)
}

// functions are the data's methods: backtrader's backwards, _add2stack, _save2stack and
// _updatebar, without the underscore, with bar(ago), date(ago) and the session's times.
func (ff *filterFeed) functions() map[string]goja.Value {
	rt := ff.h.rt
	session := func(name string, d *time.Duration) goja.Value {
		return named(rt, name, func(v goja.Value) goja.Value {
			day := ff.timeOf(v, name+"'s argument").Truncate(24 * time.Hour)
			return ff.dateValue(day.Add(*d))
		})
	}
	return map[string]goja.Value{
		"backwards": named(rt, "backwards", func() {
			if len(ff.buf) == 0 {
				ff.h.throw("backwards: the feed has no bar to take back")
			}
			ff.buf = ff.buf[:len(ff.buf)-1]
		}),
		"add2stack": named(rt, "add2stack", func(bar goja.Value, stash bool) {
			ff.push(stash, ff.barOf(bar, "add2stack"))
		}),
		"save2stack": named(rt, "save2stack", func(erase, stash bool) {
			if len(ff.buf) == 0 {
				ff.h.throw("save2stack: the feed has no current bar")
			}
			ff.push(stash, ff.buf[len(ff.buf)-1])
			if erase {
				ff.buf = ff.buf[:len(ff.buf)-1]
			}
		}),
		"updatebar": named(rt, "updatebar", func(bar goja.Value, ago int) {
			i := ff.at(ago)
			if i < 0 {
				ff.h.throw("updatebar: there is no bar %d ago (the feed has %d)", -ago, len(ff.buf))
			}
			ff.buf[i] = ff.barOf(bar, "updatebar")
		}),
		"bar": named(rt, "bar", func(ago int) goja.Value {
			i := ff.at(ago)
			if i < 0 {
				return goja.Undefined()
			}
			return ff.barObject(ff.buf[i])
		}),
		"date": named(rt, "date", func(ago int) string {
			i := ff.at(ago)
			if i < 0 || ff.buf[i].void {
				return ""
			}
			return ff.buf[i].t.UTC().Format("2006-01-02")
		}),
		"sessionStart": session("sessionStart", &ff.start),
		"sessionEnd":   session("sessionEnd", &ff.end),
	}
}

// filterDataView is the data object a filter gets: the buffer's lines ([0] the current
// bar, [-1] the one before), length, symbol and the methods.
type filterDataView struct{ ff *filterFeed }

func (d *filterDataView) Get(key string) goja.Value {
	ff := d.ff
	for k, n := range filterColumns {
		if n == key {
			if ff.lineObj[k] == nil {
				ff.lineObj[k] = ff.h.rt.NewDynamicObject(&filterLineView{ff: ff, col: k})
			}
			return ff.lineObj[k]
		}
	}
	switch key {
	case "length":
		return ff.h.rt.ToValue(len(ff.buf))
	case "symbol":
		return ff.h.rt.ToValue(ff.symbol)
	}
	if fn, ok := ff.fns[key]; ok {
		return fn
	}
	return nil
}
func (d *filterDataView) Set(string, goja.Value) bool { return false }
func (d *filterDataView) Has(key string) bool         { return d.Get(key) != nil }
func (d *filterDataView) Delete(string) bool          { return false }
func (d *filterDataView) Keys() []string {
	return append(filterColumns[:], "length", "symbol", "backwards", "add2stack", "save2stack", "updatebar", "bar", "date", "sessionStart", "sessionEnd")
}

// filterLineView is one line of the buffer: [0] the current bar's value, [-n] n bars
// before; NaN (undefined for datetime) past the ends.
type filterLineView struct {
	ff  *filterFeed
	col int // 0-5 filterLines, 6 datetime
}

func (l *filterLineView) Get(key string) goja.Value {
	ago, err := strconv.Atoi(key)
	if err != nil {
		if key == "length" {
			return l.ff.h.rt.ToValue(len(l.ff.buf))
		}
		return nil
	}
	i := l.ff.at(ago)
	if l.col == 6 {
		if i < 0 || l.ff.buf[i].void {
			return goja.Undefined()
		}
		return l.ff.dateValue(l.ff.buf[i].t)
	}
	if i < 0 {
		return l.ff.h.rt.ToValue(math.NaN())
	}
	return l.ff.h.rt.ToValue(l.ff.buf[i].v[l.col])
}

// Set writes the current (or an earlier) bar's value, as backtrader's data.close[0] = x.
func (l *filterLineView) Set(key string, v goja.Value) bool {
	ago, err := strconv.Atoi(key)
	i := l.ff.at(ago)
	if err != nil || i < 0 {
		l.ff.h.throw("a filter writes the bars it has: no bar %s ago", key)
	}
	b := &l.ff.buf[i]
	if l.col == 6 {
		b.t, b.void = l.ff.timeOf(v, "datetime"), false
	} else {
		b.v[l.col] = v.ToFloat()
	}
	return true
}
func (l *filterLineView) Has(key string) bool { return l.Get(key) != nil }
func (l *filterLineView) Delete(string) bool  { return false }
func (l *filterLineView) Keys() []string      { return nil }
