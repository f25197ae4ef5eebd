package engine

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Benchmark is what a run is measured against: a symbol's value at each point of the run's
// equity curve (BuyAndHold).
type Benchmark struct {
	Symbol string
	// Values are aligned with the equity curve; nil before the benchmark's first bar.
	Values []*float64
}

// BuyAndHold is buying with all of initialCash at the first bar's close and holding: its
// value at every point of equity (marked at the last close at or before the point's time;
// nil before the first bar).
func BuyAndHold(initialCash float64, bars []Bar, equity []EquityPoint) []*float64 {
	out := make([]*float64, len(equity))
	if len(bars) == 0 || bars[0].Close <= 0 {
		return out
	}
	first := bars[0].Close
	j := 0
	var last *float64
	for i, e := range equity {
		for j < len(bars) && !bars[j].Time.After(e.Time) {
			v := initialCash * bars[j].Close / first
			last = &v
			j++
		}
		out[i] = last
	}
	return out
}

// PeriodsPerYear is how many bars of the curve's frequency make a year, the N that
// annualises per-bar figures (√N for volatility and ratios, N for mean returns): 252 for
// daily bars, 52 weekly, 12 monthly, and for intraday bars 252 times the curve's average
// number of bars per trading day (a day with any bar). The frequency is the median gap
// between consecutive points, so weekends and holidays do not change it.
func PeriodsPerYear(equity []EquityPoint) float64 {
	if len(equity) < 2 {
		return 252
	}
	// The median gap g = gaps[m/2] of the m gaps sorted is at least x exactly when at most
	// m/2 gaps are shorter than x: counting the gaps under each bound finds its class
	// without sorting (every run's summary asks this, so it is a pass without allocating).
	const day = 24 * time.Hour
	m := len(equity) - 1
	var under20d, under4d, under20h int
	for i := 1; i < len(equity); i++ {
		g := equity[i].Time.Sub(equity[i-1].Time)
		if g < 20*day {
			under20d++
			if g < 4*day {
				under4d++
				if g < 20*time.Hour {
					under20h++
				}
			}
		}
	}
	switch {
	case under20d <= m/2:
		return 12
	case under4d <= m/2:
		return 52
	case under20h <= m/2:
		return 252
	}
	days := 0
	var last time.Time
	for _, e := range equity {
		d := e.Time.Truncate(day)
		if !d.Equal(last) {
			days++
			last = d
		}
	}
	return 252 * float64(len(equity)) / float64(days)
}

// annualNote names the annualisation by PeriodsPerYear n for the explanations.
func annualNote(n float64) string {
	switch n {
	case 252:
		return "√N, N = 252 (daily bars)"
	case 52:
		return "√N, N = 52 (weekly bars)"
	case 12:
		return "√N, N = 12 (monthly bars)"
	}
	return fmt.Sprintf("√N, N = 252 × %.1f (bars a trading day)", n/252)
}

// benchmarkGroup measures the curve against bench. Returns are per bar: the equity's and
// the benchmark's relative changes over the same points (the first from the initial cash),
// over the points where the benchmark has a value. Statistics are population moments.
func benchmarkGroup(initialCash float64, equity []EquityPoint, bench *Benchmark, perYear float64, annual string) StatGroup {
	var r, b []float64
	prevV, prevB := initialCash, initialCash
	var lastB *float64
	for i, p := range equity {
		rt := p.Value/prevV - 1
		prevV = p.Value
		if i >= len(bench.Values) || bench.Values[i] == nil {
			continue
		}
		v := *bench.Values[i]
		r = append(r, rt)
		b = append(b, v/prevB-1)
		prevB, lastB = v, bench.Values[i]
	}
	var total, alpha, beta, corr, te, ir *float64
	if lastB != nil {
		total = ptr(round(*lastB/initialCash-1, 4))
	}
	if len(r) >= 2 {
		mr, sr := meanPopSD(r)
		mb, sb := meanPopSD(b)
		cov := 0.0
		ex := make([]float64, len(r))
		for i := range r {
			cov += (r[i] - mr) * (b[i] - mb)
			ex[i] = r[i] - b[i]
		}
		cov /= float64(len(r))
		if sb > 0 {
			be := cov / (sb * sb)
			beta = ptr(round(be, 4))
			alpha = ptr(round((mr-be*mb)*perYear, 4))
			if sr > 0 {
				corr = ptr(round(cov/(sr*sb), 4))
			}
		}
		me, se := meanPopSD(ex)
		te = ptr(round(se*math.Sqrt(perYear), 4))
		if se > 0 {
			ir = ptr(round(me/se*math.Sqrt(perYear), 4))
		}
	}
	sym := bench.Symbol
	return StatGroup{Name: "Benchmark", Metrics: []Metric{
		metric("benchmark_return", "Benchmark Return", total, dispPct, "Total return of buying "+sym+" with all the starting cash at its first close and holding it to the end (the equity chart's dashed line)."),
		metric("alpha", "Alpha", alpha, dispPct, "Jensen's alpha against "+sym+" with a zero risk-free rate, annualised: (mean return per bar − beta × the benchmark's mean return per bar) × N, where "+strings.TrimPrefix(annual, "√N, ")+". The return not explained by moving with the benchmark."),
		metric("beta", "Beta", beta, dispNum, "Covariance of the returns per bar with "+sym+"'s divided by the variance of "+sym+"'s: how much the portfolio moves when the benchmark moves by 1%."),
		metric("correlation", "Correlation", corr, dispNum, "Pearson correlation of the returns per bar with "+sym+"'s, from −1 (opposite) through 0 (unrelated) to 1 (in step)."),
		metric("tracking_error", "Tracking Error", te, dispPct, "Standard deviation of the returns per bar less "+sym+"'s, annualised with "+annual+": how far the portfolio strays from the benchmark."),
		metric("information_ratio", "Information Ratio", ir, dispNum, "Mean return per bar in excess of "+sym+"'s divided by its standard deviation, annualised with "+annual+": excess return per unit of tracking error."),
	}}
}
