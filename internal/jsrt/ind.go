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

// indParams reads the parameters of ind.Apply given after its inputs: positionally or as
// one options object (the registry's indicators read theirs with indGiven).
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

func (h *host) indObject() *goja.Object {
	props := indProps()
	o := newLazyFuncs(h.rt, len(props)+len(lineOperations)+2)
	// The registry's hundreds of names cost a run one copy of a slice: each function is
	// made when a strategy first reads its name.
	o.props = append(o.props, props...)
	o.make = func(name string) any { return h.indFunc(name, lookupInd(name)) }
	h.lineOps(o)
	return h.rt.NewDynamicObject(lazyInd{o})
}

// The indicators the engine had before the registry, each under backtrader's class name
// with its aliases (and the project's older names of lines and parameters).
func init() {
	p := func(name string, def int) IndParam { return IndParam{Name: name, Kind: ParamPeriod, Default: def} }
	f := func(name string, def float64) IndParam { return IndParam{Name: name, Kind: ParamFloat, Default: def} }
	ma := func(name, def string) IndParam { return IndParam{Name: name, Kind: ParamMovAv, Default: def} }
	band := func(up, low float64) []IndParam { return []IndParam{f("upperband", up), f("lowerband", low)} }
	line := func(fn func(engine.Series, int) engine.Series) func(IndIn, IndArgs) []engine.Series {
		return func(in IndIn, a IndArgs) []engine.Series { return []engine.Series{fn(in.Lines[0], a.Int("period"))} }
	}
	movav := func(name, family string, aliases []string, ln string, fn func(engine.Series, int) engine.Series) {
		registerInd(IndDef{Name: name, Aliases: aliases, Family: family, Input: InLine, MovAv: true,
			Params: []IndParam{p("period", 30)}, Lines: []string{ln}, Compute: line(fn)})
	}
	movav("MovingAverageSimple", "sma", []string{"SMA", "SimpleMovingAverage"}, "sma", engine.SMA)
	movav("ExponentialMovingAverage", "ema", []string{"EMA", "MovingAverageExponential"}, "ema", engine.EMA)
	movav("WeightedMovingAverage", "wma", []string{"WMA", "MovingAverageWeighted"}, "wma", engine.WMA)
	movav("SmoothedMovingAverage", "smma", []string{"SMMA", "WilderMA", "MovingAverageSmoothed", "MovingAverageWilder", "ModifiedMovingAverage"}, "smma", engine.SMMA)
	// the moving averages of others (backtrader's _movav)
	movavOf := func(name, family string, aliases []string, ln, def string, fn func(engine.Series, int, engine.MovAv) engine.Series) {
		registerInd(IndDef{Name: name, Aliases: aliases, Family: family, Input: InLine, MovAv: true,
			Params: []IndParam{p("period", 30), ma("_movav", def)}, Lines: []string{ln},
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				return []engine.Series{fn(in.Lines[0], a.Int("period"), engine.MovAv(a.MovAv("_movav")))}
			}})
	}
	movavOf("DoubleExponentialMovingAverage", "dema", []string{"DEMA", "MovingAverageDoubleExponential"}, "dema", "EMA", engine.DEMAWith)
	movavOf("TripleExponentialMovingAverage", "dema", []string{"TEMA", "MovingAverageTripleExponential"}, "tema", "EMA", engine.TEMAWith)
	movavOf("HullMovingAverage", "hma", []string{"HMA", "HullMA"}, "hma", "WMA", engine.HMAWith)
	movavOf("ZeroLagExponentialMovingAverage", "zlema", []string{"ZLEMA", "ZeroLagEma"}, "zlema", "EMA", engine.ZLEMAWith)
	registerInd(IndDef{Name: "AdaptiveMovingAverage", Aliases: []string{"KAMA", "MovingAverageAdaptive"}, Family: "kama", Input: InLine, MovAv: true,
		Params: []IndParam{p("period", 30), p("fast", 2), p("slow", 30)}, Lines: []string{"kama"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.KAMA(in.Lines[0], a.Int("period"), a.Int("fast"), a.Int("slow"))}
		}})
	registerInd(IndDef{Name: "Trix", Aliases: []string{"TRIX"}, Family: "trix", Input: InLine,
		Params: []IndParam{p("period", 15), p("_rocperiod", 1), ma("_movav", "EMA")}, Lines: []string{"trix"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.TRIXWith(in.Lines[0], a.Int("period"), a.Int("_rocperiod"), engine.MovAv(a.MovAv("_movav")))}
		}})
	registerInd(IndDef{Name: "RelativeStrengthIndex", Aliases: []string{"RSI", "RSI_SMMA", "RSI_Wilder"}, Family: "rsi", Input: InLine,
		Params: rsiParams(14, "SMMA", false, 1), Positional: []string{"period", "upperband", "lowerband"}, Lines: []string{"rsi"}, Compute: rsiCompute})
	registerInd(IndDef{Name: "Highest", Aliases: []string{"MaxN"}, Family: "basicops", Input: InLine,
		Params: []IndParam{p("period", 1)}, Lines: []string{"highest"}, Compute: line(engine.Highest)})
	registerInd(IndDef{Name: "Lowest", Aliases: []string{"MinN"}, Family: "basicops", Input: InLine,
		Params: []IndParam{p("period", 1)}, Lines: []string{"lowest"}, Compute: line(engine.Lowest)})
	registerInd(IndDef{Name: "RateOfChange", Aliases: []string{"ROC"}, Family: "momentum", Input: InLine,
		Params: []IndParam{p("period", 12)}, Lines: []string{"roc"}, Compute: line(engine.ROC)})
	registerInd(IndDef{Name: "Momentum", Family: "momentum", Input: InLine,
		Params: []IndParam{p("period", 12)}, Lines: []string{"momentum"}, Compute: line(engine.Momentum)})
	registerInd(IndDef{Name: "StandardDeviation", Aliases: []string{"StdDev"}, Family: "deviation", Input: InLine,
		Params: []IndParam{p("period", 20), ma("movav", "SMA"), {Name: "safepow", Kind: ParamBool, Default: true}}, Lines: []string{"stddev"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{stdDev(in.Lines[0], a.MovAv("movav")(in.Lines[0], a.Int("period")), a.MovAv("movav"), a.Int("period"), a.Bool("safepow"))}
		}})
	registerInd(IndDef{Name: "Delay", Family: "project", NotBacktrader: true, Input: InLine,
		Doc:    "the line ago bars back (backtrader's line(-ago))",
		Params: []IndParam{p("ago", 1)}, Lines: []string{"delay"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.Delay(in.Lines[0], a.Int("ago"))}
		}})
	macd := func(in IndIn, a IndArgs) []engine.Series {
		m := a.MovAv("movav")
		x := engine.Sub(m(in.Lines[0], a.Int("period_me1")), m(in.Lines[0], a.Int("period_me2")))
		sig := m(x, a.Int("period_signal"))
		return []engine.Series{x, sig, engine.Sub(x, sig)}
	}
	macdParams := []IndParam{{Name: "period_me1", Kind: ParamPeriod, Default: 12, Compat: []string{"fast"}},
		{Name: "period_me2", Kind: ParamPeriod, Default: 26, Compat: []string{"slow"}},
		{Name: "period_signal", Kind: ParamPeriod, Default: 9, Compat: []string{"signal"}}, ma("movav", "EMA")}
	registerInd(IndDef{Name: "MACD", Family: "macd", Input: InLine, Params: macdParams,
		Lines: []string{"macd", "signal"}, ExtraLines: []string{"histo"}, Compute: macd})
	registerInd(IndDef{Name: "MACDHisto", Aliases: []string{"MACDHistogram"}, Family: "macd", Input: InLine, Params: macdParams,
		Lines: []string{"macd", "signal", "histo"}, Compute: macd})
	registerInd(IndDef{Name: "BollingerBands", Aliases: []string{"BBands", "Bollinger"}, Family: "bollinger", Input: InLine,
		Params: []IndParam{p("period", 20), f("devfactor", 2.0), ma("movav", "SMA")}, Lines: []string{"mid", "top", "bot"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			m, period, dev := a.MovAv("movav"), a.Int("period"), a.Float("devfactor")
			mid := m(in.Lines[0], period)
			sd := stdDev(in.Lines[0], mid, m, period, true)
			top := engine.Add(mid, mapSeries(sd, func(s float64) float64 { return dev * s }))
			bot := engine.Sub(mid, mapSeries(sd, func(s float64) float64 { return dev * s }))
			return []engine.Series{mid, top, bot}
		}})
	registerInd(IndDef{Name: "AverageTrueRange", Aliases: []string{"ATR"}, Family: "atr", Input: InFeed,
		Params: []IndParam{p("period", 14), ma("movav", "SMMA")}, Lines: []string{"atr"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{a.MovAv("movav")(engine.TrueRange(in.High, in.Low, in.Close), a.Int("period"))}
		}})
	registerInd(IndDef{Name: "TrueRange", Aliases: []string{"TR"}, Family: "atr", Input: InFeed, Lines: []string{"tr"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			return []engine.Series{engine.TrueRange(in.High, in.Low, in.Close)}
		}})
	registerInd(IndDef{Name: "Stochastic", Aliases: []string{"StochasticSlow"}, Family: "stochastic", Input: InFeed,
		Params: append(append([]IndParam{p("period", 14), {Name: "period_dfast", Kind: ParamPeriod, Default: 3, Compat: []string{"dfast"}}, ma("movav", "SMA")},
			band(80, 20)...), IndParam{Name: "safediv", Kind: ParamBool, Default: false}, f("safezero", 0),
			IndParam{Name: "period_dslow", Kind: ParamPeriod, Default: 3, Compat: []string{"dslow"}}),
		Positional: []string{"period", "period_dfast", "period_dslow"},
		Lines:      []string{"percK", "percD"}, CompatLines: map[string]string{"k": "percK", "d": "percD"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			m := a.MovAv("movav")
			kfast := stochFast(in, a.Int("period"), a.Bool("safediv"), a.Float("safezero"))
			k := m(kfast, a.Int("period_dfast"))
			return []engine.Series{k, m(k, a.Int("period_dslow"))}
		}})
	for _, c := range []struct {
		name, ln string
		fn       func(a, b engine.Series) engine.Series
	}{{"CrossOver", "crossover", engine.CrossOver}, {"CrossUp", "cross", engine.CrossUp}, {"CrossDown", "cross", engine.CrossDown}} {
		registerInd(IndDef{Name: c.name, Family: "crossover", Input: InTwoLines, Lines: []string{c.ln},
			Compute: func(in IndIn, _ IndArgs) []engine.Series { return []engine.Series{c.fn(in.Lines[0], in.Lines[1])} }})
	}
	registerInd(IndDef{Name: "CommodityChannelIndex", Aliases: []string{"CCI"}, Family: "cci", Input: InFeed,
		Params: append([]IndParam{p("period", 20), f("factor", 0.015), ma("movav", "SMA")}, band(100, -100)...), Lines: []string{"cci"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.CCIWith(in.High, in.Low, in.Close, a.Int("period"), a.Float("factor"), engine.MovAv(a.MovAv("movav")))}
		}})
	registerInd(IndDef{Name: "WilliamsR", Family: "williams", Input: InFeed,
		Params: append([]IndParam{p("period", 14)}, band(-20, -80)...), Lines: []string{"percR"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.WilliamsR(in.High, in.Low, in.Close, a.Int("period"))}
		}})
	registerInd(IndDef{Name: "AroonUpDownOscillator", Aliases: []string{"AroonUpDownOsc", "Aroon"}, Family: "aroon", Input: InFeed,
		Params: append([]IndParam{p("period", 14)}, band(70, 30)...), Lines: []string{"aroonup", "aroondown", "aroonosc"},
		CompatLines: map[string]string{"up": "aroonup", "down": "aroondown", "osc": "aroonosc"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			up, down, osc := engine.Aroon(in.High, in.Low, a.Int("period"))
			return []engine.Series{up, down, osc}
		}})
	registerInd(IndDef{Name: "UltimateOscillator", Family: "ultimateoscillator", Input: InFeed,
		Params: append([]IndParam{p("p1", 7), p("p2", 14), p("p3", 28)}, band(70, 30)...), Lines: []string{"uo"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.UltimateOscillator(in.High, in.Low, in.Close, a.Int("p1"), a.Int("p2"), a.Int("p3"))}
		}})
	// DMI is backtrader's alias of DirectionalMovementIndex (adx, plusDI, minusDI); here it is
	// DirectionalMovement's, which has those lines and adxr, as ind.DMI had before.
	registerInd(IndDef{Name: "DirectionalMovement", Aliases: []string{"DM", "DMI"}, Family: "directionalmove", Input: InFeed,
		Params: []IndParam{p("period", 14), ma("movav", "SMMA")}, Lines: []string{"adx", "adxr", "plusDI", "minusDI"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			plus, minus, adx, adxr := engine.DirectionalMovement(in.High, in.Low, in.Close, a.Int("period"), engine.MovAv(a.MovAv("movav")))
			return []engine.Series{adx, adxr, plus, minus}
		}})
	registerInd(IndDef{Name: "AverageDirectionalMovementIndex", Aliases: []string{"ADX"}, Family: "directionalmove", Input: InFeed,
		Params: []IndParam{p("period", 14), ma("movav", "SMMA")}, Lines: []string{"adx"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			_, _, adx, _ := engine.DirectionalMovement(in.High, in.Low, in.Close, a.Int("period"), engine.MovAv(a.MovAv("movav")))
			return []engine.Series{adx}
		}})
	registerInd(IndDef{Name: "ParabolicSAR", Aliases: []string{"PSAR"}, Family: "psar", Input: InFeed,
		// period is backtrader's warm-up only: values before bar period are NaN (it is 2
		// at least: backtrader needs two bars to start)
		Params: []IndParam{p("period", 2), f("af", 0.02), f("afmax", 0.2)}, Lines: []string{"psar"},
		Positional: []string{"af", "afmax"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.WarmUntil(engine.ParabolicSAR(in.High, in.Low, in.Close, a.Float("af"), a.Float("afmax")), a.Int("period")-1)}
		}})
	// chikou_span is the close chikou bars ahead (backtrader's data.close(chikou)): for
	// charts; a strategy that reads it reads the future, which the look-ahead check flags.
	registerInd(IndDef{Name: "Ichimoku", Family: "ichimoku", Input: InFeed,
		Params:      []IndParam{p("tenkan", 9), p("kijun", 26), p("senkou", 52), p("senkou_lead", 26), p("chikou", 26)},
		Lines:       []string{"tenkan_sen", "kijun_sen", "senkou_span_a", "senkou_span_b", "chikou_span"},
		CompatLines: map[string]string{"tenkan": "tenkan_sen", "kijun": "kijun_sen", "senkouA": "senkou_span_a", "senkouB": "senkou_span_b"},
		FutureLines: []string{"chikou_span"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			tk, kj, sa, sb := engine.Ichimoku(in.High, in.Low, a.Int("tenkan"), a.Int("kijun"), a.Int("senkou"), a.Int("senkou_lead"))
			return []engine.Series{tk, kj, sa, sb, engine.Chikou(in.Close, a.Int("chikou"))}
		}})
	registerInd(IndDef{Name: "StochRSI", Family: "project", NotBacktrader: true, Input: InLine,
		Doc:    "the stochastic of the RSI, in percent: 100 * (rsi - lowest rsi) / (highest rsi - lowest rsi) over period bars",
		Params: []IndParam{p("rsiperiod", 14), p("period", 14)}, Lines: []string{"stochrsi"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return []engine.Series{engine.StochRSI(in.Lines[0], a.Int("rsiperiod"), a.Int("period"))}
		}})
	registerInd(IndDef{Name: "Donchian", Family: "project", NotBacktrader: true, Input: InFeed,
		Doc:    "the highest high and lowest low of the last period bars, and their middle",
		Params: []IndParam{p("period", 20)}, Lines: []string{"upper", "mid", "lower"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			up, mid, low := engine.Donchian(in.High, in.Low, a.Int("period"))
			return []engine.Series{up, mid, low}
		}})
	registerInd(IndDef{Name: "Keltner", Family: "project", NotBacktrader: true, Input: InFeed,
		Doc:    "an EMA of the close with bands mult average true ranges (atrperiod) around it",
		Params: []IndParam{p("period", 20), p("atrperiod", 10), f("mult", 2)}, Lines: []string{"upper", "mid", "lower"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			up, mid, low := engine.Keltner(in.High, in.Low, in.Close, a.Int("period"), a.Int("atrperiod"), a.Float("mult"))
			return []engine.Series{up, mid, low}
		}})
	registerInd(IndDef{Name: "OBV", Family: "project", NotBacktrader: true, Input: InFeed,
		Doc:   "on-balance volume: from 0, the volume added on a bar that closes up, subtracted on one that closes down",
		Lines: []string{"obv"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			return []engine.Series{engine.OBV(in.Close, in.Volume)}
		}})
}

