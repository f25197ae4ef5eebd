package jsrt

import (
	"math"

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

func (h *host) period(call goja.FunctionCall, i int, def int, name string) int {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 1 || f > 1e7 {
		h.throw("%s: period must be a positive integer, got %s", name, v.String())
	}
	return int(f)
}

func (h *host) fnum(call goja.FunctionCall, i int, def float64) float64 {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	return v.ToFloat()
}

// output registers s as a line of feed and returns its script object.
func (h *host) output(s engine.Series, feed int) *goja.Object {
	h.eng.RequireMinPeriod(feed, s.First+1)
	return h.rt.NewDynamicArray(newLine(h.rt, s, feed, h.eng.IndicatorCursor(feed)))
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

func (h *host) sameFeed(name string, ls ...*line) int {
	f := ls[0].feed
	for _, l := range ls[1:] {
		if l.feed != f {
			h.throw("%s: inputs come from different data feeds", name)
		}
	}
	return f
}

func (h *host) indObject() *goja.Object {
	o := h.rt.NewObject()
	one := func(name string, def int, f func(engine.Series, int) engine.Series) {
		_ = o.Set(name, func(call goja.FunctionCall) goja.Value {
			in := h.indArg(call.Argument(0), -1, name)
			return h.output(f(in.s, h.period(call, 1, def, name)), in.feed)
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

	_ = o.Set("MACD", func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "MACD")
		m, s, hi := engine.MACD(in.s, h.period(call, 1, 12, "MACD"), h.period(call, 2, 26, "MACD"), h.period(call, 3, 9, "MACD"))
		return h.multi(in.feed, []string{"macd", "signal", "histo"}, m, s, hi)
	})
	boll := func(call goja.FunctionCall) goja.Value {
		in := h.indArg(call.Argument(0), -1, "BollingerBands")
		mid, top, bot := engine.Bollinger(in.s, h.period(call, 1, 20, "BollingerBands"), h.fnum(call, 2, 2.0))
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
		return h.output(engine.ATR(hi.s, lo.s, cl.s, h.period(call, 1, 14, "ATR")), cl.feed)
	})
	_ = o.Set("TrueRange", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "TrueRange")
		return h.output(engine.TrueRange(hi.s, lo.s, cl.s), cl.feed)
	})
	_ = o.Set("Stochastic", func(call goja.FunctionCall) goja.Value {
		hi, lo, cl := hlc(call, "Stochastic")
		k, d := engine.Stochastic(hi.s, lo.s, cl.s, h.period(call, 1, 14, "Stochastic"), h.period(call, 2, 3, "Stochastic"), h.period(call, 3, 3, "Stochastic"))
		return h.multi(cl.feed, []string{"k", "d"}, k, d)
	})
	two := func(name string, f func(a, b engine.Series) engine.Series) {
		_ = o.Set(name, func(call goja.FunctionCall) goja.Value {
			a := h.indArg(call.Argument(0), -1, name)
			b := h.indArg(call.Argument(1), a.feed, name)
			feed := h.sameFeed(name, a, b)
			return h.output(f(a.s, b.s), feed)
		})
	}
	two("CrossOver", engine.CrossOver)
	two("CrossUp", engine.CrossUp)
	two("CrossDown", engine.CrossDown)
	nameFunctions(h.rt, o)
	return o
}
