package engine

import (
	"math"
	"slices"
)

// Indicators of backtrader's oscillator, directional-movement, pivot-point, Heikin-Ashi,
// Hurst, OLS and contributed modules (accdecoscillator.py, awesomeoscillator.py, atr.py,
// directionalmove.py, dv2.py, hadelta.py, heikinashi.py, hurst.py, ols.py, pivotpoint.py,
// williams.py, contrib/vortex.py, studies/contrib/fractal.py), each over the whole series
// in one pass and following backtrader's operations in its order, so that its values equal
// backtrader's (testdata/backtrader/indicators/all).

// MovAv is a moving average of a series over period bars (SMA, EMA, SMMA, ...), the kind
// of backtrader's movav parameters.
type MovAv func(in Series, period int) Series

// WarmUntil is in with no value before bar first (a later warm-up, as backtrader's
// ParabolicSAR period).
func WarmUntil(in Series, first int) Series {
	if first <= in.First {
		return in
	}
	out := nanSeries(len(in.Vals))
	copy(out[min(first, len(out)):], in.Vals[min(first, len(in.Vals)):])
	return Series{Vals: out, First: first}
}

// lagged is f(x[i], y[i-1]) from the bar after y's first (backtrader's x - y(-1)).
func lagged(x, y Series, f func(cur, prev float64) float64) Series {
	n := len(x.Vals)
	out := nanSeries(n)
	first := max(x.First, y.First+1)
	for i := first; i < n; i++ {
		out[i] = f(x.Vals[i], y.Vals[i-1])
	}
	return Series{Vals: out, First: first}
}

// AwesomeOscillator is movav(median price, fast) - movav(median price, slow), the median
// price (high + low) / 2.
func AwesomeOscillator(high, low Series, fast, slow int, ma MovAv) Series {
	mp := binary(high, low, func(h, l float64) float64 { return (h + l) / 2.0 })
	return Sub(ma(mp, fast), ma(mp, slow))
}

// AccDecOscillator is ao - movav(ao, period), ao the awesome oscillator with its defaults
// (5, 34, SMA), as backtrader builds it whatever the movav given.
func AccDecOscillator(high, low Series, period int, ma MovAv) Series {
	ao := AwesomeOscillator(high, low, 5, 34, SMA)
	return Sub(ao, ma(ao, period))
}

// TrueHigh is max(high, previous close).
func TrueHigh(high, close Series) Series { return lagged(high, close, math.Max) }

// TrueLow is min(low, previous close).
func TrueLow(low, close Series) Series { return lagged(low, close, math.Min) }

// UpMove is high - previous high.
func UpMove(high Series) Series {
	return lagged(high, high, func(c, p float64) float64 { return c - p })
}

// DownMove is previous low - low.
func DownMove(low Series) Series {
	return lagged(low, low, func(c, p float64) float64 { return p - c })
}

// PercentRank is the fraction of the last period values strictly below the current one
// (backtrader's PercentRank: fsum(x < d[-1]) / period).
func PercentRank(in Series, period int) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	for i := first; i < n; i++ {
		cur, below := in.Vals[i], 0
		for _, x := range in.Vals[i-period+1 : i+1] {
			if x < cur {
				below++
			}
		}
		out[i] = float64(below) / float64(period)
	}
	return Series{Vals: out, First: first}
}

// DV2 is David Varadi's RSI(2) alternative: 100 * the percent rank over period bars of
// movav(close / ((high + low) / 2), maperiod).
func DV2(high, low, close Series, period, maperiod int, ma MovAv) Series {
	mid := binary(high, low, func(h, l float64) float64 { return (h + l) / 2.0 })
	dvu := ma(Div(close, mid), maperiod)
	return scale(100, PercentRank(dvu, period))
}