// stdDev is backtrader's StandardDeviation of x about mean (a moving average of x over
// period bars): sqrt(movav(x^2) - mean^2), the difference taken as 0 when below it
// (safepow) or NaN.
func stdDev(x, mean engine.Series, m MovAvFunc, period int, safepow bool) engine.Series {
	sq := mapSeries(x, func(v float64) float64 { return v * v })
	return binarySeries(m(sq, period), mean, func(a, b float64) float64 {
		v := a - b*b
		if v < 0 && safepow {
			v = 0
		}
		return math.Sqrt(v)
	})
}

// stochFast is backtrader's fast %K: 100 * (close - lowest low) / (highest high - lowest
// low) over period bars; with safediv a zero range gives safezero.
func stochFast(in IndIn, period int, safediv bool, safezero float64) engine.Series {
	hh, ll := engine.Highest(in.High, period), engine.Lowest(in.Low, period)
	num, den := engine.Sub(in.Close, ll), engine.Sub(hh, ll)
	return binarySeries(num, den, func(a, b float64) float64 {
		if safediv && b == 0 {
			return safezero
		}
		return 100.0 * (a / b)
	})
}

// mapSeries is f(x) bar by bar from x's first value.
func mapSeries(x engine.Series, f func(float64) float64) engine.Series {
	out := make([]float64, len(x.Vals))
	for i := range out {
		if i < x.First {
			out[i] = math.NaN()
		} else {
			out[i] = f(x.Vals[i])
		}
	}
	return engine.Series{Vals: out, First: x.First}
}

// binarySeries is f(a, b) bar by bar from the later of their first values.
func binarySeries(a, b engine.Series, f func(x, y float64) float64) engine.Series {
	first := max(a.First, b.First)
	out := make([]float64, len(a.Vals))
	for i := range out {
		if i < first {
			out[i] = math.NaN()
		} else {
			out[i] = f(a.Vals[i], b.Vals[i])
		}
	}
	return engine.Series{Vals: out, First: first}
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
	// make makes the function of a property that has neither fn nor v (ind's indicators).
	make func(name string) any
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
		fn := p.fn
		if fn == nil && o.make != nil {
			fn = o.make(key)
		}
		p.v, p.fn = named(o.rt, key, fn), nil
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
