package jsrt

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// indArg resolves an indicator input: a line, a data feed (its close), a
// multi-line indicator (its first line) or a number (a constant line).
func (h *host) indArg(v goja.Value, feed int, name string) *line {
	if o, ok := v.(*goja.Object); ok {
		if l, ok := o.Export().(*line); ok {
			return l
		}
		for k, d := range h.datas {
			if d == o {
				return h.views[k].column(3)
			}
		}
		if first := o.Get("_first"); first != nil {
			if l, ok := first.Export().(*line); ok {
				return l
			}
		}
	}
	if v != nil && !goja.IsUndefined(v) {
		if f := v.ToFloat(); !math.IsNaN(f) && feed >= 0 {
			n := len(h.eng.Feeds()[feed].Bars)
			return newLine(h.rt, engine.Const(f, n), feed, h.eng.IndicatorCursor(feed))
		}
	}
	h.throw("%s: expected a line (e.g. this.data.close), a data feed or an indicator", name)
	return nil
}

// indParams reads an indicator's parameters given after its inputs: positionally
// (ind.MACD(close, 12, 26, 9)) or as one options object (ind.MACD(close, {fast: 12})).
type indParams struct {
	h    *host
	call goja.FunctionCall
	at   int          // index of the first parameter argument
	opts *goja.Object // the options object, when given
	name string
}

func (h *host) params(call goja.FunctionCall, at int, name string) indParams {
	p := indParams{h: h, call: call, at: at, name: name}
	if o, ok := call.Argument(at).(*goja.Object); ok && o.ClassName() == "Object" {
		if _, isLine := o.Export().(*line); !isLine {
			p.opts = o
		}
	}
	return p
}

// arg is parameter key, the i-th after the inputs.
func (p indParams) arg(key string, i int) goja.Value {
	if p.opts != nil {
		return p.opts.Get(key)
	}
	return p.call.Argument(p.at + i)
}

// period reads an integer parameter (a period or a count of bars).
func (p indParams) period(key string, i, def int) int {
	v := p.arg(key, i)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 1 || f > 1e7 {
		p.h.throw("%s: %s must be a positive integer, got %s", p.name, key, v.String())
	}
	return int(f)
}

// periodOrZero reads a count of bars that may be 0 (default 0).
func (p indParams) periodOrZero(key string) int {
	v := p.arg(key, 0)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 0 || f > 1e7 {
		p.h.throw("%s: %s must be an integer of 0 or more, got %s", p.name, key, v.String())
	}
	return int(f)
}

// num reads a number parameter.
func (p indParams) num(key string, i int, def float64) float64 {
	v := p.arg(key, i)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	f := v.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		p.h.throw("%s: %s must be a number, got %s", p.name, key, v.String())
	}
	return f
}

// output registers s as a line of feed and returns its script object.
func (h *host) output(s engine.Series, feed int) *goja.Object { return h.outputKeyed(s, feed, "") }

// outputKeyed is output of a series memoised under key.
func (h *host) outputKeyed(s engine.Series, feed int, key string) *goja.Object {
	h.eng.RequireMinPeriod(feed, s.First+1)
	l := newLine(h.rt, s, feed, h.eng.IndicatorCursor(feed))
	l.key = key
	h.traceLine(l)
	return h.lineObject(l)
}

// lineObject is l as a strategy sees it: array-like, with the arithmetic and
// comparisons of lineOps as methods too (a.sub(b) is ind.Sub(a, b)).
func (h *host) lineObject(l *line) *goja.Object {
	o := h.rt.NewDynamicArray(l)
	_ = o.SetPrototype(h.lineProto) // set by lineOps, with ind, before any line exists
	return o
}