// HeikinAshiLines returns Heikin-Ashi candles as lines (the indicator; the HeikinAshi filter remodels a feed): ha_close = (open + high + low + close) / 4,
// ha_open the mean of the previous ha_open and ha_close (on the first bar the mean of its
// open and close), ha_high = max(high, ha_open, ha_close), ha_low = min(low, ...). As in
// backtrader, ha_open and ha_close have a value on the first bar, ha_high and ha_low from
// the second.
func HeikinAshiLines(open, high, low, close Series) (haOpen, haHigh, haLow, haClose Series) {
	n := len(close.Vals)
	ho, hh, hl, hc := nanSeries(n), nanSeries(n), nanSeries(n), nanSeries(n)
	first := max(open.First, high.First, low.First, close.First)
	for i := first; i < n; i++ {
		hc[i] = (open.Vals[i] + high.Vals[i] + low.Vals[i] + close.Vals[i]) / 4.0
		if i == first {
			ho[i] = (open.Vals[i] + close.Vals[i]) / 2.0
			continue
		}
		ho[i] = (ho[i-1] + hc[i-1]) / 2.0
		hh[i] = math.Max(math.Max(high.Vals[i], ho[i]), hc[i])
		hl[i] = math.Min(math.Min(low.Vals[i], ho[i]), hc[i])
	}
	return Series{Vals: ho, First: first}, Series{Vals: hh, First: first + 1},
		Series{Vals: hl, First: first + 1}, Series{Vals: hc, First: first}
}

// HaDelta is the Heikin-Ashi body, ha_close - ha_open (close - open of the bars themselves
// without autoheikin), and movav of it over period bars.
func HaDelta(open, high, low, close Series, period int, ma MovAv, autoheikin bool) (delta, smoothed Series) {
	o, c := open, close
	if autoheikin {
		o, _, _, c = HeikinAshiLines(open, high, low, close)
		// backtrader's HeikinAshi has a minimum period of 2, which its lines carry
		o.First, c.First = o.First+1, c.First+1
	}
	delta = Sub(c, o)
	return delta, ma(delta, period)
}

// Hurst is the Hurst exponent of the last period values, as backtrader computes it with
// numpy: for each lag in [lagStart, lagEnd), tau = sqrt(std(x[lag:] - x[:-lag])); the
// exponent is twice the slope of the least-squares line of log10(tau) on log10(lag).
// lagStart 0 means 2 and lagEnd 0 period/2 (backtrader's None).
func Hurst(in Series, period, lagStart, lagEnd int) Series {
	if lagStart == 0 {
		lagStart = 2
	}
	if lagEnd == 0 {
		lagEnd = period / 2
	}
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	var xs []float64
	for lag := lagStart; lag < lagEnd; lag++ {
		xs = append(xs, math.Log10(float64(lag)))
	}
	ys := make([]float64, len(xs))
	diff := make([]float64, period)
	for i := first; i < n; i++ {
		ts := in.Vals[i-period+1 : i+1]
		for k, lag := 0, lagStart; lag < lagEnd; k, lag = k+1, lag+1 {
			d := diff[:period-lag]
			for j := range d {
				d[j] = ts[j+lag] - ts[j]
			}
			ys[k] = math.Log10(math.Sqrt(npStd(d)))
		}
		out[i] = 2.0 * slope(xs, ys)
	}
	return Series{Vals: out, First: first}
}

// npStd is numpy's std (ddof 0): sqrt(mean(|x - mean(x)|^2)), with numpy's pairwise sums.
func npStd(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	m := pairwiseSum(x) / float64(len(x))
	sq := make([]float64, len(x))
	for i, v := range x {
		sq[i] = (v - m) * (v - m)
	}
	return math.Sqrt(pairwiseSum(sq) / float64(len(x)))
}

