package jsrt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// feedSpec is one entry of a strategy's static chain or rollover: the run's feeds it
// joins, in order, and the name of the feed it makes.
type feedSpec struct {
	kind  string // "chain" or "rollover"
	at    int    // position in the static's array, for messages
	data  []int
	name  string
	obj   *goja.Object // the spec itself: this of its checkdate and checkcondition
	date  goja.Callable
	cond  goja.Callable
	first int // the lowest of data: where the joined feed goes
}

// contracts records, for a feed joined by chain or rollover, the symbol of the feed
// each of its bars came from (this.data.contract).
type contracts struct {
	names  []string
	source []int
}

// combined applies the strategy class's static chain and rollover (backtrader's
// cerebro.chaindata and cerebro.rolloverdata) to the run's feeds: each is an object, or an
// array of them, {data: [indexes of the run's feeds, in order; default all], name: the
// joined feed's symbol (default the first's)}, a rollover also {checkdate(dt, d),
// checkcondition(d0, d1)}. The joined feed takes the place of the lowest of its feeds in
// this.datas; the others leave it.
func (h *host) combined(cls *goja.Object, feeds []engine.Feed) ([]engine.Feed, error) {
	var specs []*feedSpec
	for _, kind := range []string{"chain", "rollover"} {
		s, err := h.feedSpecs(cls, kind, len(feeds))
		if err != nil {
			return nil, err
		}
		specs = append(specs, s...)
	}
	if len(specs) == 0 {
		return feeds, nil
	}
	owner := make([]*feedSpec, len(feeds))
	for _, s := range specs {
		for _, k := range s.data {
			if o := owner[k]; o != nil {
				return nil, fmt.Errorf("feed %d is joined twice (by %s[%d] and %s[%d])", k, o.kind, o.at, s.kind, s.at)
			}
			owner[k] = s
		}
		if s.kind == "rollover" {
			h.memo = nil // its callbacks are the strategy's code: do not share what they made
		}
	}
	var out []engine.Feed
	for k, f := range feeds {
		s := owner[k]
		if s == nil {
			out = append(out, f)
			continue
		}
		if k != s.first {
			continue
		}
		parts := make([]engine.Feed, len(s.data))
		names := make([]string, len(s.data))
		for i, d := range s.data {
			parts[i], names[i] = feeds[d], feeds[d].Symbol
		}
		name := cmp.Or(s.name, names[0])
		var c engine.Combined
		var err error
		if s.kind == "chain" {
			c, err = engine.Chain(name, parts)
		} else {
			c, err = engine.RollOver(name, parts, h.rollRule(s, parts))
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", s.kind, s.at, err)
		}
		if len(c.Feed.Bars) == 0 {
			return nil, fmt.Errorf("%s[%d]: the feeds %v have no bars", s.kind, s.at, names)
		}
		if h.contracts == nil {
			h.contracts = map[int]*contracts{}
		}
		h.contracts[len(out)] = &contracts{names: names, source: c.Source}
		h.joined = append(h.joined, joinedFeed{at: len(out), bars: c.Feed.Bars, spans: c.Spans(names)})
		out = append(out, c.Feed)
	}
	return out, nil
}

// joinedFeed is a feed combined made: where it went among the run's feeds, its bars and
// the spans of the joined feeds' bars it is made of.
type joinedFeed struct {
	at    int
	bars  []engine.Bar
	spans []engine.Span
}

// joinedSpans records in res the spans of each joined feed the strategy traded as it was
// joined (Result.Symbols[k].Joined), so that its charts show the bars it saw. A feed a
// filter then reshaped (Heikin-Ashi, Renko, …) is no longer those bars and gets none.
func joinedSpans(res *engine.Result, feeds []engine.Feed, joined []joinedFeed) {
	if res == nil {
		return
	}
	for _, j := range joined {
		if j.at >= len(feeds) || j.at >= len(res.Symbols) || len(j.bars) == 0 {
			continue
		}
		if f := feeds[j.at].Bars; len(f) == len(j.bars) && &f[0] == &j.bars[0] {
			res.Symbols[j.at].Joined = j.spans
		}
	}
}

