package engine

import "math"

// Backtrader's moving-average families, oscillators, RSI variants and basic operations
// (its basicops, envelope, oscillator, momentum, percentchange, priceoscillator, dpo,
// deviation, rsi, kst, tsi, prettygoodoscillator, trix and lrsi modules), each computed
// over the whole series once with backtrader's formula and warm-up.

// SumN is the exactly rounded sum of the last period values (backtrader's SumN).
func SumN(in Series, period int) Series { return sumN(in, period) }

// ExpSmoothing is backtrader's ExponentialSmoothing: seeded with the mean of the first
// period values, then prev*(1-alpha) + x*alpha.
func ExpSmoothing(in Series, period int, alpha float64) Series {
	return smoothing(in, period, alpha)
}

// Accum is the running sum of the input from seed (backtrader's Accum).
func Accum(in Series, seed float64) Series {
	out := nanSeries(len(in.Vals))
	prev := seed
	for i := in.First; i < len(in.Vals); i++ {
		prev += in.Vals[i]
		out[i] = prev
	}
	return Series{Vals: out, First: in.First}
}

// ApplyN is f of each window of the last period values, oldest first (backtrader's
// ApplyN and the OperationN family).
func ApplyN(in Series, period int, f func(w []float64) float64) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	for i := max(first, 0); i < n; i++ {
		out[i] = f(in.Vals[i-period+1 : i+1])
	}
	return Series{Vals: out, First: first}
}

// ReduceN folds each window of the last period values with f from the oldest, starting
// from init when it is given, else from the oldest value (Python's functools.reduce, as
// backtrader's ReduceN).
func ReduceN(in Series, period int, f func(acc, x float64) float64, init *float64) Series {
	return ApplyN(in, period, func(w []float64) float64 {
		acc, rest := w[0], w[1:]
		if init != nil {
			acc, rest = *init, w
		}
		for _, x := range rest {
			acc = f(acc, x)
		}
		return acc
	})
}

// truthCount is, per bar, 1 when the number of true (non-zero, as Python's bool of a
// float: NaN is true) values among the last period ones passes ok, else 0.
func truthCount(in Series, period int, ok func(trues int) bool) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	trues := 0
	for i := in.First; i < n; i++ {
		if in.Vals[i] != 0 {
			trues++
		}
		if i >= first {
			out[i] = b2f(ok(trues))
			if in.Vals[i-period+1] != 0 {
				trues--
			}
		}
	}
	return Series{Vals: out, First: first}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// AnyN is 1 when any of the last period values is non-zero (backtrader's AnyN).
func AnyN(in Series, period int) Series {
	return truthCount(in, period, func(t int) bool { return t > 0 })
}

// AllN is 1 when all of the last period values are non-zero (backtrader's AllN).
func AllN(in Series, period int) Series {
	return truthCount(in, period, func(t int) bool { return t == period })
}

// FindIndex is how many bars back, among the last period values, the value eval gives of
// them (backtrader's _evalfunc: max, min) is: the most recent such bar when first is set
// (backtrader's FindFirstIndex), else the oldest (FindLastIndex); NaN where none equals it.
func FindIndex(in Series, period int, eval func(w []float64) float64, first bool) Series {
	return ApplyN(in, period, func(w []float64) float64 {
		m := eval(w)
		if first {
			for i := len(w) - 1; i >= 0; i-- {
				if w[i] == m {
					return float64(len(w) - 1 - i)
				}
			}
		}
		for i, v := range w {
			if v == m {
				return float64(len(w) - 1 - i)
			}
		}
		return math.NaN() // Python's next() would raise: no bar holds it
	})
}

// Envelope is src*(1+perc/100) and src*(1-perc/100) (backtrader's EnvelopeMixIn).
func Envelope(src Series, perc float64) (top, bot Series) {
	p := perc / 100.0
	return scale(1.0+p, src), scale(1.0-p, src)
}

// PercentChange is data / data(-period) - 1.
func PercentChange(in Series, period int) Series {
	return mapSeries(Div(in, Delay(in, period)), func(x float64) float64 { return x - 1.0 })
}

// MomentumOscillator is 100 * data / data(-period).
func MomentumOscillator(in Series, period int) Series {
	return scale(100.0, Div(in, Delay(in, period)))
}

// ROC100 is 100 times the rate of change.
func ROC100(in Series, period int) Series { return scale(100.0, ROC(in, period)) }

// UpDay is max(data - data(-period), 0); DownDay max(data(-period) - data, 0).
func UpDay(in Series, period int) Series {
	return binary(in, Delay(in, period), func(c, p float64) float64 { return math.Max(c-p, 0) })
}

// DownDay is max(data(-period) - data, 0).
func DownDay(in Series, period int) Series {
	return binary(in, Delay(in, period), func(c, p float64) float64 { return math.Max(p-c, 0) })
}

