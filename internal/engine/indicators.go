package engine

import "math"

// Series is a line of values aligned with a feed's bars. Values before
// First (backtrader's minimum period minus one) are NaN. First may be
// beyond the end when the series never gets a value.
type Series struct {
	Vals  []float64
	First int
}

func nanSeries(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// Line wraps raw values (such as closes) as a series valid from bar 0.
func Line(v []float64) Series { return Series{Vals: v, First: 0} }

// Const is a series holding c on every bar.
func Const(c float64, n int) Series {
	v := make([]float64, n)
	for i := range v {
		v[i] = c
	}
	return Series{Vals: v}
}

// SMA is the simple moving average with an exactly rounded window sum
// (backtrader uses math.fsum).
func SMA(in Series, period int) Series {
	s := sumN(in, period)
	p := float64(period)
	for i := s.First; i < len(s.Vals); i++ {
		s.Vals[i] /= p
	}
	return s
}

// smoothing is backtrader's ExponentialSmoothing: seeded with the SMA of
// the first period values, then prev*(1-alpha) + x*alpha.
func smoothing(in Series, period int, alpha float64) Series {
	s := SMA(in, period)
	n := len(s.Vals)
	alpha1 := 1.0 - alpha
	if s.First < n {
		prev := s.Vals[s.First]
		for i := s.First + 1; i < n; i++ {
			prev = prev*alpha1 + in.Vals[i]*alpha
			s.Vals[i] = prev
		}
	}
	return s
}

// EMA is the exponential moving average, alpha = 2/(period+1).
func EMA(in Series, period int) Series { return smoothing(in, period, 2.0/(1.0+float64(period))) }

// SMMA is Wilder's smoothed moving average, alpha = 1/period.
func SMMA(in Series, period int) Series { return smoothing(in, period, 1.0/float64(period)) }

// WMA is the linearly weighted moving average.
func WMA(in Series, period int) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	coef := 2.0 / (float64(period) * (float64(period) + 1.0))
	buf := make([]float64, period)
	for i := first; i < n && period > 0; i++ {
		for j := 0; j < period; j++ {
			buf[j] = float64(j+1) * in.Vals[i-period+1+j]
		}
		out[i] = coef * Fsum(buf)
	}
	return Series{Vals: out, First: first}
}

// Delay shifts a series: out[i] = in[i-ago] (backtrader's line(-ago)).
func Delay(in Series, ago int) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	for i := ago; i < n; i++ {
		if i-ago >= 0 {
			out[i] = in.Vals[i-ago]
		}
	}
	return Series{Vals: out, First: in.First + ago}
}

func binary(a, b Series, f func(x, y float64) float64) Series {
	n := len(a.Vals)
	out := nanSeries(n)
	first := max(a.First, b.First)
	for i := first; i < n; i++ {
		out[i] = f(a.Vals[i], b.Vals[i])
	}
	return Series{Vals: out, First: first}
}

// Sub is a - b bar by bar.
func Sub(a, b Series) Series { return binary(a, b, func(x, y float64) float64 { return x - y }) }

// Add is a + b bar by bar.
func Add(a, b Series) Series { return binary(a, b, func(x, y float64) float64 { return x + y }) }

// Mul is a * b bar by bar.
func Mul(a, b Series) Series { return binary(a, b, func(x, y float64) float64 { return x * y }) }

// Div is a / b bar by bar (IEEE: a zero divisor gives ±Inf or NaN).
func Div(a, b Series) Series { return binary(a, b, func(x, y float64) float64 { return x / y }) }

// Max is the larger of a and b bar by bar.
func Max(a, b Series) Series { return binary(a, b, math.Max) }

// Min is the smaller of a and b bar by bar.
func Min(a, b Series) Series { return binary(a, b, math.Min) }

// Compare is 1 where op holds between a and b, else 0; op is one of > >= < <= == !=.
func Compare(a, b Series, op string) Series {
	test := map[string]func(x, y float64) bool{
		">": func(x, y float64) bool { return x > y }, ">=": func(x, y float64) bool { return x >= y },
		"<": func(x, y float64) bool { return x < y }, "<=": func(x, y float64) bool { return x <= y },
		"==": func(x, y float64) bool { return x == y }, "!=": func(x, y float64) bool { return x != y },
	}[op]
	return binary(a, b, func(x, y float64) float64 {
		if test(x, y) {
			return 1
		}
		return 0
	})
}

// Custom wraps values computed elsewhere (a strategy's own indicator) as a series: first
// is the first bar with a value (earlier values are made NaN).
func Custom(vals []float64, first int) Series {
	for i := 0; i < min(first, len(vals)); i++ {
		vals[i] = math.NaN()
	}
	return Series{Vals: vals, First: first}
}

// RSI is Wilder's relative strength index.
func RSI(in Series, period int) Series {
	n := len(in.Vals)
	up, dn := nanSeries(n), nanSeries(n)
	for i := in.First + 1; i < n; i++ {
		d := in.Vals[i] - in.Vals[i-1]
		up[i] = max(d, 0.0)
		dn[i] = max(in.Vals[i-1]-in.Vals[i], 0.0)
	}
	u := SMMA(Series{Vals: up, First: in.First + 1}, period)
	d := SMMA(Series{Vals: dn, First: in.First + 1}, period)
	return binary(u, d, func(x, y float64) float64 {
		rs := x / y
		return 100.0 - 100.0/(1.0+rs)
	})
}