func (h *host) multi(feed int, names []string, ss ...engine.Series) *goja.Object {
	o := h.rt.NewObject()
	for i, s := range ss {
		l := h.output(s, feed)
		_ = o.Set(names[i], l)
		if i == 0 {
			_ = o.DefineDataProperty("_first", l, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		}
	}
	return o
}

func (h *host) indObject() *goja.Object {
	o := newLazyFuncs(h.rt, len(indicatorNames))
	one := func(name string, def int, f func(engine.Series, int) engine.Series) {
		key := "period"
		if name == "Delay" {
			key = "ago"
		}
		_ = o.Set(name, func(call goja.FunctionCall) goja.Value {
			in := h.indArg(call.Argument(0), -1, name)
			n := h.params(call, 1, name).period(key, 0, def)
			s, k := h.memoised(in, name+"/"+strconv.Itoa(n), func() engine.Series { return f(in.s, n) })
			return h.outputKeyed(s, in.feed, k)
		})
	}
	one("SMA", 30, engine.SMA)
	one("EMA", 30, engine.EMA)
	one("WMA", 30, engine.WMA)
	one("SMMA", 30, engine.SMMA)
	one("RSI", 14, engine.RSI)
	one("Highest", 30, engine.Highest)
	one("Lowest", 30, engine.Lowest)
	one("ROC", 12, engine.ROC)
	one("Momentum", 12, engine.Momentum)
	one("StdDev", 20, engine.StdDev)
	one("Delay", 1, engine.Delay)
	one("DEMA", 30, engine.DEMA)
	one("TEMA", 30, engine.TEMA)
	one("HMA", 30, engine.HMA)
	one("ZLEMA", 30, engine.ZLEMA)
	one("TRIX", 15, engine.TRIX)
	_ = o.Set("KAMA", func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "KAMA")
		p := h.params(call, 1, "KAMA")
		return h.output(engine.KAMA(in.s, p.period("period", 0, 30), p.period("fast", 1, 2), p.period("slow", 2, 30)), in.feed)
	})
	_ = o.Set("StochRSI", func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "StochRSI")
		p := h.params(call, 1, "StochRSI")
		return h.output(engine.StochRSI(in.s, p.period("rsiperiod", 0, 14), p.period("period", 1, 14)), in.feed)
	})

	_ = o.Set("MACD", func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "MACD")
		p := h.params(call, 1, "MACD")
		m, s, hi := engine.MACD(in.s, p.period("fast", 0, 12), p.period("slow", 1, 26), p.period("signal", 2, 9))
		return h.multi(in.feed, []string{"macd", "signal", "histo"}, m, s, hi)
	})
	boll := func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "BollingerBands")
		p := h.params(call, 1, "BollingerBands")
		mid, top, bot := engine.Bollinger(in.s, p.period("period", 0, 20), p.num("devfactor", 1, 2.0))
		return h.multi(in.feed, []string{"mid", "top", "bot"}, mid, top, bot)
	}
	_ = o.Set("BollingerBands", boll)
	_ = o.Set("Bollinger", boll)
	hlc := func(call goja.FunctionCall, name string) (hi, lo, cl *line) {
		d, ok := call.Argument(0).(*goja.Object)
		if ok {
			for k, x := range h.datas {
				if x == d {
					return h.views[k].column(1), h.views[k].column(2), h.views[k].column(3)
				}
			}
		}
		h.throw("%s: expected a data feed (e.g. this.data)", name)
		return
	}
	_ = o.Set("ATR", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "ATR")
		return h.output(engine.ATR(hi.s, lo.s, cl.s, h.params(call, 1, "ATR").period("period", 0, 14)), cl.feed)
	})
	_ = o.Set("TrueRange", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "TrueRange")
		return h.output(engine.TrueRange(hi.s, lo.s, cl.s), cl.feed)
	})
	_ = o.Set("Stochastic", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Stochastic")
		p := h.params(call, 1, "Stochastic")
		k, d := engine.Stochastic(hi.s, lo.s, cl.s, p.period("period", 0, 14), p.period("dfast", 1, 3), p.period("dslow", 2, 3))
		return h.multi(cl.feed, []string{"k", "d"}, k, d)
	})
	_ = o.Set("CCI", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "CCI")
		p := h.params(call, 1, "CCI")
		return h.output(engine.CCI(hi.s, lo.s, cl.s, p.period("period", 0, 20), p.num("factor", 1, 0.015)), cl.feed)
	})
	_ = o.Set("WilliamsR", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "WilliamsR")
		return h.output(engine.WilliamsR(hi.s, lo.s, cl.s, h.params(call, 1, "WilliamsR").period("period", 0, 14)), cl.feed)
	})
	_ = o.Set("Aroon", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Aroon")
		up, down, osc := engine.Aroon(hi.s, lo.s, h.params(call, 1, "Aroon").period("period", 0, 14))
		return h.multi(cl.feed, []string{"up", "down", "osc"}, up, down, osc)
	})
	_ = o.Set("UltimateOscillator", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "UltimateOscillator")
		p := h.params(call, 1, "UltimateOscillator")
		return h.output(engine.UltimateOscillator(hi.s, lo.s, cl.s, p.period("p1", 0, 7), p.period("p2", 1, 14), p.period("p3", 2, 28)), cl.feed)
	})
	dmi := func(call goja.FunctionCall, name string) (cl *line, plus, minus, adx, adxr engine.Series) {
		hi, lo, c := hlc(call, name)
		plus, minus, adx, adxr = engine.DMI(hi.s, lo.s, c.s, h.params(call, 1, name).period("period", 0, 14))
		return c, plus, minus, adx, adxr
	}
	_ = o.Set("DMI", func(call goja.FunctionCall) goja.Value {
		cl, plus, minus, adx, adxr := dmi(call, "DMI")
		return h.multi(cl.feed, []string{"plusDI", "minusDI", "adx", "adxr"}, plus, minus, adx, adxr)
	})
	_ = o.Set("ADX", func(call goja.FunctionCall) goja.Value {
		cl, _, _, adx, _ := dmi(call, "ADX")
		return h.output(adx, cl.feed)
	})
	_ = o.Set("ParabolicSAR", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "ParabolicSAR")
		p := h.params(call, 1, "ParabolicSAR")
		return h.output(engine.ParabolicSAR(hi.s, lo.s, cl.s, p.num("af", 0, 0.02), p.num("afmax", 1, 0.2)), cl.feed)
	})
	_ = o.Set("Ichimoku", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Ichimoku")
		p := h.params(call, 1, "Ichimoku")
		tk, kj, sa, sb := engine.Ichimoku(hi.s, lo.s, p.period("tenkan", 0, 9), p.period("kijun", 1, 26), p.period("senkou", 2, 52), p.period("senkou_lead", 3, 26))
		return h.multi(cl.feed, []string{"tenkan", "kijun", "senkouA", "senkouB"}, tk, kj, sa, sb)
	})
	_ = o.Set("Donchian", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Donchian")
		up, mid, low := engine.Donchian(hi.s, lo.s, h.params(call, 1, "Donchian").period("period", 0, 20))
		return h.multi(cl.feed, []string{"upper", "mid", "lower"}, up, mid, low)
	})
	_ = o.Set("Keltner", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Keltner")
		p := h.params(call, 1, "Keltner")
		up, mid, low := engine.Keltner(hi.s, lo.s, cl.s, p.period("period", 0, 20), p.period("atrperiod", 1, 10), p.num("mult", 2, 2))
		return h.multi(cl.feed, []string{"upper", "mid", "lower"}, up, mid, low)
	})
	_ = o.Set("OBV", func(call goja.FunctionCall) goja.Value {
		_, _, cl := hlc(call, "OBV")
		return h.output(engine.OBV(cl.s, h.views[cl.feed].column(4).s), cl.feed)
	})
	two := func(name string, f func(a, b engine.Series) engine.Series) {
		_ = o.Set(name, func(call goja.FunctionCall) goja.Value {
			a, b, feed := h.pair(call, name)
			return h.output(f(a.s, b.s), feed)
		})
	}
	two("CrossOver", engine.CrossOver)
	two("CrossUp", engine.CrossUp)
	two("CrossDown", engine.CrossDown)
	h.lineOps(o)
	return h.rt.NewDynamicObject(lazyInd{o})
}

