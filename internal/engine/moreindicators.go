package engine

import "math"

// The indicators below follow backtrader's formulas and warm-up (its indicators of the
// same names), pinned by testdata/backtrader/indicators; Donchian, Keltner, OBV and
// StochRSI, which backtrader lacks, follow the common definitions documented with them.

// mapSeries is f(x) bar by bar.
func mapSeries(in Series, f func(x float64) float64) Series {
	out := nanSeries(len(in.Vals))
	for i := in.First; i < len(in.Vals); i++ {
		out[i] = f(in.Vals[i])
	}
	return Series{Vals: out, First: in.First}
}

// scale is k*x bar by bar.
func scale(k float64, in Series) Series {
	return mapSeries(in, func(x float64) float64 { return k * x })
}

// sumN is the exactly rounded sum of the last period values (backtrader's SumN, fsum).
func sumN(in Series, period int) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	if period < 1 || first >= n {
		return Series{Vals: out, First: max(first, 0)}
	}
	var acc exactSum
	acc.partials = make([]float64, 0, 8)
	for i := in.First; i < n; i++ {
		acc.add(in.Vals[i])
		if i >= first {
			out[i] = acc.value()
			acc.remove(in.Vals[i-period+1])
		}
	}
	return Series{Vals: out, First: first}
}

// DEMA is the double exponential moving average: 2*ema - ema(ema).
func DEMA(in Series, period int) Series { return DEMAWith(in, period, EMA) }

// DEMAWith is DEMA over another moving average (backtrader's _movav): 2*ma - ma(ma).
func DEMAWith(in Series, period int, ma MovAv) Series {
	e := ma(in, period)
	return Sub(scale(2.0, e), ma(e, period))
}

// TEMA is the triple exponential moving average: 3*ema1 - 3*ema2 + ema3.
func TEMA(in Series, period int) Series { return TEMAWith(in, period, EMA) }

// TEMAWith is TEMA over another moving average (backtrader's _movav).
func TEMAWith(in Series, period int, ma MovAv) Series {
	e1 := ma(in, period)
	e2 := ma(e1, period)
	e3 := ma(e2, period)
	return Add(Sub(scale(3.0, e1), scale(3.0, e2)), e3)
}

// HMA is the Hull moving average: wma(2*wma(period/2) - wma(period), sqrt(period)).
func HMA(in Series, period int) Series { return HMAWith(in, period, WMA) }

// HMAWith is HMA over another moving average than the WMA (backtrader's _movav).
func HMAWith(in Series, period int, ma MovAv) Series {
	w := ma(in, period)
	w2 := scale(2.0, ma(in, period/2))
	return ma(Sub(w2, w), int(math.Sqrt(float64(period))))
}

// ZLEMA is the zero-lag EMA: ema(2*x - x(-lag)), lag = (period-1)/2.
func ZLEMA(in Series, period int) Series { return ZLEMAWith(in, period, EMA) }

// ZLEMAWith is ZLEMA over another moving average (backtrader's _movav).
func ZLEMAWith(in Series, period int, ma MovAv) Series {
	lag := (period - 1) / 2
	return ma(Sub(scale(2.0, in), Delay(in, lag)), period)
}

// TRIX is the one-bar rate of change, in percent, of a triple EMA.
func TRIX(in Series, period int) Series { return TRIXWith(in, period, 1, EMA) }

// TRIXWith is the rate of change over rocperiod bars, in percent, of a triple ma
// (backtrader's Trix with _rocperiod and _movav).
func TRIXWith(in Series, period, rocperiod int, ma MovAv) Series {
	e3 := ma(ma(ma(in, period), period), period)
	return binary(e3, Delay(e3, rocperiod), func(x, y float64) float64 { return 100.0 * (x/y - 1.0) })
}

// KAMA is Kaufman's adaptive moving average: exponential smoothing whose factor follows
// the efficiency ratio |x - x(-period)| / sum(|x - x(-1)|), between 2/(fast+1) and
// 2/(slow+1), squared; seeded with the mean of the first period values it has.
func KAMA(in Series, period, fast, slow int) Series {
	n := len(in.Vals)
	absdiff := nanSeries(n)
	for i := in.First + 1; i < n; i++ {
		absdiff[i] = math.Abs(in.Vals[i] - in.Vals[i-1])
	}
	vol := sumN(Series{Vals: absdiff, First: in.First + 1}, period)
	dir := Sub(in, Delay(in, period))
	f, s := 2.0/(float64(fast)+1.0), 2.0/(float64(slow)+1.0)
	sc := binary(dir, vol, func(d, v float64) float64 {
		er := math.Abs(d / v)
		x := er*(f-s) + s
		return x * x
	})
	out := nanSeries(n)
	first := sc.First
	if first >= n || first-period+1 < in.First {
		return Series{Vals: out, First: max(first, 0)}
	}
	prev := Fsum(in.Vals[first-period+1:first+1]) / float64(period)
	out[first] = prev
	for i := first + 1; i < n; i++ {
		prev = prev*(1.0-sc.Vals[i]) + in.Vals[i]*sc.Vals[i]
		out[i] = prev
	}
	return Series{Vals: out, First: first}
}