// UpDayBool is 1 when data > data(-period), else 0.
func UpDayBool(in Series, period int) Series {
	return binary(in, Delay(in, period), func(c, p float64) float64 { return b2f(c > p) })
}

// DownDayBool is 1 when data(-period) > data, else 0.
func DownDayBool(in Series, period int) Series {
	return binary(in, Delay(in, period), func(c, p float64) float64 { return b2f(p > c) })
}

// RSIOpts are backtrader's RelativeStrengthIndex parameters beyond its period.
type RSIOpts struct {
	MovAv    MovAv
	Lookback int
	// SafeDiv gives the rsi safehigh when only the average loss is 0 and safelow when both
	// are (backtrader's DivZeroByZero); without it the division gives inf or NaN.
	SafeDiv           bool
	SafeHigh, SafeLow float64
}

// RSIWith is backtrader's RelativeStrengthIndex with its moving average, lookback and
// safe division: 100 - 100 / (1 + movav(upday) / movav(downday)).
func RSIWith(in Series, period int, o RSIOpts) Series {
	up := o.MovAv(UpDay(in, o.Lookback), period)
	down := o.MovAv(DownDay(in, o.Lookback), period)
	rsOf := func(rsi float64) float64 { // the rs that gives rsi; 100 gives +inf
		return -100.0/(rsi-100.0) - 1.0
	}
	high, low := rsOf(o.SafeHigh), rsOf(o.SafeLow)
	return binary(up, down, func(u, d float64) float64 {
		rs := u / d
		if o.SafeDiv && d == 0 {
			rs = low
			if u != 0 {
				rs = high
			}
		}
		return 100.0 - 100.0/(1.0+rs)
	})
}

// PriceOsc is ma(period1) - ma(period2) (backtrader's PriceOscillator).
func PriceOsc(in Series, period1, period2 int, ma MovAv) Series {
	return Sub(ma(in, period1), ma(in, period2))
}

// PPO is backtrader's PercentagePriceOscillator: 100 * (ma1 - ma2) / ma2 (ma1 when short),
// its signal ma(ppo, periodSignal) and their difference.
func PPO(in Series, period1, period2, periodSignal int, ma MovAv, short bool) (ppo, signal, histo Series) {
	ma1, ma2 := ma(in, period1), ma(in, period2)
	den := ma2
	if short {
		den = ma1
	}
	ppo = scale(100.0, Div(Sub(ma1, ma2), den))
	signal = ma(ppo, periodSignal)
	return ppo, signal, Sub(ppo, signal)
}

// DPO is the detrended price oscillator: data - ma(data) as of period/2 - 1 bars back
// (backtrader's ma(-period // 2 + 1), rounding down in Python).
func DPO(in Series, period int, ma MovAv) Series {
	return Sub(in, Delay(ma(in, period), (period+1)/2-1))
}

// MeanDeviation is ma(|data - ma(data)|) over period bars.
func MeanDeviation(in Series, period int, ma MovAv) Series {
	absdev := mapSeries(Sub(in, ma(in, period)), math.Abs)
	return ma(absdev, period)
}

// BollingerPct is (data - bot) / (top - bot) (backtrader's BollingerBandsPct's pctb).
func BollingerPct(in, top, bot Series) Series {
	return Div(Sub(in, bot), Sub(top, bot))
}

// KST is Pring's Know Sure Thing: the sum of rfactors[i] * rmovav(ROC100(rp[i]), rma[i])
// and its signal smovav(kst, rsignal).
func KST(in Series, rp, rma [4]int, rfactors []float64, rsignal int, rmovav, smovav MovAv) (kst, signal Series) {
	// Python's zip stops at the shorter of rfactors and the four averages
	for i := range min(4, len(rfactors)) {
		term := scale(rfactors[i], rmovav(ROC100(in, rp[i]), rma[i]))
		if i == 0 {
			kst = term
		} else {
			kst = Add(kst, term)
		}
	}
	if kst.Vals == nil {
		kst = Const(0, len(in.Vals))
	}
	return kst, smovav(kst, rsignal)
}

// TSI is the true strength indicator: 100 * ma(ma(pc, p1), p2) / ma(ma(|pc|, p1), p2)
// with pc = data - data(-pchange).
func TSI(in Series, period1, period2, pchange int, ma MovAv) Series {
	pc := Sub(in, Delay(in, pchange))
	num := ma(ma(pc, period1), period2)
	den := ma(ma(mapSeries(pc, math.Abs), period1), period2)
	return scale(100.0, Div(num, den))
}

// PGO is the pretty good oscillator: (close - ma(close)) / ATR, both over period bars.
func PGO(high, low, close Series, period int, ma MovAv) Series {
	return Div(Sub(close, ma(close, period)), ATR(high, low, close, period))
}