// pair resolves two inputs of which one may be a number (a constant line of the other's
// feed).
func (h *host) pair(call goja.FunctionCall, name string) (a, b *line, feed int) {
	x, y := call.Argument(0), call.Argument(1)
	if _, ok := x.(*goja.Object); !ok {
		b = h.indArg(y, -1, name)
		a = h.indArg(x, b.feed, name)
	} else {
		a = h.indArg(x, -1, name)
		b = h.indArg(y, a.feed, name)
	}
	return a, h.alignTo(a.feed, b), a.feed
}

// alignTo returns l as a line of feed: itself when it is one, else, for each bar of feed,
// l's latest value at or before that bar's time (so a spread of two feeds pairs the bars
// of the same date, and a feed with a missing date carries its last value over it).
func (h *host) alignTo(feed int, l *line) *line {
	if l.feed == feed {
		return l
	}
	to, from := h.eng.Feeds()[feed].Bars, h.eng.Feeds()[l.feed].Bars
	vals := make([]float64, len(to))
	first := len(to)
	j := -1
	for i := range to {
		for j+1 < len(from) && !from[j+1].Time.After(to[i].Time) {
			j++
		}
		if j >= l.s.First && j < len(l.vals) {
			vals[i] = l.vals[j]
			first = min(first, i)
		} else {
			vals[i] = math.NaN()
		}
	}
	return newLine(h.rt, engine.Custom(vals, first), feed, h.eng.IndicatorCursor(feed))
}