// CCI is the commodity channel index of the typical price (high+low+close)/3:
// (tp - sma(tp)) / (factor * sma(|tp - sma(tp)|)).
func CCI(high, low, close Series, period int, factor float64) Series {
	return CCIWith(high, low, close, period, factor, SMA)
}

// CCIWith is CCI with backtrader's movav (SMA by default) for the mean and the mean
// deviation.
func CCIWith(high, low, close Series, period int, factor float64, ma MovAv) Series {
	tp := binary(binary(high, low, func(h, l float64) float64 { return h + l }), close, func(hl, c float64) float64 { return (hl + c) / 3.0 })
	mean := ma(tp, period)
	dev := Sub(tp, mean)
	absdev := binary(tp, mean, func(x, m float64) float64 { return math.Abs(x - m) })
	meandev := ma(absdev, period)
	return binary(dev, meandev, func(d, m float64) float64 { return d / (factor * m) })
}

// WilliamsR is -100 * (highest high - close) / (highest high - lowest low).
func WilliamsR(high, low, close Series, period int) Series {
	hh, ll := Highest(high, period), Lowest(low, period)
	num := binary(hh, close, func(h, c float64) float64 { return -100.0 * (h - c) })
	return binary(num, Sub(hh, ll), func(x, r float64) float64 { return x / r })
}

// barsSince is, over the last period+1 values, how many bars ago the most recent best
// value came (backtrader's FindFirstIndexHighest/Lowest).
func barsSince(in Series, period int, better func(a, b float64) bool) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	w := period + 1
	first := in.First + w - 1
	for i := first; i < n; i++ {
		best, at := in.Vals[i], 0
		for k := 1; k < w; k++ {
			if v := in.Vals[i-k]; better(v, best) {
				best, at = v, k
			}
		}
		out[i] = float64(at)
	}
	return Series{Vals: out, First: first}
}

// Aroon returns Aroon up, down and the oscillator (up - down): 100 * (period - bars since
// the highest high / lowest low of the last period+1 bars) / period.
func Aroon(high, low Series, period int) (up, down, osc Series) {
	p := float64(period)
	f := func(idx float64) float64 { return (100.0 / p) * (p - idx) }
	hi := barsSince(high, period, func(a, b float64) bool { return a > b })
	lo := barsSince(low, period, func(a, b float64) bool { return a < b })
	up, down = mapSeries(hi, f), mapSeries(lo, f)
	return up, down, Sub(up, down)
}

// UltimateOscillator weighs the buying pressure (close - true low) over the true range
// on three windows, 4:2:1.
func UltimateOscillator(high, low, close Series, p1, p2, p3 int) Series {
	n := len(close.Vals)
	bp := nanSeries(n)
	first := max(low.First, close.First+1)
	for i := first; i < n; i++ {
		bp[i] = close.Vals[i] - math.Min(low.Vals[i], close.Vals[i-1])
	}
	bps := Series{Vals: bp, First: first}
	tr := TrueRange(high, low, close)
	av := func(p int) Series { return Div(sumN(bps, p), sumN(tr, p)) }
	factor := 100.0 / (4.0 + 2.0 + 1.0)
	return Add(Add(scale(4.0*factor, av(p1)), scale(2.0*factor, av(p2))), scale(factor, av(p3)))
}

// DMI returns Wilder's directional movement: +DI, -DI, ADX and ADXR.
func DMI(high, low, close Series, period int) (plusDI, minusDI, adx, adxr Series) {
	return DirectionalMovement(high, low, close, period, SMMA)
}

// DirectionalMovement is DMI with backtrader's movav (SMMA by default) for the true
// range, the directional moves and the ADX.
func DirectionalMovement(high, low, close Series, period int, ma MovAv) (plusDI, minusDI, adx, adxr Series) {
	n := len(close.Vals)
	pdm, mdm := nanSeries(n), nanSeries(n)
	first := max(high.First, low.First) + 1
	for i := first; i < n; i++ {
		up, dn := high.Vals[i]-high.Vals[i-1], low.Vals[i-1]-low.Vals[i]
		pdm[i], mdm[i] = 0, 0
		if up > dn && up > 0 {
			pdm[i] = up
		}
		if dn > up && dn > 0 {
			mdm[i] = dn
		}
	}
	atr := ma(TrueRange(high, low, close), period)
	di := func(dm []float64) Series {
		return binary(ma(Series{Vals: dm, First: first}, period), atr, func(m, a float64) float64 { return 100.0 * m / a })
	}
	plusDI, minusDI = di(pdm), di(mdm)
	dx := binary(plusDI, minusDI, func(p, m float64) float64 { return math.Abs(p-m) / (p + m) })
	adx = scale(100.0, ma(dx, period))
	adxr = binary(adx, Delay(adx, period), func(a, b float64) float64 { return (a + b) / 2.0 })
	return
}

