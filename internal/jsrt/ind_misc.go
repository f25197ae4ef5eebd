package jsrt

import "github.com/backtestd/backtestd/internal/engine"

// Backtrader's oscillators of Bill Williams, the rest of its Aroon, true-range and
// directional-movement families, DV2, Heikin-Ashi and haDelta, Hurst, the OLS indicators,
// pivot points, the fast and full stochastics, Vortex, Williams' A/D and the Fractal
// study, each computed by internal/engine (ind_misc.go) over the whole series.
func init() {
	p := func(name string, def int) IndParam { return IndParam{Name: name, Kind: ParamPeriod, Default: def} }
	f := func(name string, def float64) IndParam { return IndParam{Name: name, Kind: ParamFloat, Default: def} }
	b := func(name string, def bool) IndParam { return IndParam{Name: name, Kind: ParamBool, Default: def} }
	ma := func(name, def string) IndParam { return IndParam{Name: name, Kind: ParamMovAv, Default: def} }
	band := func(up, low float64) []IndParam { return []IndParam{f("upperband", up), f("lowerband", low)} }
	mv := func(a IndArgs, name string) engine.MovAv { return engine.MovAv(a.MovAv(name)) }
	series := func(s ...engine.Series) []engine.Series { return s }

	registerInd(IndDef{Name: "AwesomeOscillator", Aliases: []string{"AO", "AwesomeOsc"}, Family: "awesomeoscillator", Input: InFeed,
		Params: []IndParam{p("fast", 5), p("slow", 34), ma("movav", "SMA")}, Lines: []string{"ao"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return series(engine.AwesomeOscillator(in.High, in.Low, a.Int("fast"), a.Int("slow"), mv(a, "movav")))
		}})
	registerInd(IndDef{Name: "AccelerationDecelerationOscillator", Aliases: []string{"AccDeOsc"}, Family: "accdecoscillator", Input: InFeed,
		Params: []IndParam{p("period", 5), ma("movav", "SMA")}, Lines: []string{"accde"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return series(engine.AccDecOscillator(in.High, in.Low, a.Int("period"), mv(a, "movav")))
		}})

	aroon := func(name string, aliases, lines []string, pick func(up, down, osc engine.Series) []engine.Series) {
		registerInd(IndDef{Name: name, Aliases: aliases, Family: "aroon", Input: InFeed,
			Params: append([]IndParam{p("period", 14)}, band(70, 30)...), Lines: lines,
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				return pick(engine.Aroon(in.High, in.Low, a.Int("period")))
			}})
	}
	aroon("AroonUp", nil, []string{"aroonup"}, func(up, _, _ engine.Series) []engine.Series { return series(up) })
	aroon("AroonDown", nil, []string{"aroondown"}, func(_, down, _ engine.Series) []engine.Series { return series(down) })
	aroon("AroonUpDown", []string{"AroonIndicator"}, []string{"aroonup", "aroondown"},
		func(up, down, _ engine.Series) []engine.Series { return series(up, down) })
	aroon("AroonOscillator", []string{"AroonOsc"}, []string{"aroonosc"}, func(_, _, osc engine.Series) []engine.Series { return series(osc) })

	registerInd(IndDef{Name: "TrueHigh", Family: "atr", Input: InFeed, Lines: []string{"truehigh"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series { return series(engine.TrueHigh(in.High, in.Close)) }})
	registerInd(IndDef{Name: "TrueLow", Family: "atr", Input: InFeed, Lines: []string{"truelow"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series { return series(engine.TrueLow(in.Low, in.Close)) }})
	registerInd(IndDef{Name: "UpMove", Family: "directionalmove", Input: InLine, Lines: []string{"upmove"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series { return series(engine.UpMove(in.Lines[0])) }})
	registerInd(IndDef{Name: "DownMove", Family: "directionalmove", Input: InLine, Lines: []string{"downmove"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series { return series(engine.DownMove(in.Lines[0])) }})

	dm := func(name string, aliases, lines []string, pick func(plus, minus, adx, adxr engine.Series) []engine.Series) {
		registerInd(IndDef{Name: name, Aliases: aliases, Family: "directionalmove", Input: InFeed,
			Params: []IndParam{p("period", 14), ma("movav", "SMMA")}, Lines: lines,
			Compute: func(in IndIn, a IndArgs) []engine.Series {
				return pick(engine.DirectionalMovement(in.High, in.Low, in.Close, a.Int("period"), mv(a, "movav")))
			}})
	}
	dm("DirectionalIndicator", []string{"DI"}, []string{"plusDI", "minusDI"},
		func(plus, minus, _, _ engine.Series) []engine.Series { return series(plus, minus) })
	dm("PlusDirectionalIndicator", []string{"PlusDI"}, []string{"plusDI"},
		func(plus, _, _, _ engine.Series) []engine.Series { return series(plus) })
	dm("MinusDirectionalIndicator", []string{"MinusDI"}, []string{"minusDI"},
		func(_, minus, _, _ engine.Series) []engine.Series { return series(minus) })
	// backtrader's alias DMI stays DirectionalMovement's (ind.DMI before the registry)
	dm("DirectionalMovementIndex", nil, []string{"adx", "plusDI", "minusDI"},
		func(plus, minus, adx, _ engine.Series) []engine.Series { return series(adx, plus, minus) })
	dm("AverageDirectionalMovementIndexRating", []string{"ADXR"}, []string{"adx", "adxr"},
		func(_, _, adx, adxr engine.Series) []engine.Series { return series(adx, adxr) })

	registerInd(IndDef{Name: "DV2", Family: "dv2", Input: InFeed,
		Params: []IndParam{p("period", 252), p("maperiod", 2), ma("_movav", "SMA")}, Lines: []string{"dv2"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			return series(engine.DV2(in.High, in.Low, in.Close, a.Int("period"), a.Int("maperiod"), mv(a, "_movav")))
		}})
	registerInd(IndDef{Name: "HeikinAshi", Family: "heikinashi", Input: InFeed,
		Lines:       []string{"ha_open", "ha_high", "ha_low", "ha_close"},
		CompatLines: map[string]string{"open": "ha_open", "high": "ha_high", "low": "ha_low", "close": "ha_close"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			o, h, l, c := engine.HeikinAshiLines(in.Open, in.High, in.Low, in.Close)
			return series(o, h, l, c)
		}})
	registerInd(IndDef{Name: "haDelta", Aliases: []string{"haD"}, Family: "hadelta", Input: InFeed,
		Params: []IndParam{p("period", 3), ma("movav", "SMA"), b("autoheikin", true)}, Lines: []string{"haDelta", "smoothed"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			d, s := engine.HaDelta(in.Open, in.High, in.Low, in.Close, a.Int("period"), mv(a, "movav"), a.Bool("autoheikin"))
			return series(d, s)
		}})
	registerInd(IndDef{Name: "HurstExponent", Aliases: []string{"Hurst"}, Family: "hurst", Input: InLine,
		Params: []IndParam{p("period", 40), {Name: "lag_start", Kind: ParamPeriod}, {Name: "lag_end", Kind: ParamPeriod}},
		Lines:  []string{"hurst"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			lag := func(name string) int { // backtrader's None: the engine's default
				if a.Given(name) {
					return a.Int(name)
				}
				return 0
			}
			return series(engine.Hurst(in.Lines[0], a.Int("period"), lag("lag_start"), lag("lag_end")))
		}})

	pivot := []IndParam{b("open", false), b("close", false), b("_autoplot", true)}
	levels := []IndParam{f("level1", 0.382), f("level2", 0.618), f("level3", 1.0)}
	registerInd(IndDef{Name: "PivotPoint", Family: "pivotpoint", Input: InFeed, Params: pivot,
		Lines: []string{"p", "s1", "s2", "r1", "r2"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			pp, s1, s2, r1, r2 := engine.PivotPoint(in.Open, in.High, in.Low, in.Close, a.Bool("open"), a.Bool("close"))
			return series(pp, s1, s2, r1, r2)
		}})
	registerInd(IndDef{Name: "FibonacciPivotPoint", Family: "pivotpoint", Input: InFeed, Params: append(append([]IndParam{}, pivot...), levels...),
		Lines: []string{"p", "s1", "s2", "s3", "r1", "r2", "r3"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			pp, s1, s2, s3, r1, r2, r3 := engine.FibonacciPivotPoint(in.Open, in.High, in.Low, in.Close, a.Bool("open"), a.Bool("close"),
				a.Float("level1"), a.Float("level2"), a.Float("level3"))
			return series(pp, s1, s2, s3, r1, r2, r3)
		}})
	// backtrader declares open, close and the levels for DemarkPivotPoint and uses none.
	registerInd(IndDef{Name: "DemarkPivotPoint", Family: "pivotpoint", Input: InFeed, Params: append(append([]IndParam{}, pivot...), levels...),
		Lines: []string{"p", "s1", "r1"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series {
			pp, s1, r1 := engine.DemarkPivotPoint(in.Open, in.High, in.Low, in.Close)
			return series(pp, s1, r1)
		}})

	stoch := []IndParam{p("period", 14), p("period_dfast", 3), ma("movav", "SMA"), f("upperband", 80), f("lowerband", 20),
		b("safediv", false), f("safezero", 0)}
	registerInd(IndDef{Name: "StochasticFast", Family: "stochastic", Input: InFeed, Params: stoch,
		Lines: []string{"percK", "percD"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			k := stochFast(in, a.Int("period"), a.Bool("safediv"), a.Float("safezero"))
			return series(k, a.MovAv("movav")(k, a.Int("period_dfast")))
		}})
	registerInd(IndDef{Name: "StochasticFull", Family: "stochastic", Input: InFeed, Params: append(append([]IndParam{}, stoch...), p("period_dslow", 3)),
		Lines: []string{"percK", "percD", "percDSlow"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			m := a.MovAv("movav")
			k := stochFast(in, a.Int("period"), a.Bool("safediv"), a.Float("safezero"))
			d := m(k, a.Int("period_dfast"))
			return series(k, d, m(d, a.Int("period_dslow")))
		}})

	registerInd(IndDef{Name: "Vortex", Family: "contrib.vortex", Input: InFeed, Params: []IndParam{p("period", 14)},
		Lines: []string{"vi_plus", "vi_minus"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			plus, minus := engine.Vortex(in.High, in.Low, in.Close, a.Int("period"))
			return series(plus, minus)
		}})
	registerInd(IndDef{Name: "WilliamsAD", Family: "williams", Input: InFeed, Lines: []string{"ad"},
		Compute: func(in IndIn, _ IndArgs) []engine.Series { return series(engine.WilliamsAD(in.High, in.Low, in.Close)) }})
	registerInd(IndDef{Name: "Fractal", Family: "fractal", Input: InFeed,
		Doc:         "backtrader's Fractal study: a value is written two bars back, so the lines read the future (for charts; the look-ahead check flags a strategy that trades on them)",
		Params:      []IndParam{p("period", 5), f("bardist", 0.015), {Name: "shift_to_potential_fractal", Kind: ParamInt, Default: 2}},
		Lines:       []string{"fractal_bearish", "fractal_bullish"},
		FutureLines: []string{"fractal_bearish", "fractal_bullish"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			be, bu := engine.Fractal(in.High, in.Low, a.Int("period"), a.Float("bardist"), a.Int("shift_to_potential_fractal"))
			return series(be, bu)
		}})

	registerInd(IndDef{Name: "OLS_Slope_InterceptN", Family: "ols", Input: InTwoLines, Params: []IndParam{p("period", 10)},
		Lines: []string{"slope", "intercept"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			s, i := engine.OLSSlopeIntercept(in.Lines[0], in.Lines[1], a.Int("period"))
			return series(s, i)
		}})
	registerInd(IndDef{Name: "CointN", Family: "ols", Input: InTwoLines,
		Doc:    "statsmodels' coint (Engle-Granger) over period bars: score and p-value",
		Params: []IndParam{p("period", 10), {Name: "trend", Kind: ParamString, Default: "c", Options: []string{"c", "ct", "ctt", "n"}}},
		Lines:  []string{"score", "pvalue"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			s, pv := engine.Coint(in.Lines[0], in.Lines[1], a.Int("period"), a.Str("trend"))
			return series(s, pv)
		}})
	registerInd(IndDef{Name: "OLS_TransformationN", Family: "ols", Input: InTwoLines, Params: []IndParam{p("period", 10)},
		Lines: []string{"spread", "spread_mean", "spread_std", "zscore"},
		Compute: func(in IndIn, a IndArgs) []engine.Series {
			s, m, sd, z := engine.OLSTransformation(in.Lines[0], in.Lines[1], a.Int("period"))
			return series(s, m, sd, z)
		}})
}
