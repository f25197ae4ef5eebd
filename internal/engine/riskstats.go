package engine

import (
	"math"
	"slices"
)

// RiskGroupName names the statistics group of the tearsheet metrics (RiskGroup).
const RiskGroupName = "Risk"

// RiskGroup is the "Risk" group of the statistics record: the tearsheet metrics as
// quantstats (ranaroussi/quantstats, stats.py) defines them, computed from the curve's
// returns per bar (BarReturns, the first against the initial cash) with the risk-free rate 0
// and N = PeriodsPerYear bars a year where quantstats annualises with its `periods`.
// Where quantstats' definitions differ from textbook ones they are kept (docs/backtests.md
// lists them): the probabilistic Sharpe ratio subtracts 3 from an already excess kurtosis,
// and the ulcer index's drawdowns count the initial capital as the first peak.
// value_at_risk is historical (the 5% quantile of the returns), not quantstats'
// normal-distribution estimate, and expected_shortfall is quantstats' mean of the returns
// below that value. Two are the project's, not quantstats': the Calmar ratio and the
// recovery factor divide the run's own CAGR and total return by its own max drawdown
// (CurveFiguresOf: the figures the summary shows), and the recovery factor keeps its sign,
// so a losing run does not read as a recovering one.
func RiskGroup(initialCash float64, equity []EquityPoint) StatGroup {
	eq := make([]EquityPoint, len(equity))
	for i, p := range equity {
		eq[i] = EquityPoint{Time: p.Time, Value: p.Value}
	}
	DeriveEquity(initialCash, eq)
	return riskGroup(BarReturns(initialCash, equity), CurveFiguresOf(initialCash, eq))
}

// riskGroup is RiskGroup of the returns per bar and the curve's figures.
func riskGroup(rets []float64, cf CurveFigures) StatGroup {
	r := riskOf(rets, cf.PerYear)
	r.calmar, r.recovery = cf.Calmar, cf.RecoveryFactor
	return StatGroup{Name: RiskGroupName, Metrics: []Metric{
		metric("sortino_ratio", "Sortino Ratio", r.sortino, dispNum, "Mean return per bar divided by the downside deviation (√(sum of the squared negative returns / number of bars)), annualised with √N: return earned per unit of harmful volatility."),
		metric("calmar_ratio", "Calmar Ratio", r.calmar, dispNum, "CAGR divided by the max drawdown (as a fraction): the yearly growth earned per unit of the worst fall. Both are the figures shown above."),
		metric("omega_ratio", "Omega Ratio", r.omega, dispNum, "Sum of the positive returns per bar divided by the sum of the negative ones, without their sign (threshold 0): above 1, gains outweigh losses."),
		metric("value_at_risk", "Value at Risk (95%)", r.valueAtRisk, dispPct, "Historical value at risk: the return per bar that 95% of the bars beat (the 5% quantile, interpolated); a bar worse than this comes about 1 time in 20."),
		metric("expected_shortfall", "Expected Shortfall", r.expectedShortfall, dispPct, "Average return of the bars worse than the value at risk (the value at risk itself when none is): what a bad bar costs on average."),
		metric("tail_ratio", "Tail Ratio", r.tailRatio, dispNum, "The 95% quantile of the returns per bar divided by the 5% quantile, without sign: above 1, the best bars are larger than the worst ones."),
		metric("ulcer_index", "Ulcer Index", r.ulcer, dispNum, "Root mean square of the drawdown (as a fraction of the running peak) over the bars, dividing by bars − 1: the depth and length of the falls together."),
		metric("kelly_criterion", "Kelly Criterion", r.kelly, dispPct, "Share of capital the Kelly rule would stake, from the returns per bar: (payoff × win rate − loss rate) / payoff, payoff being the average gaining bar over the average losing bar."),
		metric("skew", "Skew", r.skew, dispNum, "Skewness of the returns per bar (adjusted Fisher–Pearson): positive when the large returns are mostly gains."),
		metric("kurtosis", "Kurtosis", r.kurtosis, dispNum, "Excess kurtosis of the returns per bar (0 for a normal distribution): high values mean fat tails, rare extreme bars."),
		metric("probabilistic_sharpe_ratio", "Probabilistic Sharpe", r.psr, dispPct, "Probability that the true Sharpe ratio per bar is above 0, given the number of bars, skew and kurtosis of the returns (quantstats' formula)."),
		metric("max_consecutive_wins", "Max Consecutive Wins", r.winStreak, dispInt, "The longest run of bars in a row with a positive return."),
		metric("max_consecutive_losses", "Max Consecutive Losses", r.lossStreak, dispInt, "The longest run of bars in a row with a negative return."),
		metric("recovery_factor", "Recovery Factor", r.recovery, dispNum, "Total return divided by the max drawdown (as a fraction), with its sign: how many times the gain covers the worst fall; negative when the run lost money."),
	}}
}

// risk holds the figures of RiskGroup; nil where a figure is undefined. calmar and recovery
// are the curve's (CurveFigures), set by riskGroup.
type risk struct {
	sortino, calmar, omega, valueAtRisk, expectedShortfall, tailRatio, ulcer, kelly *float64
	skew, kurtosis, psr, winStreak, lossStreak, recovery                            *float64
}