// pairwiseSum is numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h): a
// plain loop under 8 values, eight interleaved partial sums up to 128, halves above.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for k := range r {
				r[k] += a[i+k]
			}
		}
		s := (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

// slope is the least-squares slope of y on x (numpy.polyfit's first coefficient of a
// degree-1 fit).
func slope(x, y []float64) float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx float64
	for i := range x {
		dx := x[i] - mx
		sxy += dx * (y[i] - my)
		sxx += dx * dx
	}
	return sxy / sxx
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// pivotBase is the pivot of a bar: (h + l + c) / 3, (h + l + 2c) / 4 with useClose, or
// (h + l + c + o) / 4 with useOpen.
func pivotBase(open, high, low, close Series, useOpen, useClose bool) Series {
	n := len(close.Vals)
	out := nanSeries(n)
	first := max(open.First, high.First, low.First, close.First)
	for i := first; i < n; i++ {
		o, h, l, c := open.Vals[i], high.Vals[i], low.Vals[i], close.Vals[i]
		switch {
		case useClose:
			out[i] = (h + l + 2.0*c) / 4.0
		case useOpen:
			out[i] = (h + l + c + o) / 4.0
		default:
			out[i] = (h + l + c) / 3.0
		}
	}
	return Series{Vals: out, First: first}
}

// PivotPoint returns the pivot p and its supports and resistances: s1 = 2p - high,
// r1 = 2p - low, s2 = p - (high - low), r2 = p + (high - low).
func PivotPoint(open, high, low, close Series, useOpen, useClose bool) (p, s1, s2, r1, r2 Series) {
	p = pivotBase(open, high, low, close, useOpen, useClose)
	rng := Sub(high, low)
	s1 = binary(p, high, func(p, h float64) float64 { return 2.0*p - h })
	r1 = binary(p, low, func(p, l float64) float64 { return 2.0*p - l })
	return p, s1, Sub(p, rng), r1, Add(p, rng)
}

// FibonacciPivotPoint returns the pivot and the levels p -/+ level * (high - low).
func FibonacciPivotPoint(open, high, low, close Series, useOpen, useClose bool, l1, l2, l3 float64) (p, s1, s2, s3, r1, r2, r3 Series) {
	p = pivotBase(open, high, low, close, useOpen, useClose)
	rng := Sub(high, low)
	lvl := func(k, sign float64) Series {
		return binary(p, rng, func(p, r float64) float64 { return p + sign*(k*r) })
	}
	return p, lvl(l1, -1), lvl(l2, -1), lvl(l3, -1), lvl(l1, 1), lvl(l2, 1), lvl(l3, 1)
}

// DemarkPivotPoint returns p = x/4, s1 = x/2 - high, r1 = x/2 - low, where x is
// high + 2low + close on a bar closing below its open, h + l + 2close on one closing
// above and 2high + low + close on one closing at it: backtrader's code (CmpEx in runonce
// mode), whose docstring swaps the last two.
func DemarkPivotPoint(open, high, low, close Series) (p, s1, r1 Series) {
	n := len(close.Vals)
	x := nanSeries(n)
	first := max(open.First, high.First, low.First, close.First)
	for i := first; i < n; i++ {
		o, h, l, c := open.Vals[i], high.Vals[i], low.Vals[i], close.Vals[i]
		switch {
		case c < o:
			x[i] = h + 2.0*l + c
		case c > o:
			x[i] = h + l + 2.0*c
		default:
			x[i] = 2.0*h + l + c
		}
	}
	xs := Series{Vals: x, First: first}
	p = mapSeries(xs, func(x float64) float64 { return x / 4.0 })
	s1 = binary(xs, high, func(x, h float64) float64 { return x/2.0 - h })
	r1 = binary(xs, low, func(x, l float64) float64 { return x/2.0 - l })
	return
}

// Vortex returns VI+ and VI-: the sums over period bars of |high - previous low| and
// |low - previous high|, each over the sum of the true ranges.
func Vortex(high, low, close Series, period int) (viPlus, viMinus Series) {
	abs := func(f func(c, p float64) float64) func(c, p float64) float64 {
		return func(c, p float64) float64 { return math.Abs(f(c, p)) }
	}
	sub := func(c, p float64) float64 { return c - p }
	vmPlus := sumN(lagged(high, low, abs(sub)), period)
	vmMinus := sumN(lagged(low, high, abs(sub)), period)
	n := len(close.Vals)
	tr := nanSeries(n)
	first := max(high.First, low.First, close.First+1)
	for i := first; i < n; i++ {
		h, l, pc := high.Vals[i], low.Vals[i], close.Vals[i-1]
		tr[i] = math.Max(math.Max(math.Abs(h-l), math.Abs(h-pc)), math.Abs(l-pc))
	}
	trs := sumN(Series{Vals: tr, First: first}, period)
	return Div(vmPlus, trs), Div(vmMinus, trs)
}

// WilliamsAD is Williams' accumulation/distribution: from the second bar, the running sum
// of close - true low on a bar closing up, close - true high on one closing down.
func WilliamsAD(high, low, close Series) Series {
	tl, th := TrueLow(low, close), TrueHigh(high, close)
	n := len(close.Vals)
	out := nanSeries(n)
	first := max(tl.First, th.First)
	acc := 0.0
	for i := first; i < n; i++ {
		c, pc := close.Vals[i], close.Vals[i-1]
		up, down := 0.0, 0.0
		if c-pc > 0 {
			up = c - tl.Vals[i]
		}
		if pc-c > 0 {
			down = c - th.Vals[i]
		}
		acc += up + down
		out[i] = acc
	}
	return Series{Vals: out, First: first}
}

// Fractal returns Bill Williams' fractals as backtrader's study writes them: at each bar
// whose window of the last period highs has its first maximum at index shift (oldest
// first), the bar two back gets max * (1 + bardist) as a bearish fractal; likewise the
// lows' first minimum, min * (1 - bardist), as a bullish one. Other bars are NaN. A
// value is known two bars after the bar that holds it: the lines read the future.
func Fractal(high, low Series, period int, bardist float64, shift int) (bearish, bullish Series) {
	n := len(high.Vals)
	be, bu := nanSeries(n), nanSeries(n)
	first := max(high.First, low.First) + period - 1
	for i := first; i < n; i++ {
		if v, at := firstExtreme(high.Vals[i-period+1:i+1], func(a, b float64) bool { return a > b }); at == shift && i >= 2 {
			be[i-2] = v * (1 + bardist)
		}
		if v, at := firstExtreme(low.Vals[i-period+1:i+1], func(a, b float64) bool { return a < b }); at == shift && i >= 2 {
			bu[i-2] = v * (1 - bardist)
		}
	}
	return Series{Vals: be, First: first}, Series{Vals: bu, First: first}
}

// firstExtreme is the best value of w and the index of its first occurrence (Python's
// max(w), w.index(max(w))).
func firstExtreme(w []float64, better func(a, b float64) bool) (float64, int) {
	best, at := w[0], 0
	for k, v := range w[1:] {
		if better(v, best) {
			best, at = v, k+1
		}
	}
	return best, at
}

// Chikou is Ichimoku's chikou span, the close shift bars ahead (backtrader's
// data.close(shift)): its value at a bar is a later bar's close, known only shift bars
// later, and NaN where that bar is past the data.
func Chikou(close Series, shift int) Series {
	n := len(close.Vals)
	out := nanSeries(n)
	for i := max(close.First-shift, 0); i+shift < n; i++ {
		out[i] = close.Vals[i+shift]
	}
	return Series{Vals: out, First: max(close.First-shift, 0)}
}

// OLSSlopeIntercept returns the slope and intercept of the least-squares line of y on x
// over the last period bars (backtrader's OLS_Slope_InterceptN, statsmodels' OLS of
// data0 on a constant and data1).
func OLSSlopeIntercept(y, x Series, period int) (slopeS, intercept Series) {
	n := len(y.Vals)
	sl, ic := nanSeries(n), nanSeries(n)
	first := max(x.First, y.First) + period - 1
	for i := first; i < n; i++ {
		xs, ys := x.Vals[i-period+1:i+1], y.Vals[i-period+1:i+1]
		b := slope(xs, ys)
		sl[i] = b
		ic[i] = mean(ys) - b*mean(xs)
	}
	return Series{Vals: sl, First: first}, Series{Vals: ic, First: first}
}

// OLSTransformation returns the spread y - (slope*x + intercept) of the rolling
// regression over 10 bars (backtrader builds its OLS_Slope_InterceptN with the default
// period whatever its own), its SMA and standard deviation over period bars (backtrader's
// StandardDeviation, sqrt(sma(s^2) - sma(s)^2)) and the z-score (spread - mean) / std.
func OLSTransformation(y, x Series, period int) (spread, spreadMean, spreadStd, zscore Series) {
	sl, ic := OLSSlopeIntercept(y, x, 10)
	spread = Sub(y, Add(Mul(sl, x), ic))
	spreadMean = SMA(spread, period)
	sq := mapSeries(spread, func(v float64) float64 { return v * v })
	spreadStd = binary(SMA(sq, period), spreadMean, func(a, m float64) float64 {
		return math.Sqrt(math.Max(a-m*m, 0))
	})
	zscore = Div(Sub(spread, spreadMean), spreadStd)
	return
}

// Coint returns the Engle-Granger cointegration test of y0 on y1 over the last period
// bars, as statsmodels' coint (backtrader's CointN): the regression of y0 on y1 and the
// deterministic terms of trend ("c" a constant, "ct" and a time trend, "ctt" and its
// square, "n" none), then the augmented Dickey-Fuller t statistic of its residuals (no
// deterministic terms, the lag chosen by AIC up to 12*(n/100)^(1/4)) as score, and
// MacKinnon's (1994, 2010 tables) asymptotic p-value of it. An unknown trend gives NaN.
func Coint(y0, y1 Series, period int, trend string) (score, pvalue Series) {
	n := len(y0.Vals)
	sc, pv := nanSeries(n), nanSeries(n)
	first := max(y0.First, y1.First) + period - 1
	p, known := mackinnon[trend]
	for i := first; i < n && known; i++ {
		sc[i] = engleGranger(y0.Vals[i-period+1:i+1], y1.Vals[i-period+1:i+1], trend)
		pv[i] = p.pvalue(sc[i])
	}
	return Series{Vals: sc, First: first}, Series{Vals: pv, First: first}
}

// engleGranger is coint's test statistic (statsmodels.tsa.stattools.coint).
func engleGranger(y0, y1 []float64, trend string) float64 {
	n := len(y0)
	cols := [][]float64{y1}
	if trend != "n" {
		c, t, t2 := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range c {
			c[i], t[i], t2[i] = 1, float64(i+1), float64((i+1)*(i+1))
		}
		cols = append(cols, c)
		if trend == "ct" || trend == "ctt" {
			cols = append(cols, t)
		}
		if trend == "ctt" {
			cols = append(cols, t2)
		}
	}
	fit, ok := olsFit(cols, y0)
	if !ok {
		return math.NaN()
	}
	m := mean(y0)
	tss := 0.0
	for _, v := range y0 {
		tss += (v - m) * (v - m)
	}
	if 1-fit.ssr/tss >= 1-100*math.Sqrt(0x1p-52) {
		return math.Inf(-1) // (almost) collinear: statsmodels gives -inf
	}
	return adfNoTrend(fit.resid)
}

// adfNoTrend is adfuller(x, regression="n", autolag="aic")'s t statistic.
func adfNoTrend(x []float64) float64 {
	nobs := len(x)
	maxlag := min(nobs/2-1, int(math.Ceil(12*math.Pow(float64(nobs)/100, 0.25))))
	if maxlag < 0 {
		return math.NaN()
	}
	xdiff := make([]float64, nobs-1)
	for i := range xdiff {
		xdiff[i] = x[i+1] - x[i]
	}
	// columns: the level x[t], then xdiff[t-1] ... xdiff[t-lags], for t from lags on
	design := func(lags, ncols int) ([][]float64, []float64) {
		rows := len(xdiff) - lags
		cols := make([][]float64, ncols)
		for j := range cols {
			cols[j] = make([]float64, rows)
			for r := range rows {
				t := lags + r
				if j == 0 {
					cols[j][r] = x[t]
				} else {
					cols[j][r] = xdiff[t-j]
				}
			}
		}
		return cols, xdiff[lags:]
	}
	full, y := design(maxlag, maxlag+1)
	best, bestAIC := -1, math.Inf(1)
	for k := 1; k <= maxlag+1; k++ {
		fit, ok := olsFit(full[:k], y)
		if !ok {
			continue
		}
		nn := float64(len(y))
		llf := -nn/2*math.Log(2*math.Pi) - nn/2*math.Log(fit.ssr/nn) - nn/2
		if aic := -2*llf + 2*float64(k); aic < bestAIC || best < 0 {
			best, bestAIC = k, aic
		}
	}
	if best < 0 {
		return math.NaN()
	}
	lags := best - 1
	cols, yy := design(lags, lags+1)
	fit, ok := olsFit(cols, yy)
	if !ok {
		return math.NaN()
	}
	scale := fit.ssr / float64(len(yy)-len(cols))
	return fit.beta[0] / math.Sqrt(scale*fit.inv00)
}

type olsResult struct {
	beta  []float64
	resid []float64
	ssr   float64
	inv00 float64 // (X'X)^-1 [0,0]
}

// olsFit is the least-squares fit of y on the columns cols, by Householder QR; ok is
// false for a rank-deficient design.
func olsFit(cols [][]float64, y []float64) (olsResult, bool) {
	k, n := len(cols), len(y)
	if k == 0 || n < k {
		return olsResult{}, false
	}
	a := make([][]float64, k) // columns, reduced in place to R above the diagonal
	for j := range cols {
		a[j] = slices.Clone(cols[j])
	}
	b := slices.Clone(y)
	for j := range k {
		norm := 0.0
		for i := j; i < n; i++ {
			norm = math.Hypot(norm, a[j][i])
		}
		if norm == 0 {
			return olsResult{}, false
		}
		if a[j][j] > 0 {
			norm = -norm
		}
		// v = a[j][j:] - norm*e1, H = I - 2vv'/v'v applied to the columns right of j and b
		a[j][j] -= norm
		vv := 0.0
		for i := j; i < n; i++ {
			vv += a[j][i] * a[j][i]
		}
		apply := func(c []float64) {
			d := 0.0
			for i := j; i < n; i++ {
				d += a[j][i] * c[i]
			}
			f := 2 * d / vv
			for i := j; i < n; i++ {
				c[i] -= f * a[j][i]
			}
		}
		for jj := j + 1; jj < k; jj++ {
			apply(a[jj])
		}
		apply(b)
		a[j][j] = norm // R's diagonal; below it, the reflector (unused from here)
	}
	// R beta = (Q'y)[:k]
	beta := make([]float64, k)
	for j := k - 1; j >= 0; j-- {
		s := b[j]
		for jj := j + 1; jj < k; jj++ {
			s -= a[jj][j] * beta[jj]
		}
		beta[j] = s / a[j][j]
	}
	// (X'X)^-1 = R^-1 R^-T: its [0,0] is the squared norm of the first row of R^-1
	rinv := make([]float64, k) // first row of R^-1
	for j := range k {
		s := 0.0
		if j == 0 {
			s = 1
		}
		for jj := range j {
			s -= rinv[jj] * a[j][jj]
		}
		rinv[j] = s / a[j][j]
	}
	inv00 := 0.0
	for _, v := range rinv {
		inv00 += v * v
	}
	resid := make([]float64, n)
	ssr := 0.0
	for i := range y {
		f := 0.0
		for j := range k {
			f += cols[j][i] * beta[j]
		}
		resid[i] = y[i] - f
		ssr += resid[i] * resid[i]
	}
	return olsResult{beta: beta, resid: resid, ssr: ssr, inv00: inv00}, true
}

// mackinnonCoefs are MacKinnon's tables for two variables (statsmodels' adfvalues, N=2).
type mackinnonCoefs struct {
	max, min, star float64
	small, large   []float64 // polynomial coefficients, lowest degree first
}

var mackinnon = map[string]mackinnonCoefs{
	"c":   {0.92, -18.86, -2.62, []float64{2.92, 1.5012, 0.039796}, []float64{2.1945, 0.64695, -0.29198, -0.042377000000000005}},
	"ct":  {0.63, -21.15, -3.19, []float64{3.6646, 1.5419, 0.036448}, []float64{2.85, 0.5272, -0.36622, -0.051695000000000005}},
	"ctt": {0.79, -21.1, -3.51, []float64{4.3534, 1.6016, 0.037947}, []float64{3.4713, 0.5967, -0.32507, -0.042286000000000004}},
	"n":   {1.51, -19.62, -1.53, []float64{1.9129, 1.3857, 0.035322}, []float64{1.5578, 0.8558, -0.20830000000000004, -0.033549}},
}

// pvalue is mackinnonp: the normal CDF of the table's polynomial at stat.
func (m mackinnonCoefs) pvalue(stat float64) float64 {
	switch {
	case math.IsNaN(stat):
		return math.NaN()
	case stat > m.max:
		return 1
	case stat < m.min:
		return 0
	}
	c := m.large
	if stat <= m.star {
		c = m.small
	}
	v := 0.0
	for i := len(c) - 1; i >= 0; i-- {
		v = v*stat + c[i]
	}
	return 0.5 * math.Erfc(-v/math.Sqrt2)
}
