package engine

import (
	"fmt"
	"math"
	"time"
)

// The analyzers of backtrader's returns family, each with backtrader's defaults on daily
// bars (the data's timeframe, so a day where the engine's timeframe is days): Returns,
// VWR, Calmar, AnnualReturn, TimeReturn by month and by year and SharpeRatio_A. They are
// computed from the equity curve alone, as backtrader's are from the broker's value.

// PeriodValue is one period's figure of a time-keyed analyzer; Period is backtrader's key
// (the period's last calendar day, YYYY-MM-DD, or the year for AnnualReturn). Value is
// nil where backtrader's is NaN.
type PeriodValue struct {
	Period string   `json:"period"`
	Value  *float64 `json:"value"`
}

// ReturnsResult is backtrader's Returns analyzer per period of the bars (a day on daily
// or intraday bars, a week or a month on weekly or monthly ones): the log return of the run
// (rtot), its average per period (ravg, over Days periods), annualised over Annualiser
// periods a year (rnorm = exp(ravg × tann) − 1, and in percent rnorm100: 252 days, 52 weeks
// or 12 months). Nil when undefined (a value at or below zero).
type ReturnsResult struct {
	Total      *float64 `json:"rtot"`
	Average    *float64 `json:"ravg"`
	Normal     *float64 `json:"rnorm"`
	Normal100  *float64 `json:"rnorm100"`
	Days       int      `json:"days"`
	Annualiser float64  `json:"tann"`
}

// CalmarResult is backtrader's Calmar analyzer (monthly, over 36 months): the last
// ratio and the ratio at every month, NaN (nil) until 36 months are known.
type CalmarResult struct {
	Value   *float64      `json:"calmar"`
	ByMonth []PeriodValue `json:"by_month"`
}