// MACD returns the macd line, its signal line and the histogram.
func MACD(in Series, fast, slow, signal int) (macd, sig, histo Series) {
	macd = Sub(EMA(in, fast), EMA(in, slow))
	sig = EMA(macd, signal)
	histo = Sub(macd, sig)
	return
}

// StdDev is the population standard deviation over period bars, computed
// like backtrader: sqrt(mean(x^2) - mean(x)^2).
func StdDev(in Series, period int) Series {
	sq := make([]float64, len(in.Vals))
	for i, v := range in.Vals {
		sq[i] = v * v
	}
	ms := SMA(Series{Vals: sq, First: in.First}, period)
	m := SMA(in, period)
	return binary(ms, m, func(a, b float64) float64 {
		v := a - b*b
		if v < 0 {
			v = 0
		}
		return math.Sqrt(v)
	})
}

// Bollinger returns the middle (SMA), top and bottom bands.
func Bollinger(in Series, period int, devfactor float64) (mid, top, bot Series) {
	mid = SMA(in, period)
	sd := StdDev(in, period)
	top = binary(mid, sd, func(m, s float64) float64 { return m + devfactor*s })
	bot = binary(mid, sd, func(m, s float64) float64 { return m - devfactor*s })
	return
}

// TrueRange is max(high, prev close) - min(low, prev close).
func TrueRange(high, low, close Series) Series {
	n := len(close.Vals)
	out := nanSeries(n)
	first := max(high.First, low.First, close.First+1)
	for i := first; i < n; i++ {
		pc := close.Vals[i-1]
		out[i] = math.Max(high.Vals[i], pc) - math.Min(low.Vals[i], pc)
	}
	return Series{Vals: out, First: first}
}

// ATR is Wilder's average true range.
func ATR(high, low, close Series, period int) Series {
	return SMMA(TrueRange(high, low, close), period)
}

func window(in Series, period int, better func(a, b float64) bool) Series {
	n := len(in.Vals)
	out := nanSeries(n)
	first := in.First + period - 1
	// monotonic deque of indices
	dq := make([]int, 0, period)
	for i := in.First; i < n && period > 0; i++ {
		for len(dq) > 0 && !better(in.Vals[dq[len(dq)-1]], in.Vals[i]) {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, i)
		if dq[0] <= i-period {
			dq = dq[1:]
		}
		if i >= first {
			out[i] = in.Vals[dq[0]]
		}
	}
	return Series{Vals: out, First: first}
}

// Highest is the maximum over the last period bars.
func Highest(in Series, period int) Series {
	return window(in, period, func(a, b float64) bool { return a > b })
}

// Lowest is the minimum over the last period bars.
func Lowest(in Series, period int) Series {
	return window(in, period, func(a, b float64) bool { return a < b })
}

// Stochastic returns backtrader's slow stochastic %K and %D.
func Stochastic(high, low, close Series, period, dfast, dslow int) (k, d Series) {
	hh := Highest(high, period)
	ll := Lowest(low, period)
	knum := Sub(close, ll)
	kden := Sub(hh, ll)
	kfast := binary(knum, kden, func(a, b float64) float64 { return 100.0 * (a / b) })
	k = SMA(kfast, dfast)
	d = SMA(k, dslow)
	return
}

// Momentum is x - x[-period].
func Momentum(in Series, period int) Series {
	return binary(in, Delay(in, period), func(a, b float64) float64 { return a - b })
}

// ROC is (x - x[-period]) / x[-period].
func ROC(in Series, period int) Series {
	return binary(in, Delay(in, period), func(a, b float64) float64 { return (a - b) / b })
}

// CrossOver is +1 when a crosses above b, -1 when it crosses below and 0
// otherwise, with backtrader's rule that the previous difference is the
// last non-zero one. The first value is one bar after both inputs have one.
func CrossOver(a, b Series) Series {
	n := len(a.Vals)
	out := nanSeries(n)
	start := max(a.First, b.First)
	first := start + 1
	nzd := 0.0
	for i := start; i < n; i++ {
		fa, fb := a.Vals[i], b.Vals[i]
		if i >= first {
			switch {
			case nzd < 0 && fa > fb:
				out[i] = 1
			case nzd > 0 && fa < fb:
				out[i] = -1
			default:
				out[i] = 0
			}
		}
		if d := fa - fb; d != 0 || i == start {
			nzd = d
		}
	}
	return Series{Vals: out, First: first}
}

// CrossUp is 1 where CrossOver is +1, else 0.
func CrossUp(a, b Series) Series {
	c := CrossOver(a, b)
	for i := c.First; i < len(c.Vals); i++ {
		c.Vals[i] = math.Max(c.Vals[i], 0)
	}
	return c
}

// CrossDown is 1 where CrossOver is -1, else 0.
func CrossDown(a, b Series) Series {
	c := CrossOver(a, b)
	for i := c.First; i < len(c.Vals); i++ {
		c.Vals[i] = math.Max(-c.Vals[i], 0)
	}
	return c
}