// lineOps installs arithmetic and comparisons on lines and the strategy's own
// indicators (ind.Apply per bar, ind.Compute over the whole series).
func (h *host) lineOps(o *lazyFuncs) {
	methods := newLazyFuncs(h.rt, len(lineOperations))
	// Each operation is ind.Name(a, b) and, on every line, a.name(b).
	for _, op := range lineOperations {
		fn := func(call goja.FunctionCall) goja.Value {
			a, b, feed := h.pair(call, op.name)
			return h.output(op.f(a.s, b.s), feed)
		}
		_ = o.Set(op.name, fn)
		_ = methods.Set(strings.ToLower(op.name), func(call goja.FunctionCall) goja.Value {
			return fn(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{call.This, call.Argument(0)}})
		})
	}
	h.lineProto = h.rt.NewDynamicObject(lazyInd{methods})
	_ = h.lineProto.SetPrototype(h.rt.Get("Array").ToObject(h.rt).Get("prototype").ToObject(h.rt))
	_ = o.Set("Apply", func(call goja.FunctionCall) goja.Value {
		ins, first, feed := h.customInputs(call.Argument(0), "Apply")
		fn, ok := goja.AssertFunction(call.Argument(1))
		if !ok {
			h.throw("Apply: expected a function of the inputs' values at one bar (and the bar's index)")
		}
		first += h.params(call, 2, "Apply").periodOrZero("warmup")
		n := len(h.eng.Feeds()[feed].Bars)
		vals := make([]float64, n)
		args := make([]goja.Value, len(ins)+1)
		var w *watching // in a run of the look-ahead check: the bar the function is called for
		if h.tracer != nil {
			w = &h.tracer.arrays
			defer func(f, b int) { w.applyFeed, w.applyBar = f, b }(w.applyFeed, w.applyBar)
			w.applyFeed = feed
		}
		for i := max(first, 0); i < n; i++ {
			for k, l := range ins {
				args[k] = h.rt.ToValue(l.vals[i])
			}
			args[len(ins)] = h.rt.ToValue(i)
			if w != nil {
				w.applyBar = i
			}
			v, err := fn(goja.Undefined(), args...)
			if err != nil {
				panic(err) // the strategy's own exception
			}
			vals[i] = v.ToFloat()
		}
		return h.output(engine.Custom(vals, first), feed)
	})
	_ = o.Set("Compute", func(call goja.FunctionCall) goja.Value {
		ins, first, feed := h.customInputs(call.Argument(0), "Compute")
		fn, ok := goja.AssertFunction(call.Argument(1))
		if !ok {
			h.throw("Compute: expected a function of the inputs' whole series returning an array")
		}
		args := make([]goja.Value, len(ins))
		if h.tracer != nil {
			// A run of the look-ahead check hands watched arrays (futureread.go); what the
			// function itself reads is judged by its output, as is the host's reading of it.
			w := &h.tracer.arrays
			for k, l := range ins {
				args[k] = h.watchedInput(l.vals, feed, k, len(ins))
			}
			w.inCompute++
			defer func() { w.inCompute-- }()
		} else {
			for k, l := range ins {
				arr := make([]any, len(l.vals))
				for i, v := range l.vals {
					arr[i] = v
				}
				args[k] = h.rt.NewArray(arr...)
			}
		}
		v, err := fn(goja.Undefined(), args...)
		if err != nil {
			panic(err)
		}
		out, ok := v.(*goja.Object)
		n := len(h.eng.Feeds()[feed].Bars)
		if !ok || out.Get("length") == nil || int(out.Get("length").ToInteger()) != n {
			h.throw("Compute: the function must return an array of %d values, one per bar", n)
		}
		vals := make([]float64, n)
		start := -1
		for i := range vals {
			vals[i] = out.Get(strconv.Itoa(i)).ToFloat()
			if start < 0 && i >= first && !math.IsNaN(vals[i]) {
				start = i
			}
		}
		if start < 0 {
			start = n
		}
		return h.output(engine.Custom(vals, start), feed)
	})
}