// ParabolicSAR is Wilder's stop and reverse, as backtrader computes it (from the second
// bar; the first trend is up when the second close is not below the first).
func ParabolicSAR(high, low, close Series, af, afmax float64) Series {
	n := len(close.Vals)
	out := nanSeries(n)
	start := max(high.First, low.First, close.First) + 1
	if start >= n {
		return Series{Vals: out, First: start}
	}
	type status struct {
		tr           bool
		sar, ep, acc float64
	}
	var st status
	st.sar = (high.Vals[start] + low.Vals[start]) / 2.0
	st.acc = af
	if close.Vals[start] >= close.Vals[start-1] {
		st.tr, st.ep = false, low.Vals[start-1] // reversed at once into an uptrend
	} else {
		st.tr, st.ep = true, high.Vals[start-1]
	}
	for i := start; i < n; i++ {
		hi, lo := high.Vals[i], low.Vals[i]
		tr, sar := st.tr, st.sar
		var ep, acc float64
		if (tr && sar >= lo) || (!tr && sar <= hi) {
			tr = !tr
			sar = st.ep
			if tr {
				ep = hi
			} else {
				ep = lo
			}
			acc = af
		} else {
			ep, acc = st.ep, st.acc
		}
		out[i] = sar
		if tr {
			if hi > ep {
				ep = hi
				acc = math.Min(acc+af, afmax)
			}
		} else if lo < ep {
			ep = lo
			acc = math.Min(acc+af, afmax)
		}
		sar = sar + acc*(ep-sar)
		if tr {
			if lo1 := low.Vals[i-1]; sar > lo || sar > lo1 {
				sar = math.Min(lo, lo1)
			}
		} else if hi1 := high.Vals[i-1]; sar < hi || sar < hi1 {
			sar = math.Max(hi, hi1)
		}
		st = status{tr: tr, sar: sar, ep: ep, acc: acc}
	}
	return Series{Vals: out, First: start}
}

// Ichimoku returns the tenkan and kijun lines and the two senkou spans, shifted lead bars
// forward (each bar shows the span computed lead bars earlier). The chikou span, the
// close shifted backwards, would read the future and is left out.
func Ichimoku(high, low Series, tenkan, kijun, senkou, lead int) (tenkanSen, kijunSen, spanA, spanB Series) {
	mid := func(p int) Series {
		return binary(Highest(high, p), Lowest(low, p), func(h, l float64) float64 { return (h + l) / 2.0 })
	}
	tenkanSen, kijunSen = mid(tenkan), mid(kijun)
	spanA = Delay(binary(tenkanSen, kijunSen, func(t, k float64) float64 { return (t + k) / 2.0 }), lead)
	spanB = Delay(mid(senkou), lead)
	return
}

// Donchian returns the channel of the highest high and lowest low of the last period bars
// and its middle.
func Donchian(high, low Series, period int) (upper, mid, lower Series) {
	upper, lower = Highest(high, period), Lowest(low, period)
	mid = binary(upper, lower, func(u, l float64) float64 { return (u + l) / 2.0 })
	return
}

// Keltner returns an EMA of the close with bands mult average true ranges around it.
func Keltner(high, low, close Series, period, atrPeriod int, mult float64) (upper, mid, lower Series) {
	mid = EMA(close, period)
	atr := ATR(high, low, close, atrPeriod)
	upper = binary(mid, atr, func(m, a float64) float64 { return m + mult*a })
	lower = binary(mid, atr, func(m, a float64) float64 { return m - mult*a })
	return
}

// OBV is on-balance volume: from 0 on the first bar, the volume added on a bar that closes
// up, subtracted on one that closes down.
func OBV(close, volume Series) Series {
	n := len(close.Vals)
	out := nanSeries(n)
	first := max(close.First, volume.First)
	if first >= n {
		return Series{Vals: out, First: first}
	}
	out[first] = 0
	for i := first + 1; i < n; i++ {
		v := out[i-1]
		switch c, p := close.Vals[i], close.Vals[i-1]; {
		case c > p:
			v += volume.Vals[i]
		case c < p:
			v -= volume.Vals[i]
		}
		out[i] = v
	}
	return Series{Vals: out, First: first}
}

// StochRSI is the stochastic of the RSI, in percent: 100 * (rsi - lowest rsi) / (highest
// rsi - lowest rsi) over period bars.
func StochRSI(in Series, rsiPeriod, period int) Series {
	r := RSI(in, rsiPeriod)
	hh, ll := Highest(r, period), Lowest(r, period)
	num := binary(r, ll, func(x, l float64) float64 { return 100.0 * (x - l) })
	return binary(num, Sub(hh, ll), func(x, d float64) float64 { return x / d })
}