// TrixSignal is Trix (TRIXWith) and its signal, ma(trix, sigperiod).
func TrixSignal(in Series, period, rocperiod, sigperiod int, ma MovAv) (trix, signal Series) {
	trix = TRIXWith(in, period, rocperiod, ma)
	return trix, ma(trix, sigperiod)
}

// laguerre runs Ehlers' four-stage Laguerre filter, its stages 0 before bar first (backtrader's
// LaguerreRSI and LaguerreFilter run it from their minimum period), and calls out with
// each bar's stages.
func laguerre(in Series, first int, gamma float64, out func(i int, l0, l1, l2, l3 float64)) {
	var l0, l1, l2, l3 float64
	g := gamma
	for i := max(first, 0); i < len(in.Vals); i++ {
		l01, l11, l21 := l0, l1, l2
		l0 = (1.0-g)*in.Vals[i] + g*l01
		l1 = -g*l0 + l01 + g*l11
		l2 = -g*l1 + l11 + g*l21
		l3 = -g*l2 + l21 + g*l3
		out(i, l0, l1, l2, l3)
	}
}

// LaguerreRSI is Ehlers' Laguerre RSI: cu / (cu + cd) of the filter's stages (1 when both
// are 0).
func LaguerreRSI(in Series, period int, gamma float64) Series {
	vals := nanSeries(len(in.Vals))
	first := in.First + period - 1
	laguerre(in, first, gamma, func(i int, l0, l1, l2, l3 float64) {
		cu, cd := 0.0, 0.0
		for _, d := range [3]float64{l0 - l1, l1 - l2, l2 - l3} {
			if d >= 0 {
				cu += d
			} else {
				cd -= d
			}
		}
		vals[i] = 1.0
		if den := cu + cd; den != 0 {
			vals[i] = cu / den
		}
	})
	return Series{Vals: vals, First: first}
}

// LaguerreFilter is Ehlers' Laguerre filter: (l0 + 2*l1 + 2*l2 + l3) / 6.
func LaguerreFilter(in Series, period int, gamma float64) Series {
	vals := nanSeries(len(in.Vals))
	first := in.First + period - 1
	laguerre(in, first, gamma, func(i int, l0, l1, l2, l3 float64) {
		vals[i] = (l0 + 2*l1 + 2*l2 + l3) / 6
	})
	return Series{Vals: vals, First: first}
}

// ExpSmoothingDynamic is ExpSmoothing with a line as alpha: seeded with the mean of the
// last period values on the first bar where both it and alpha have one, then
// prev*(1-alpha) + x*alpha bar by bar (backtrader's ExponentialSmoothingDynamic).
func ExpSmoothingDynamic(in Series, period int, alpha Series) Series {
	mean := SMA(in, period)
	n := len(in.Vals)
	out := nanSeries(n)
	first := max(mean.First, alpha.First)
	if first < n {
		prev := mean.Vals[first]
		out[first] = prev
		for i := first + 1; i < n; i++ {
			prev = prev*(1.0-alpha.Vals[i]) + in.Vals[i]*alpha.Vals[i]
			out[i] = prev
		}
	}
	return Series{Vals: out, First: first}
}

// NonZeroDifference is a - b, or its previous value where that is 0 (backtrader's
// NonZeroDifference).
func NonZeroDifference(a, b Series) Series {
	d := Sub(a, b)
	for i := d.First + 1; i < len(d.Vals); i++ {
		if d.Vals[i] == 0 {
			d.Vals[i] = d.Vals[i-1]
		}
	}
	return d
}

// ZeroLagIndicator is Ehlers' error-correcting EMA: per bar, of the gains -gainlimit/10 ..
// gainlimit/10 in steps of 0.1, the ec = alpha*(ema + gain*(price - ec[-1])) + (1-alpha)*ec[-1]
// nearest the price (the EMA itself on the first bar).
func ZeroLagIndicator(in Series, period, gainlimit int) Series {
	ema := EMA(in, period)
	alpha := 2.0 / (1.0 + float64(period))
	alpha1 := 1.0 - alpha
	out := nanSeries(len(in.Vals))
	for i := max(ema.First, 0); i < len(in.Vals); i++ {
		e, price := ema.Vals[i], in.Vals[i]
		best, least := e, float64(math.MaxInt64) // backtrader's MAXINT
		if i > ema.First {
			ec1 := out[i-1]
			for v := -gainlimit; v < gainlimit+1; v++ {
				gain := float64(v) / 10
				ec := alpha*(e+gain*(price-ec1)) + alpha1*ec1
				if err := math.Abs(price - ec); err < least {
					least, best = err, ec
				}
			}
		}
		out[i] = best
	}
	return Series{Vals: out, First: ema.First}
}

// DicksonMA is (ZeroLagIndicator(period, gainlimit) + hma(hperiod)) / 2.
func DicksonMA(in Series, period, gainlimit, hperiod int, hma MovAv) Series {
	return scale(0.5, Add(ZeroLagIndicator(in, period, gainlimit), hma(in, hperiod)))
}