// customInputs reads ind.Apply's and ind.Compute's inputs: a line or an array of lines of
// one feed. first is the first bar where all have values.
func (h *host) customInputs(v goja.Value, name string) (ins []*line, first, feed int) {
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Array" && !isLine(o) {
		n := int(o.Get("length").ToInteger())
		for i := 0; i < n; i++ {
			ins = append(ins, h.indArg(o.Get(strconv.Itoa(i)), -1, name))
		}
	} else {
		ins = append(ins, h.indArg(v, -1, name))
	}
	if len(ins) == 0 {
		h.throw("%s: give at least one input line", name)
	}
	feed = ins[0].feed
	for k, l := range ins {
		ins[k] = h.alignTo(feed, l)
		first = max(first, ins[k].s.First)
	}
	return ins, first, feed
}

func isLine(o *goja.Object) bool {
	_, ok := o.Export().(*line)
	return ok
}

// lineOp is one of the two-line operations of lineOps: ind.Name(a, b) and a.name(b).
type lineOp struct {
	name string
	f    func(a, b engine.Series) engine.Series
}

// lineOperations are the operations of lineOps, made once for every run.
var lineOperations = func() []lineOp {
	ops := []lineOp{{"Add", engine.Add}, {"Sub", engine.Sub}, {"Mul", engine.Mul}, {"Div", engine.Div}, {"Max", engine.Max}, {"Min", engine.Min}}
	for _, c := range [][2]string{{"Gt", ">"}, {"Ge", ">="}, {"Lt", "<"}, {"Le", "<="}, {"Eq", "=="}, {"Ne", "!="}} {
		ops = append(ops, lineOp{c[0], func(a, b engine.Series) engine.Series { return engine.Compare(a, b, c[1]) }})
	}
	return ops
}()

// lazyFuncs is the ind namespace (and the other host objects of named functions) as a goja
// dynamic object: its functions are Go closures until a strategy first reads one, which
// then becomes a named script function and stays the same object (ind.SMA === ind.SMA).
// Making all of them for every run, when a strategy uses two or three, was about 8% of a
// study's CPU and a fifth of its allocation. A script may still assign and delete
// properties, as on a plain object; it cannot freeze one.
type lazyFuncs struct {
	rt *goja.Runtime
	// The properties in the order defined (Object.keys). A slice, not a map: the host
	// looks a name up only on a script's first read of it, and a run makes some 80 of them.
	props []lazyProp
}

func newLazyFuncs(rt *goja.Runtime, n int) *lazyFuncs {
	return &lazyFuncs{rt: rt, props: make([]lazyProp, 0, n)}
}

type lazyProp struct {
	name string
	fn   any        // a Go function goja.Runtime.ToValue takes, until read
	v    goja.Value // once read, or as assigned
}

func (o *lazyFuncs) find(key string) int {
	for i := range o.props {
		if o.props[i].name == key {
			return i
		}
	}
	return -1
}

// Set defines name (the host's side: it is called like goja.Object.Set).
func (o *lazyFuncs) Set(name string, fn any) error {
	if i := o.find(name); i >= 0 {
		o.props[i] = lazyProp{name: name, fn: fn}
		return nil
	}
	o.props = append(o.props, lazyProp{name: name, fn: fn})
	return nil
}

// Get implements goja.DynamicObject.
func (o *lazyFuncs) Get(key string) goja.Value {
	i := o.find(key)
	if i < 0 {
		return nil
	}
	p := &o.props[i]
	if p.v == nil {
		p.v, p.fn = named(o.rt, key, p.fn), nil
	}
	return p.v
}

// lazyInd is lazyFuncs as the script sees it (its Set is the script's assignment).
type lazyInd struct{ *lazyFuncs }

// Set implements goja.DynamicObject.
func (o lazyInd) Set(key string, v goja.Value) bool {
	if i := o.find(key); i >= 0 {
		o.props[i] = lazyProp{name: key, v: v}
	} else {
		o.props = append(o.props, lazyProp{name: key, v: v})
	}
	return true
}

// Has implements goja.DynamicObject.
func (o *lazyFuncs) Has(key string) bool { return o.find(key) >= 0 }

// Delete implements goja.DynamicObject.
func (o *lazyFuncs) Delete(key string) bool {
	if i := o.find(key); i >= 0 {
		o.props = slices.Delete(o.props, i, i+1)
	}
	return true
}

// Keys implements goja.DynamicObject.
func (o *lazyFuncs) Keys() []string {
	keys := make([]string, len(o.props))
	for i := range o.props {
		keys[i] = o.props[i].name
	}
	return keys
}