// feedSpecs reads the class's static `kind` (chain or rollover).
func (h *host) feedSpecs(cls *goja.Object, kind string, n int) ([]*feedSpec, error) {
	v := cls.Get(kind)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	shape := fmt.Sprintf("static %s must be an object {data, name} or an array of them", kind)
	if kind == "rollover" {
		shape = "static rollover must be an object {data, name, checkdate, checkcondition} or an array of them"
	}
	o, ok := v.(*goja.Object)
	if !ok {
		if b, isBool := v.Export().(bool); isBool && b && kind == "chain" { // static chain = true: all feeds
			o = h.rt.NewObject()
		} else {
			return nil, errors.New(shape)
		}
	}
	objs := []*goja.Object{o}
	if o.ClassName() == "Array" {
		objs = objs[:0]
		l := int(o.Get("length").ToInteger())
		for i := range l {
			e, ok := o.Get(fmt.Sprint(i)).(*goja.Object)
			if !ok || e.ClassName() == "Array" {
				return nil, errors.New(shape)
			}
			objs = append(objs, e)
		}
	}
	var out []*feedSpec
	for i, e := range objs {
		s := &feedSpec{kind: kind, at: i, obj: e}
		if d := e.Get("data"); d == nil || goja.IsUndefined(d) {
			for k := range n {
				s.data = append(s.data, k)
			}
		} else {
			arr, ok := d.Export().([]any)
			if !ok || len(arr) == 0 {
				return nil, fmt.Errorf("%s[%d].data must be an array of indexes of the run's %d feeds", kind, i, n)
			}
			for _, x := range arr {
				k, ok := x.(int64)
				if !ok || k < 0 || k >= int64(n) || slices.Contains(s.data, int(k)) {
					return nil, fmt.Errorf("%s[%d].data must hold distinct indexes of the run's %d feeds, got %v", kind, i, n, x)
				}
				s.data = append(s.data, int(k))
			}
		}
		s.first = slices.Min(s.data)
		if nm := e.Get("name"); nm != nil && !goja.IsUndefined(nm) {
			str, ok := nm.Export().(string)
			if !ok || str == "" {
				return nil, fmt.Errorf("%s[%d].name must be a non-empty string", kind, i)
			}
			s.name = str
		}
		if kind == "rollover" {
			var err error
			if s.date, err = callback(e, "checkdate"); err != nil {
				return nil, fmt.Errorf("rollover[%d].%w", i, err)
			}
			if s.cond, err = callback(e, "checkcondition"); err != nil {
				return nil, fmt.Errorf("rollover[%d].%w", i, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func callback(o *goja.Object, name string) (goja.Callable, error) {
	v := o.Get(name)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, fmt.Errorf("%s must be a function", name)
	}
	return fn, nil
}

// rollRule calls the spec's checkdate(dt, d) and checkcondition(d0, d1) with views of the
// feeds at the bars RollOver is at.
func (h *host) rollRule(s *feedSpec, feeds []engine.Feed) engine.RollRule {
	views := make([]*contractView, len(feeds))
	view := func(k, i int) *goja.Object {
		if views[k] == nil {
			views[k] = h.newContractView(&feeds[k])
		}
		views[k].cur = i
		return views[k].obj
	}
	call := func(fn goja.Callable, args ...goja.Value) (bool, error) {
		v, err := fn(s.obj, args...)
		if err != nil {
			return false, err
		}
		return v.ToBoolean(), nil
	}
	var rule engine.RollRule
	if s.date != nil {
		rule.CheckDate = func(_ time.Time, d, i int) (bool, error) {
			o := view(d, i)
			return call(s.date, views[d].column(5).Get(0), o)
		}
	}
	if s.cond != nil {
		rule.CheckCondition = func(d0, i0, d1, i1 int) (bool, error) {
			return call(s.cond, view(d0, i0), view(d1, i1))
		}
	}
	return rule
}

// contractView is a feed a rollover's callbacks see (d, d0, d1): its lines (open, high,
// low, close, volume, datetime; [0] the current bar, [-1] the one before), symbol,
// length and date(ago), at the bar the rollover has reached in it.
type contractView struct {
	h     *host
	f     *engine.Feed
	cur   int
	lines [6]*line
	objs  [6]*goja.Object
	date  goja.Value
	obj   *goja.Object
}

func (h *host) newContractView(f *engine.Feed) *contractView {
	c := &contractView{h: h, f: f}
	c.date = named(h.rt, "date", func(ago int) string {
		i := c.cur + ago
		if ago > 0 || i < 0 || i >= len(f.Bars) {
			return ""
		}
		return f.Bars[i].Time.Format("2006-01-02")
	})
	c.obj = h.rt.NewDynamicObject(c)
	return c
}

func (c *contractView) column(k int) *line {
	if c.lines[k] == nil {
		l := newLine(c.h.rt, engine.Line((&dataView{}).values(c.f, k)), 0, &c.cur)
		l.date = k == 5
		c.lines[k], c.objs[k] = l, c.h.lineObject(l)
	}
	return c.lines[k]
}

func (c *contractView) Get(key string) goja.Value {
	for k, n := range columnNames {
		if n == key {
			c.column(k)
			return c.objs[k]
		}
	}
	switch key {
	case "symbol":
		return c.h.rt.ToValue(c.f.Symbol)
	case "length":
		return c.h.rt.ToValue(c.cur + 1)
	case "date":
		return c.date
	}
	return nil
}
func (c *contractView) Set(string, goja.Value) bool { return false }
func (c *contractView) Has(key string) bool {
	return slices.Contains(columnNames[:], key) || key == "symbol" || key == "length" || key == "date"
}
func (c *contractView) Delete(string) bool { return false }
func (c *contractView) Keys() []string     { return append(columnNames[:], "symbol", "length") }

// contract is this.datas[k].contract: the symbol of the feed the current bar of a joined
// feed came from; undefined for other feeds.
func (h *host) contract(k int) goja.Value {
	c := h.contracts[k]
	if c == nil {
		return goja.Undefined()
	}
	i := *h.eng.Cursor(k)
	if i < 0 || i >= len(c.source) {
		return goja.Undefined()
	}
	return h.rt.ToValue(c.names[c.source[i]])
}