// riskOf computes the figures of RiskGroup from returns per bar and bars a year.
func riskOf(rets []float64, perYear float64) risk {
	var out risk
	n := len(rets)
	if n == 0 {
		return out
	}
	nf := float64(n)
	var sum float64 // a plain sum, as pandas' mean and sum (no exact summation needed)
	for _, x := range rets {
		sum += x
	}
	mean := sum / nf

	// Sortino (stats.sortino): downside deviation over all bars, not only the losing ones.
	var down float64
	for _, x := range rets {
		if x < 0 {
			down += x * x
		}
	}
	if d := math.Sqrt(down / nf); d > 0 {
		out.sortino = ptr(mean / d * math.Sqrt(perYear))
	}

	// The ulcer index's drawdowns (stats.to_drawdown_series): prices compounded from 1, the
	// phantom baseline 1 before the first bar as the first peak.
	growth, peak, ddSq := 1.0, 1.0, 0.0
	for _, x := range rets {
		growth *= 1 + x
		peak = math.Max(peak, growth)
		dd := growth/peak - 1
		ddSq += dd * dd
	}
	if n > 1 {
		out.ulcer = ptr(math.Sqrt(ddSq / (nf - 1)))
	}

	// Omega (stats.omega) with required return 0.
	var gains, losses float64
	var won, lost int
	for _, x := range rets {
		switch {
		case x > 0:
			gains += x
			won++
		case x < 0:
			losses -= x
			lost++
		}
	}
	if n >= 2 && losses > 0 {
		out.omega = ptr(gains / losses)
	}

	// Value at risk, expected shortfall and tail ratio: linear-interpolated quantiles
	// (pandas' Series.quantile).
	sorted := slices.Clone(rets)
	slices.Sort(sorted)
	v := quantile(sorted, 0.05) // the left tail's quantile, shared by the three figures
	out.valueAtRisk = ptr(v)
	var belowSum float64
	below := 0
	for _, x := range sorted {
		if x >= v {
			break
		}
		belowSum += x
		below++
	}
	if below > 0 {
		out.expectedShortfall = ptr(belowSum / float64(below))
	} else {
		out.expectedShortfall = ptr(v)
	}
	if v != 0 {
		out.tailRatio = ptr(math.Abs(quantile(sorted, 0.95) / v))
	}

	// Kelly (stats.kelly_criterion): payoff ratio and win rate of the bars, zero bars left out
	// of the win rate.
	if won > 0 && lost > 0 {
		payoff := (gains / float64(won)) / (losses / float64(lost))
		winProb := float64(won) / float64(won+lost)
		out.kelly = ptr((payoff*winProb - (1 - winProb)) / payoff)
	}

	out.skew, out.kurtosis = pandasSkew(rets, mean), pandasKurtosis(rets, mean)

	// Probabilistic Sharpe ratio (stats.probabilistic_ratio, base "sharpe", rf 0).
	if n > 1 && out.skew != nil && out.kurtosis != nil {
		var ss float64
		for _, x := range rets {
			ss += (x - mean) * (x - mean)
		}
		if sd := math.Sqrt(ss / (nf - 1)); sd > 0 {
			sr := mean / sd
			variance := (1 + 0.5*sr*sr - *out.skew*sr + (*out.kurtosis-3)/4*sr*sr) / (nf - 1)
			if variance > 0 {
				out.psr = ptr(normCDF(sr / math.Sqrt(variance)))
			}
		}
	}

	// Streaks (stats.consecutive_wins / consecutive_losses): a zero return ends both.
	var w, l, bestW, bestL int
	for _, x := range rets {
		switch {
		case x > 0:
			w, l = w+1, 0
		case x < 0:
			w, l = 0, l+1
		default:
			w, l = 0, 0
		}
		bestW, bestL = max(bestW, w), max(bestL, l)
	}
	out.winStreak, out.lossStreak = ptr(float64(bestW)), ptr(float64(bestL))
	return out
}

// quantile is the q quantile of sorted values, linearly interpolated between the two
// nearest ranks (numpy's and pandas' default).
func quantile(sorted []float64, q float64) float64 {
	h := float64(len(sorted)-1) * q
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// fpZero is pandas' _zero_out_fperr: sums of moments this small are rounding, not spread.
func fpZero(x float64) float64 {
	if math.Abs(x) < 1e-14 {
		return 0
	}
	return x
}

// pandasSkew is pandas' Series.skew: the adjusted Fisher–Pearson coefficient, 0 when the
// values do not vary, undefined under 3 values.
func pandasSkew(x []float64, mean float64) *float64 {
	n := float64(len(x))
	if n < 3 {
		return nil
	}
	var m2, m3 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
	}
	m2, m3 = fpZero(m2), fpZero(m3)
	if m2 == 0 {
		return ptr(0)
	}
	return ptr(n * math.Sqrt(n-1) / (n - 2) * (m3 / math.Pow(m2, 1.5)))
}

// pandasKurtosis is pandas' Series.kurtosis: Fisher's excess kurtosis with the sample
// adjustment, 0 when the values do not vary, undefined under 4 values.
func pandasKurtosis(x []float64, mean float64) *float64 {
	n := float64(len(x))
	if n < 4 {
		return nil
	}
	var m2, m4 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m4 += d * d * d * d
	}
	adj := 3 * (n - 1) * (n - 1) / ((n - 2) * (n - 3))
	num := fpZero(n * (n + 1) * (n - 1) * m4)
	den := fpZero((n - 2) * (n - 3) * m2 * m2)
	if den == 0 {
		return ptr(0)
	}
	return ptr(num/den - adj)
}

// normCDF is the standard normal distribution function.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