// TimeReturnResult is backtrader's TimeReturn by month and by year: each period's last
// value over the previous period's (the starting cash first), less one.
type TimeReturnResult struct {
	Months []PeriodValue `json:"months"`
	Years  []PeriodValue `json:"years"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// periods indexes an equity curve by calendar period (UTC dates), in one pass: the last
// point of each day, month and year, and the first of each month (where backtrader's
// TimeFrameAnalyzerBase sees the month change, on_dt_over).
type periods struct {
	dayEnds, monthEnds, yearEnds, monthStarts []int
}

// monthOf tells times' year*100+month, a UTC time's from the bounds of the last UTC month
// it computed when it falls within them.
type monthOf struct {
	key    int64
	lo, hi int64
}

func (c *monthOf) of(t time.Time) int64 {
	u := t.Unix()
	if t.Location() == time.UTC && u >= c.lo && u < c.hi && c.hi != 0 {
		return c.key
	}
	y, m, _ := t.Date()
	c.key = int64(y)*100 + int64(m)
	c.lo = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix()
	c.hi = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return c.key
}

func indexPeriods(eq []EquityPoint) periods {
	var p periods
	if len(eq) == 0 {
		return p
	}
	// At most one day end a point: one allocation instead of a dozen doublings (daily bars
	// end a day at every point; this was a tenth of a sweep run's allocation).
	p.dayEnds = make([]int, 0, len(eq))
	var mc monthOf
	prevD, prevM := dayNumber(eq[0].Time), mc.of(eq[0].Time)
	p.monthStarts = append(p.monthStarts, 0)
	for i := 1; i < len(eq); i++ {
		d, m := dayNumber(eq[i].Time), mc.of(eq[i].Time)
		if d != prevD {
			p.dayEnds = append(p.dayEnds, i-1)
		}
		if m != prevM {
			p.monthEnds = append(p.monthEnds, i-1)
			p.monthStarts = append(p.monthStarts, i)
			if m/100 != prevM/100 {
				p.yearEnds = append(p.yearEnds, i-1)
			}
		}
		prevD, prevM = d, m
	}
	last := len(eq) - 1
	p.dayEnds = append(p.dayEnds, last)
	p.monthEnds = append(p.monthEnds, last)
	p.yearEnds = append(p.yearEnds, last)
	return p
}

func monthEnd(t time.Time) string {
	y, m, _ := t.Date()
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

func yearEnd(t time.Time) string { return fmt.Sprintf("%04d-12-31", t.Year()) }

// timeReturns is backtrader's TimeReturn: per period, its last value over the last value
// of the previous one (initial first), less one.
func timeReturns(initial float64, eq []EquityPoint, ends []int, name func(time.Time) string) []PeriodValue {
	out := make([]PeriodValue, 0, len(ends))
	start := initial
	for _, i := range ends {
		v := eq[i].Value
		out = append(out, PeriodValue{Period: name(eq[i].Time), Value: finite(v/start - 1.0)})
		start = v
	}
	return out
}

// annualReturn is backtrader's AnnualReturn, which, unlike TimeReturn, starts the first
// year from the value at the first bar rather than the starting cash.
func annualReturn(eq []EquityPoint, yearEnds []int) []PeriodValue {
	out := make([]PeriodValue, 0, len(yearEnds))
	if len(eq) == 0 {
		return out
	}
	start := eq[0].Value
	for _, i := range yearEnds {
		v := eq[i].Value
		out = append(out, PeriodValue{Period: fmt.Sprint(eq[i].Time.Year()), Value: finite(v/start - 1.0)})
		start = v
	}
	return out
}

// dailyValues is the last value of each calendar day.
func dailyValues(eq []EquityPoint, ends []int) []float64 {
	out := make([]float64, len(ends))
	for j, i := range ends {
		out[j] = eq[i].Value
	}
	return out
}

// returnsOf is backtrader's Returns over values per period (tann periods a year).
func returnsOf(initial, final float64, periods int, tann float64) (r ReturnsResult, ravg float64) {
	r.Days, r.Annualiser = periods, tann
	if periods == 0 {
		return r, math.NaN()
	}
	rtot := math.Inf(-1)
	if ratio := final / initial; ratio >= 0 && !math.IsInf(ratio, 0) && !math.IsNaN(ratio) {
		rtot = math.Log(ratio)
	}
	ravg = rtot / float64(periods)
	rnorm := ravg
	if !math.IsInf(ravg, -1) {
		rnorm = math.Expm1(ravg * tann)
	}
	r.Total, r.Average, r.Normal, r.Normal100 = finite(rtot), finite(ravg), finite(rnorm), finite(rnorm*100.0)
	return r, ravg
}

// vwr is backtrader's variability-weighted return per day (tau 0.20, sdev_max 2.0): the
// annualised log return in percent, reduced by the sample deviation of each day's value
// from the path of the average log return. It writes over days.
func vwr(initial float64, days []float64, ravg, rnorm100 float64) *float64 {
	if len(days) < 2 || math.IsNaN(ravg) || math.IsInf(ravg, 0) {
		return nil
	}
	// Written over days, each value read before its place is: days is not used after this
	// (one allocation less per run).
	dts := days
	pi := initial
	for j, pn := range days {
		dts[j] = pn/(pi*math.Exp(ravg*float64(j+1))) - 1.0
		pi = pn
	}
	// Compensated sums (Neumaier): within an ulp or two of backtrader's math.fsum, at a
	// fraction of the cost of exact partials over a day per bar.
	mean := neumaier(dts, false, 0) / float64(len(dts))
	ss := neumaier(dts, true, mean)
	sdev := math.Sqrt(ss / float64(len(dts)-1))
	return finite(rnorm100 * (1.0 - math.Pow(sdev/2.0, 0.20)))
}

// calmar is backtrader's Calmar with its defaults (months, a 36-month window): at each
// month's first bar, the month's log return over the window (NaN until the window is
// full) over the largest drawdown in percent seen at months' first bars; once more at the
// end, with the final value, under the last month's key.
func calmar(initial float64, eq []EquityPoint, monthStarts []int) CalmarResult {
	const period = 36
	res := CalmarResult{ByMonth: make([]PeriodValue, 0, len(monthStarts))}
	window := make([]float64, 0, period+1)
	for range period - 1 {
		window = append(window, math.NaN())
	}
	window = append(window, initial)
	push := func(v float64) {
		window = append(window, v)
		if len(window) > period {
			window = window[1:]
		}
	}
	peak, maxdd, mdd := math.Inf(-1), 0.0, math.Inf(-1)
	ratio := func() float64 {
		rann := math.Log(window[len(window)-1]/window[0]) / period
		d := mdd
		if d == 0 {
			d = math.Inf(1)
		}
		return rann / d
	}
	var last float64
	for _, i := range monthStarts {
		v := eq[i].Value
		// TimeDrawDown by month, which Calmar updates first.
		if v > peak {
			peak = v
		}
		maxdd = math.Max(maxdd, 100.0*(peak-v)/peak)
		mdd = math.Max(mdd, maxdd)
		push(v)
		last = ratio()
		res.ByMonth = append(res.ByMonth, PeriodValue{Period: monthEnd(eq[i].Time), Value: finite(last)})
	}
	if len(eq) == 0 {
		return res
	}
	push(eq[len(eq)-1].Value)
	last = ratio()
	res.ByMonth[len(res.ByMonth)-1].Value = finite(last)
	res.Value = finite(last)
	return res
}

// sharpeOf is backtrader's SharpeRatio over period returns: rate the yearly risk-free
// rate converted to factor periods a year, the population deviation, times √factor when
// annualised.
func sharpeOf(rets []float64, factor float64, annualize bool) *float64 {
	if len(rets) == 0 {
		return nil
	}
	rate := math.Pow(1.0+0.01, 1.0/factor) - 1.0
	free := make([]float64, len(rets))
	for i, r := range rets {
		free[i] = r - rate
	}
	m, sd := meanPopSD(free)
	if sd == 0 || math.IsNaN(sd) {
		return nil
	}
	ratio := m / sd
	if annualize {
		ratio *= math.Sqrt(factor)
	}
	return finite(ratio)
}

func values(p []PeriodValue) []float64 {
	out := make([]float64, 0, len(p))
	for _, v := range p {
		if v.Value != nil {
			out = append(out, *v.Value)
		} else {
			out = append(out, math.NaN())
		}
	}
	return out
}

// analyzeReturns fills the returns family of r.Analyzers from r.Equity, whose bars make
// perYear a year (PeriodsPerYear).
func analyzeReturns(r *Result, perYear float64) {
	a := &r.Analyzers
	eq := r.Equity
	per := indexPeriods(eq)
	days := dailyValues(eq, per.dayEnds)
	final := r.InitialCash
	if len(eq) > 0 {
		final = eq[len(eq)-1].Value
	}
	// backtrader's Returns counts periods of the data's timeframe and annualises with that
	// timeframe's periods a year (its _TANN: 252 days, 52 weeks, 12 months). The periods
	// here are calendar days with a point, which on weekly or monthly bars are the weeks or
	// months; intraday bars are counted by day, as the reference's daily analyzers are.
	tann := 252.0
	if perYear < 252 {
		tann = perYear
	}
	var ravg float64
	a.Returns, ravg = returnsOf(r.InitialCash, final, len(days), tann)
	rnorm100 := math.NaN()
	if a.Returns.Normal100 != nil {
		rnorm100 = *a.Returns.Normal100
	}
	a.VWR = vwr(r.InitialCash, days, ravg, rnorm100)
	a.Calmar = calmar(r.InitialCash, eq, per.monthStarts)
	a.AnnualReturn = annualReturn(eq, per.yearEnds)
	a.TimeReturn = TimeReturnResult{
		Months: timeReturns(r.InitialCash, eq, per.monthEnds, monthEnd),
		Years:  timeReturns(r.InitialCash, eq, per.yearEnds, yearEnd),
	}
	a.Sharpe.Annualized = sharpeOf(values(a.TimeReturn.Years), 1, true)
	a.Sharpe.MonthlyAnnualized = sharpeOf(values(a.TimeReturn.Months), 12, true)
}

// neumaier sums xs, or with squares the squares of their deviations from mean, with
// Neumaier's compensation.
func neumaier(xs []float64, squares bool, mean float64) float64 {
	var sum, c float64
	for _, x := range xs {
		if squares {
			x = (x - mean) * (x - mean)
		}
		t := sum + x
		if math.Abs(sum) >= math.Abs(x) {
			c += (sum - t) + x
		} else {
			c += (x - t) + sum
		}
		sum = t
	}
	return sum + c
}
