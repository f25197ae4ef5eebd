package jsrt

import (
	"github.com/backtestd/backtestd/internal/engine"
)

// Backtrader's moving-average families (every moving average's Envelope and Oscillator),
// its price and momentum oscillators, RSI variants and basic operations (basicops), as
// backtrader names them; the computations are internal/engine's (ind_ma.go).
func init() {
	p := func(name string, def int) IndParam { return IndParam{Name: name, Kind: ParamPeriod, Default: def} }
	f := func(name string, def float64) IndParam { return IndParam{Name: name, Kind: ParamFloat, Default: def} }
	ma := func(name, def string) IndParam { return IndParam{Name: name, Kind: ParamMovAv, Default: def} }
	one := func(s engine.Series) []engine.Series { return []engine.Series{s} }
	src := func(in IndIn) engine.Series { return in.Lines[0] }
	periodOp := func(name string, aliases []string, family, ln string, def int, fn func(engine.Series, int) engine.Series) {
		registerInd(IndDef{Name: name, Aliases: aliases, Family: family, Input: InLine,
			Params: []IndParam{p("period", def)}, Lines: []string{ln},
			Compute: func(in IndIn, a IndArgs) []engine.Series { return one(fn(src(in), a.Int("period"))) }})
	}

	// basicops
	periodOp("SumN", nil, "basicops", "sumn", 1, engine.SumN)
	periodOp("Average", []string{"ArithmeticMean", "Mean"}, "basicops", "av", 1, engine.SMA)
	periodOp("AnyN", nil, "basicops", "anyn", 1, engine.AnyN)
	periodOp("AllN", nil, "basicops", "alln", 1, engine.AllN)
	registerInd(IndDef{Name: "Accum", Aliases: []string{"CumSum", "CumulativeSum"}, Family: "basicops", Input: InLine,
		Params: []IndParam{f("seed", 0)}, Lines: []string{"accum"},
		Compute: func(in IndIn, a IndArgs) []engine.Series { return one(engine.Accum(src(in), a.Float("seed"))) }})
	// alpha None (the default) is 2 / (1 + period), as backtrader's
	alpha := func(a IndArgs) float64 {
		if a.Given("alpha") {
			return a.Float("alpha")
		}
		return 2.0 / (1.0 + a.Float("period"))
	}
	registerInd(IndDef{Name: "ExponentialSmoothing", Aliases: []string{"ExpSmoothing"}, Family: "basicops", Input: InLine,
		Params: []IndParam{p("period", 1), {Name: "alpha", Kind: ParamFloat}}, Lines: []string{"av"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.ExpSmoothing(src(in), a.Int("period"), alpha(a)))
		}})
	registerInd(IndDef{Name: "ExponentialSmoothingDynamic", Aliases: []string{"ExpSmoothingDynamic"}, Family: "basicops", Input: InLine,
		Doc:    "exponential smoothing whose alpha, required, is a line of the input's feed",
		Params: []IndParam{p("period", 1), {Name: "alpha", Kind: ParamLine, Required: true}}, Lines: []string{"av"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.ExpSmoothingDynamic(src(in), a.Int("period"), a.Line("alpha")))
		}})
	registerInd(IndDef{Name: "WeightedAverage", Aliases: []string{"AverageWeighted"}, Family: "basicops", Input: InLine,
		Params: []IndParam{p("period", 1), f("coef", 1), {Name: "weights", Kind: ParamList, Default: []float64{}}}, Lines: []string{"av"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			coef, w := a.Float("coef"), a.List("weights")
			return one(engine.ApplyN(src(in), a.Int("period"), func(x []float64) float64 {
				n := min(len(x), len(w)) // Python's map stops at the shorter
				prods := make([]float64, n)
				for i := range n {
					prods[i] = x[i] * w[i]
				}
				return coef * engine.Fsum(prods)
			}))
		}})
	registerInd(IndDef{Name: "ApplyN", Family: "basicops", Input: InLine,
		Params: []IndParam{p("period", 1), {Name: "func", Kind: ParamFunc, Required: true}}, Lines: []string{"apply"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.ApplyN(src(in), a.Int("period"), a.Func("func")))
		}})
	registerInd(IndDef{Name: "ReduceN", Family: "basicops", Input: InLine,
		Doc:        "function folds the window from its oldest value (or initializer) as Python's reduce; a script function gets [accumulated, value]",
		Params:     []IndParam{p("period", 1), {Name: "function", Kind: ParamFunc, Required: true}, {Name: "initializer", Kind: ParamFloat}},
		Positional: []string{"function", "period"}, Lines: []string{"reduced"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			fn := a.Func("function")
			var init *float64
			if a.Given("initializer") {
				v := a.Float("initializer")
				init = &v
			}
			pair := make([]float64, 2)
			return one(engine.ReduceN(src(in), a.Int("period"), func(acc, x float64) float64 {
				pair[0], pair[1] = acc, x
				return fn(pair)
			}, init))
		}})
	for _, c := range []struct {
		name, eval string
		first      bool
	}{{"FindFirstIndex", "", true}, {"FindFirstIndexHighest", "max", true}, {"FindFirstIndexLowest", "min", true},
		{"FindLastIndex", "", false}, {"FindLastIndexHighest", "max", false}, {"FindLastIndexLowest", "min", false}} {
		var def any
		if c.eval != "" {
			def = c.eval
		}
		registerInd(IndDef{Name: c.name, Family: "basicops", Input: InLine,
			Doc:    "bars back to the value _evalfunc (max, min, a function) gives of the last period values",
			Params: []IndParam{p("period", 1), {Name: "_evalfunc", Kind: ParamFunc, Default: def, Required: true}}, Lines: []string{"index"},
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				return one(engine.FindIndex(src(in), a.Int("period"), a.Func("_evalfunc"), c.first))
			}})
	}

	// the moving averages of dma.py and zlind.py; _movav is declared as backtrader's, whose
	// ZeroLagIndicator uses an EMA whatever it is
	registerInd(IndDef{Name: "ZeroLagIndicator", Aliases: []string{"ZLIndicator", "ZLInd", "EC", "ErrorCorrecting"}, Family: "zlind", Input: InLine, MovAv: true,
		Params: []IndParam{p("period", 30), {Name: "gainlimit", Kind: ParamInt, Default: 50}, ma("_movav", "EMA")}, Lines: []string{"ec"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.ZeroLagIndicator(src(in), a.Int("period"), a.Int("gainlimit")))
		}})
	registerInd(IndDef{Name: "DicksonMovingAverage", Aliases: []string{"DMA", "DicksonMA"}, Family: "dma", Input: InLine, MovAv: true,
		Params: []IndParam{p("period", 30), {Name: "gainlimit", Kind: ParamInt, Default: 50}, p("hperiod", 7), ma("_movav", "EMA"), ma("_hma", "HMA")},
		Lines:  []string{"dma"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.DicksonMA(src(in), a.Int("period"), a.Int("gainlimit"), a.Int("hperiod"), engine.MovAv(a.MovAv("_hma"))))
		}})

	// envelope.py and oscillator.py: every moving average's Envelope (its line, top, bot)
	// and Oscillator (data - its line), with its parameters (and perc) and its names + suffix.
	// Not ZeroLagIndicator's: backtrader's give the indicator itself and no bands (its next()
	// overwrites the line the mixins' operations write), which missing.txt says.
	registerInd(IndDef{Name: "Envelope", Family: "envelope", Input: InLine, Params: []IndParam{f("perc", 2.5)},
		Lines: []string{"src", "top", "bot"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			top, bot := engine.Envelope(src(in), a.Float("perc"))
			return []engine.Series{src(in), top, bot}
		}})
	registerInd(IndDef{Name: "Oscillator", Family: "oscillator", Input: InTwoLines, Lines: []string{"osc"},
		Doc: "the first line minus the second",
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			return one(engine.Sub(in.Lines[0], in.Lines[1]))
		}})
	for _, name := range []string{"MovingAverageSimple", "ExponentialMovingAverage", "WeightedMovingAverage", "SmoothedMovingAverage",
		"DoubleExponentialMovingAverage", "TripleExponentialMovingAverage", "HullMovingAverage", "ZeroLagExponentialMovingAverage",
		"AdaptiveMovingAverage", "DicksonMovingAverage"} {
		m := lookupInd(name)
		names := m.names()
		var envAliases, oscAliases []string
		for _, n := range names[1:] {
			envAliases = append(envAliases, n+"Envelope")
			oscAliases = append(oscAliases, n+"Osc", n+"Oscillator")
		}
		oscAliases = append(oscAliases, name+"Osc")
		maArgs := func(a IndArgs) IndArgs { return IndArgs{def: m, vals: a.vals} }
		registerInd(IndDef{Name: name + "Envelope", Aliases: envAliases, Family: "envelope", Input: InLine,
			Params: append(append([]IndParam{}, m.Params...), f("perc", 2.5)), Lines: []string{m.Lines[0], "top", "bot"},
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				line := m.Compute(in, maArgs(a))[0]
				top, bot := engine.Envelope(line, a.Float("perc"))
				return []engine.Series{line, top, bot}
			}})
		registerInd(IndDef{Name: name + "Oscillator", Aliases: oscAliases, Family: "oscillator", Input: InLine,
			Params: append([]IndParam{}, m.Params...), Lines: []string{m.Lines[0]},
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				return one(engine.Sub(src(in), m.Compute(in, maArgs(a))[0]))
			}})
	}

	// momentum.py, percentchange.py, percentrank.py
	registerInd(IndDef{Name: "MomentumOscillator", Aliases: []string{"MomentumOsc"}, Family: "momentum", Input: InLine,
		Params: []IndParam{p("period", 12), f("band", 100)}, Lines: []string{"momosc"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.MomentumOscillator(src(in), a.Int("period")))
		}})
	periodOp("RateOfChange100", []string{"ROC100"}, "momentum", "roc100", 12, engine.ROC100)
	periodOp("PercentChange", []string{"PctChange"}, "percentchange", "pctchange", 30, engine.PercentChange)
	// func without a value is backtrader's own: the fraction of the window below its last value
	registerInd(IndDef{Name: "PercentRank", Aliases: []string{"PctRank"}, Family: "percentrank", Input: InLine,
		Params: []IndParam{p("period", 50), {Name: "func", Kind: ParamFunc}}, Lines: []string{"pctrank"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			if a.Given("func") {
				return one(engine.ApplyN(src(in), a.Int("period"), a.Func("func")))
			}
			return one(engine.PercentRank(src(in), a.Int("period")))
		}})

	// rsi.py, rmi.py, lrsi.py
	periodOp("UpDay", nil, "rsi", "upday", 1, engine.UpDay)
	periodOp("DownDay", nil, "rsi", "downday", 1, engine.DownDay)
	periodOp("UpDayBool", nil, "rsi", "upday", 1, engine.UpDayBool)
	periodOp("DownDayBool", nil, "rsi", "downday", 1, engine.DownDayBool)
	rsi := rsiCompute
	registerInd(IndDef{Name: "RSI_Safe", Family: "rsi", Input: InLine, Params: rsiParams(14, "SMMA", true, 1), Lines: []string{"rsi"}, Compute: rsi})
	registerInd(IndDef{Name: "RSI_SMA", Aliases: []string{"RSI_Cutler"}, Family: "rsi", Input: InLine, Params: rsiParams(14, "SMA", false, 1), Lines: []string{"rsi"}, Compute: rsi})
	registerInd(IndDef{Name: "RSI_EMA", Family: "rsi", Input: InLine, Params: rsiParams(14, "EMA", false, 1), Lines: []string{"rsi"}, Compute: rsi})
	registerInd(IndDef{Name: "RelativeMomentumIndex", Aliases: []string{"RMI"}, Family: "rmi", Input: InLine, Params: rsiParams(20, "SMMA", false, 5),
		Lines: []string{"rsi"}, CompatLines: map[string]string{"rmi": "rsi"}, Compute: rsi})
	registerInd(IndDef{Name: "LaguerreRSI", Aliases: []string{"LRSI"}, Family: "lrsi", Input: InLine,
		Params: []IndParam{f("gamma", 0.5), p("period", 6)}, Lines: []string{"lrsi"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.LaguerreRSI(src(in), a.Int("period"), a.Float("gamma")))
		}})
	registerInd(IndDef{Name: "LaguerreFilter", Aliases: []string{"LAGF"}, Family: "lrsi", Input: InLine,
		Params: []IndParam{p("period", 1), f("gamma", 0.5)}, Lines: []string{"lfilter"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.LaguerreFilter(src(in), a.Int("period"), a.Float("gamma")))
		}})

	// priceoscillator.py, dpo.py, deviation.py, bollinger.py, trix.py, kst.py, tsi.py,
	// prettygoodoscillator.py, crossover.py
	poParams := []IndParam{p("period1", 12), p("period2", 26), ma("_movav", "EMA")}
	registerInd(IndDef{Name: "PriceOscillator", Aliases: []string{"PriceOsc", "AbsolutePriceOscillator", "APO", "AbsPriceOsc"}, Family: "priceoscillator", Input: InLine,
		Params: poParams, Lines: []string{"po"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.PriceOsc(src(in), a.Int("period1"), a.Int("period2"), engine.MovAv(a.MovAv("_movav"))))
		}})
	ppo := func(short bool) func(IndIn, IndArgs) []engine.Series {
		return func(in IndIn, a IndArgs) []engine.Series {
			x, sig, h := engine.PPO(src(in), a.Int("period1"), a.Int("period2"), a.Int("period_signal"), engine.MovAv(a.MovAv("_movav")), short)
			return []engine.Series{x, sig, h}
		}
	}
	ppoParams := append(append([]IndParam{}, poParams...), p("period_signal", 9))
	registerInd(IndDef{Name: "PercentagePriceOscillator", Aliases: []string{"PPO", "PercPriceOsc"}, Family: "priceoscillator", Input: InLine,
		Params: ppoParams, Lines: []string{"ppo", "signal", "histo"}, Compute: ppo(false)})
	registerInd(IndDef{Name: "PercentagePriceOscillatorShort", Aliases: []string{"PPOShort", "PercPriceOscShort"}, Family: "priceoscillator", Input: InLine,
		Params: ppoParams, Lines: []string{"ppo", "signal", "histo"}, Compute: ppo(true)})
	registerInd(IndDef{Name: "DetrendedPriceOscillator", Aliases: []string{"DPO"}, Family: "dpo", Input: InLine,
		Params: []IndParam{p("period", 20), ma("movav", "SMA")}, Lines: []string{"dpo"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.DPO(src(in), a.Int("period"), engine.MovAv(a.MovAv("movav"))))
		}})
	registerInd(IndDef{Name: "MeanDeviation", Aliases: []string{"MeanDev"}, Family: "deviation", Input: InLine,
		Params: []IndParam{p("period", 20), ma("movav", "SMA")}, Lines: []string{"meandev"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.MeanDeviation(src(in), a.Int("period"), engine.MovAv(a.MovAv("movav"))))
		}})
	bb := lookupInd("BollingerBands")
	registerInd(IndDef{Name: "BollingerBandsPct", Family: "bollinger", Input: InLine,
		Params: append([]IndParam{}, bb.Params...), Lines: []string{"mid", "top", "bot", "pctb"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			l := bb.Compute(in, IndArgs{def: bb, vals: a.vals})
			return []engine.Series{l[0], l[1], l[2], engine.BollingerPct(src(in), l[1], l[2])}
		}})
	registerInd(IndDef{Name: "TrixSignal", Family: "trix", Input: InLine,
		Params: []IndParam{p("period", 15), p("_rocperiod", 1), ma("_movav", "EMA"), p("sigperiod", 9)}, Lines: []string{"trix", "signal"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			t, s := engine.TrixSignal(src(in), a.Int("period"), a.Int("_rocperiod"), a.Int("sigperiod"), engine.MovAv(a.MovAv("_movav")))
			return []engine.Series{t, s}
		}})
	registerInd(IndDef{Name: "KnowSureThing", Aliases: []string{"KST"}, Family: "kst", Input: InLine,
		Params: []IndParam{p("rp1", 10), p("rp2", 15), p("rp3", 20), p("rp4", 30), p("rma1", 10), p("rma2", 10), p("rma3", 10), p("rma4", 10),
			p("rsignal", 9), {Name: "rfactors", Kind: ParamList, Default: []float64{1, 2, 3, 4}}, ma("_rmovav", "SMA"), ma("_smovav", "SMA")},
		Lines: []string{"kst", "signal"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			k, s := engine.KST(src(in), [4]int{a.Int("rp1"), a.Int("rp2"), a.Int("rp3"), a.Int("rp4")},
				[4]int{a.Int("rma1"), a.Int("rma2"), a.Int("rma3"), a.Int("rma4")}, a.List("rfactors"), a.Int("rsignal"),
				engine.MovAv(a.MovAv("_rmovav")), engine.MovAv(a.MovAv("_smovav")))
			return []engine.Series{k, s}
		}})
	registerInd(IndDef{Name: "TrueStrengthIndicator", Aliases: []string{"TSI"}, Family: "tsi", Input: InLine,
		Params: []IndParam{p("period1", 25), p("period2", 13), p("pchange", 1), ma("_movav", "EMA")}, Lines: []string{"tsi"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.TSI(src(in), a.Int("period1"), a.Int("period2"), a.Int("pchange"), engine.MovAv(a.MovAv("_movav"))))
		}})
	registerInd(IndDef{Name: "PrettyGoodOscillator", Aliases: []string{"PGO", "PrettyGoodOsc"}, Family: "prettygoodoscillator", Input: InFeed,
		Params: []IndParam{p("period", 14), ma("_movav", "SMA")}, Lines: []string{"pgo"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return one(engine.PGO(in.High, in.Low, in.Close, a.Int("period"), engine.MovAv(a.MovAv("_movav"))))
		}})
	registerInd(IndDef{Name: "NonZeroDifference", Aliases: []string{"NZD"}, Family: "crossover", Input: InTwoLines, Lines: []string{"nzd"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			return one(engine.NonZeroDifference(in.Lines[0], in.Lines[1]))
		}})
}

// rsiParams are backtrader's RelativeStrengthIndex parameters with the defaults of one of
// its variants.
func rsiParams(period int, movav string, safediv bool, lookback int) []IndParam {
	f := func(name string, def float64) IndParam { return IndParam{Name: name, Kind: ParamFloat, Default: def} }
	return []IndParam{{Name: "period", Kind: ParamPeriod, Default: period}, {Name: "movav", Kind: ParamMovAv, Default: movav},
		f("upperband", 70), f("lowerband", 30), {Name: "safediv", Kind: ParamBool, Default: safediv}, f("safehigh", 100), f("safelow", 50),
		{Name: "lookback", Kind: ParamPeriod, Default: lookback}}
}

// rsiCompute is backtrader's RelativeStrengthIndex (and its variants) of rsiParams.
func rsiCompute(in IndIn, a IndArgs) []engine.Series {
	return []engine.Series{engine.RSIWith(in.Lines[0], a.Int("period"), engine.RSIOpts{MovAv: engine.MovAv(a.MovAv("movav")),
		Lookback: a.Int("lookback"), SafeDiv: a.Bool("safediv"), SafeHigh: a.Float("safehigh"), SafeLow: a.Float("safelow")})}
}
