package engine

import (
	"math"
	"sync"
)

// The figures a run shows in more than one place (the summary, the statistics record, the
// runs list, the comparison, the HTML report, Monte Carlo's "this run", a study's trials,
// bi_results and `backtestd run`) are defined here, once each: every one of those places
// reads the value these functions compute (stored with the result), never a copy of the
// formula. docs/backtests.md ("What each figure means") gives the formulas.

// CurveFigures are the figures of an equity curve that the summary and the statistics record
// both show, from CurveFiguresOf.
type CurveFigures struct {
	// PerYear is the bars a year of the curve's frequency (PeriodsPerYear): the N every
	// annualised figure uses.
	PerYear float64
	// TotalReturn is the final value over the initial cash, less 1 (a fraction).
	TotalReturn float64
	// CAGR is the compound annual growth over the calendar span of the curve (days /
	// 365.25), a fraction; nil with under two points, no span, or nothing left.
	CAGR *float64
	// SharpeRatio is the mean over the population standard deviation of the returns per
	// period (SharpeReturns), risk-free 0, × √PerYear; nil when the deviation is 0.
	SharpeRatio *float64
	// Volatility is that standard deviation × √PerYear (a fraction); nil without returns.
	Volatility *float64
	// MaxDrawdown is the largest fall from a running peak of the curve, in money, and
	// MaxDrawdownPct in percent of that peak. The peaks are the curve's own (the first point
	// is the first peak), as backtrader's DrawDown analyzer counts them.
	MaxDrawdown, MaxDrawdownPct float64
	// MaxDrawdownDuration is the longest fall in calendar days from its peak to the first
	// point back at the peak, or to the last point while still below it (the drawdown
	// table's longest row, DrawdownPeriods), rounded to whole days.
	MaxDrawdownDuration int
	// Calmar is CAGR over the max drawdown as a fraction (MaxDrawdownPct / 100); nil
	// without a drawdown or a CAGR.
	Calmar *float64
	// RecoveryFactor is TotalReturn over the max drawdown as a fraction, with its sign: a
	// run that lost money has a negative factor. Nil without a drawdown.
	RecoveryFactor *float64
}

// CurveFiguresOf computes the CurveFigures of a curve whose per-point returns and drawdowns
// are derived (DeriveEquity), starting from initialCash.
func CurveFiguresOf(initialCash float64, eq []EquityPoint) CurveFigures {
	f := CurveFigures{PerYear: PeriodsPerYear(eq)}
	final := initialCash
	if n := len(eq); n > 0 {
		final = eq[n-1].Value
	}
	f.TotalReturn = final/initialCash - 1
	f.CAGR = CAGR(initialCash, eq)
	f.SharpeRatio, f.Volatility = sharpeRatio(eq, f.PerYear)
	for _, p := range eq {
		// Plain comparisons: math.Max's care for NaN and −0 costs more than the rest of the
		// pass, and a curve's drawdowns are finite and at least 0.
		if p.DrawdownMoney > f.MaxDrawdown {
			f.MaxDrawdown = p.DrawdownMoney
		}
		if p.Drawdown > f.MaxDrawdownPct {
			f.MaxDrawdownPct = p.Drawdown
		}
	}
	f.MaxDrawdownDuration = MaxDrawdownDuration(eq)
	if f.MaxDrawdownPct > 0 {
		dd := f.MaxDrawdownPct / 100
		if f.CAGR != nil {
			f.Calmar = ptr(*f.CAGR / dd)
		}
		f.RecoveryFactor = ptr(f.TotalReturn / dd)
	}
	return f
}

// CAGR is the compound annual growth of the curve from initialCash to its last value over
// its calendar span in years of 365.25 days; nil with under two points, no span, or a last
// value at or below 0.
func CAGR(initialCash float64, eq []EquityPoint) *float64 {
	n := len(eq)
	if n < 2 {
		return nil
	}
	y := days(eq[0].Time, eq[n-1].Time) / 365.25
	if y <= 0 || eq[n-1].Value <= 0 {
		return nil
	}
	return ptr(math.Pow(eq[n-1].Value/initialCash, 1/y) - 1)
}

// periodReturns holds sharpeRatio's scratch of returns per period (a study's runs one
// after another on each core would otherwise allocate a series' worth each).
var periodReturns sync.Pool // of *[]float64

// SharpeReturns are the returns the Sharpe ratio is computed from: the returns per bar
// (each point's Return), except that on daily or longer bars (perYear ≤ 252) two points of
// one calendar day make one return, compounded, as backtrader's TimeReturn per day does
// (the extra step that delivers a resampled feed's last bar is not a period of its own).
// On daily bars they are the reference's daily returns, so the Sharpe ratio is its
// sharpe.daily_annualized to the bit. The result reuses buf.
func SharpeReturns(eq []EquityPoint, perYear float64, buf []float64) []float64 {
	rets := buf[:0]
	merge := perYear <= 252
	var prevDay int64
	for i, p := range eq {
		if merge {
			day := dayNumber(p.Time)
			if i > 0 && day == prevDay {
				last := &rets[len(rets)-1]
				*last = (1+*last)*(1+p.Return) - 1
				continue
			}
			prevDay = day
		}
		rets = append(rets, p.Return)
	}
	return rets
}

// sharpeRatio is the Sharpe ratio and the annual volatility of the curve's SharpeReturns,
// annualised with √perYear: mean / population sd × √perYear (nil when the sd is 0), and
// sd × √perYear (nil without returns).
func sharpeRatio(eq []EquityPoint, perYear float64) (sharpe, vol *float64) {
	if len(eq) == 0 {
		return nil, nil
	}
	buf, _ := periodReturns.Get().(*[]float64)
	if buf == nil {
		buf = new([]float64)
	}
	defer periodReturns.Put(buf)
	rets := SharpeReturns(eq, perYear, *buf)
	defer func() { *buf = rets[:0] }()
	m, sd := meanPopSD(rets)
	if math.IsNaN(sd) {
		return nil, nil
	}
	vol = ptr(sd * math.Sqrt(perYear))
	if sd != 0 {
		sharpe = ptr(math.Sqrt(perYear) * (m / sd))
	}
	return sharpe, vol
}

// MaxDrawdownDuration is the longest fall of the curve below a running peak in calendar
// days, from the peak to the first point back at it (or to the last point while still
// below), rounded to whole days: the longest row of the drawdown table (DrawdownPeriods).
// 0 without a fall.
func MaxDrawdownDuration(eq []EquityPoint) int {
	// DrawdownPeriods' falls, without building them: a fall runs from the running peak to
	// the first point at or above it, or to the last point.
	best, peak := 0.0, 0
	for i, p := range eq {
		if p.Value >= eq[peak].Value {
			if i > peak+1 { // the points between were below the peak
				best = math.Max(best, days(eq[peak].Time, p.Time))
			}
			peak = i
		}
	}
	if last := len(eq) - 1; last > peak {
		best = math.Max(best, days(eq[peak].Time, eq[last].Time))
	}
	return int(math.Round(best))
}

// WinRate is the percent of the closed trades that were won (net pnl ≥ 0): a trade still
// open is neither won nor lost, so it is not counted (the reference divided by all trades,
// an open one included: DESIGN.md, deviation 6). 0 without a closed trade.
func WinRate(won, closed int) float64 {
	if closed == 0 {
		return 0
	}
	return float64(won) / float64(closed) * 100
}
