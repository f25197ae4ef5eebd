package engine

import (
	"fmt"
	"math"
	"time"
)

// Statistics is the statistics record in its groups (api/openapi.yaml's Statistics).
type Statistics struct {
	Groups []StatGroup `json:"groups"`
}

// StatGroup is one panel group: "Curve", "Trade", "Time", "Risk" or "Benchmark".
type StatGroup struct {
	Name    string   `json:"name"`
	Metrics []Metric `json:"metrics"`
}

// Metric is one statistic. Value is nil when the figure is undefined, in
// which case Display is "—".
type Metric struct {
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Value       *float64 `json:"value"`
	Display     string   `json:"display"`
	Explanation string   `json:"explanation"`
}

// Get returns the metric with key, or nil.
func (s *Statistics) Get(key string) *Metric {
	for gi := range s.Groups {
		for mi := range s.Groups[gi].Metrics {
			if s.Groups[gi].Metrics[mi].Key == key {
				return &s.Groups[gi].Metrics[mi]
			}
		}
	}
	return nil
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

type display int

const (
	dispPct    display = iota // fraction shown as percent
	dispNum                   // 2 decimals
	dispPctRaw                // already a percent
	dispDays                  // "<n> days"
	dispDays1                 // "<x.x> days"
	dispInt
)

func metric(key, label string, v *float64, d display, expl string) Metric {
	m := Metric{Key: key, Label: label, Value: v, Explanation: expl, Display: "—"}
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		m.Value = nil
		return m
	}
	x := *v
	switch d {
	case dispPct:
		m.Display = fmt.Sprintf("%.2f%%", x*100)
	case dispNum:
		m.Display = fmt.Sprintf("%.2f", x)
	case dispPctRaw:
		m.Display = fmt.Sprintf("%.2f%%", x)
	case dispDays:
		m.Display = fmt.Sprintf("%d days", int(x))
	case dispDays1:
		m.Display = fmt.Sprintf("%.1f days", x)
	case dispInt:
		m.Display = fmt.Sprintf("%d", int(x))
	}
	return m
}

// ComputeStatistics builds the statistics record from an equity curve (as
// stored: Time and Value are used), the round trips and the run's SQN. Per-bar figures are
// annualised by the bars' frequency (PeriodsPerYear). The groups are "Curve", "Trade",
// "Time" and "Risk" (RiskGroup's tearsheet metrics); with a benchmark, a "Benchmark" group
// measures the curve against it.
func ComputeStatistics(initialCash float64, equity []EquityPoint, trades []Trade, sqn float64, bench *Benchmark) Statistics {
	rets := BarReturns(initialCash, equity)
	// The figures the summary shows too come from their owner (CurveFiguresOf), over the
	// curve with its returns and drawdowns derived as the run's were.
	eq := make([]EquityPoint, len(equity))
	for i, p := range equity {
		eq[i] = EquityPoint{Time: p.Time, Value: p.Value}
	}
	DeriveEquity(initialCash, eq)
	cf := CurveFiguresOf(initialCash, eq)
	perYear := cf.PerYear
	annual := annualNote(perYear)

	// Curve
	var totalRet, rsq *float64
	if len(rets) > 0 {
		totalRet = ptr(cf.TotalReturn)
		rsq = rSquared(rets)
	}
	ddDays := float64(cf.MaxDrawdownDuration)

	// Trade
	var closedN, won, lost int
	var sum, wonSum, lostSum, durSum float64
	var best, worst *float64
	for _, t := range trades {
		if t.IsOpen || t.CloseTime == nil {
			continue
		}
		closedN++
		sum += t.PnLNet
		durSum += days(t.OpenTime, *t.CloseTime)
		if t.PnLNet >= 0 {
			won++
			wonSum += t.PnLNet
			if best == nil || t.PnLNet > *best {
				best = ptr(t.PnLNet)
			}
		} else {
			lost++
			lostSum += t.PnLNet
			if worst == nil || t.PnLNet < *worst {
				worst = ptr(t.PnLNet)
			}
		}
	}
	total := len(trades)
	winRate := WinRate(won, closedN)
	var avgTrade, avgWin, avgLoss, avgDur *float64
	if closedN > 0 {
		avgTrade = ptr(sum / float64(closedN))
		avgDur = ptr(durSum / float64(closedN))
	}
	if won > 0 {
		avgWin = ptr(round(wonSum/float64(won), 2))
	}
	if lost > 0 {
		avgLoss = ptr(round(lostSum/float64(lost), 2))
	}

	// Time
	months := periodSums(equity, rets, func(t time.Time) int { return t.Year()*12 + int(t.Month()) })
	years := periodSums(equity, rets, func(t time.Time) int { return t.Year() })
	mWinPct, mAvgWin, mAvgLoss, mBest, mWorst := periodStats(months)
	yWinPct, _, _, yBest, yWorst := periodStats(years)

	st := Statistics{Groups: []StatGroup{
		{Name: "Curve", Metrics: []Metric{
			metric("total_return", "Total Return", totalRet, dispPct, "How much the portfolio grew or shrank over the whole backtest, compounding every bar's return."),
			metric("cagr", "CAGR", cf.CAGR, dispPct, "The steady yearly growth rate that would turn the starting value into the final value over the same calendar span."),
			metric("sharpe_ratio", "Sharpe Ratio", cf.SharpeRatio, dispNum, "Average return per bar divided by its standard deviation (population), annualised with "+annual+": return earned per unit of risk. The summary's sharpe_ratio, the same value."),
			metric("annual_volatility", "Annual Volatility", cf.Volatility, dispPct, "Standard deviation of the returns per bar scaled to a year with "+annual+": how much the portfolio value swings."),
			metric("sqn", "SQN", ptr(sqn), dispNum, "System Quality Number: √(number of trades) × average trade pnl / its standard deviation."),
			metric("r_squared", "R-Squared", rsq, dispNum, "How close the growth curve is to a straight line over time (1 = perfectly steady growth)."),
			metric("max_drawdown", "Max Drawdown", ptr(cf.MaxDrawdownPct), dispPctRaw, "The largest fall of the portfolio value from a previous peak, in percent of that peak (the summary's max_drawdown_pct)."),
			metric("max_drawdown_duration", "Max DD Duration", ptr(ddDays), dispDays, "Calendar days of the longest fall, from its peak to the first bar back at the peak (or to the last bar while still below it): the drawdown table's longest row."),
		}},
		{Name: "Trade", Metrics: []Metric{
			metric("win_rate", "Win Rate", ptr(winRate), dispPctRaw, "Share of the closed trades that made money after commission (a break-even trade counts as a win; a trade still open is not counted)."),
			metric("avg_trade", "Average Trade", avgTrade, dispNum, "Average net profit or loss of a closed trade, after commission."),
			metric("avg_win", "Average Win", avgWin, dispNum, "Average net profit of the winning trades."),
			metric("avg_loss", "Average Loss", avgLoss, dispNum, "Average net loss of the losing trades."),
			metric("best_trade", "Best Trade", best, dispNum, "The largest net profit made by a single trade."),
			metric("worst_trade", "Worst Trade", worst, dispNum, "The largest net loss taken by a single trade."),
			metric("avg_trade_duration", "Avg Duration", avgDur, dispDays1, "Average number of calendar days a trade was held."),
			metric("total_trades", "Total Trades", ptr(float64(total)), dispInt, "Number of trades, including one still open at the end."),
		}},
		{Name: "Time", Metrics: []Metric{
			metric("win_month_pct", "Win Months %", mWinPct, dispPctRaw, "Share of calendar months whose summed returns per bar were positive."),
			metric("avg_win_month", "Avg Win Month", mAvgWin, dispPct, "Average return of the positive months."),
			metric("avg_loss_month", "Avg Loss Month", mAvgLoss, dispPct, "Average return of the negative months."),
			metric("best_month", "Best Month", mBest, dispPct, "The highest monthly return (sum of the month's returns per bar)."),
			metric("worst_month", "Worst Month", mWorst, dispPct, "The lowest monthly return (sum of the month's returns per bar)."),
			metric("win_year_pct", "Win Years %", yWinPct, dispPctRaw, "Share of calendar years whose summed returns per bar were positive."),
			metric("best_year", "Best Year", yBest, dispPct, "The highest yearly return (sum of the year's returns per bar)."),
			metric("worst_year", "Worst Year", yWorst, dispPct, "The lowest yearly return (sum of the year's returns per bar)."),
		}},
	}}
	st.Groups = append(st.Groups, riskGroup(rets, cf))
	if bench != nil {
		st.Groups = append(st.Groups, benchmarkGroup(initialCash, equity, bench, perYear, annual))
	}
	return st
}

func rSquared(rets []float64) *float64 {
	n := float64(len(rets))
	if n < 2 {
		return nil
	}
	var sx, sy, sxx, syy, sxy float64
	g := 1.0
	for i, r := range rets {
		g *= 1 + r
		x := float64(i)
		sx += x
		sy += g
		sxx += x * x
		syy += g * g
		sxy += x * g
	}
	cov := sxy - sx*sy/n
	vx := sxx - sx*sx/n
	vy := syy - sy*sy/n
	if vx <= 0 || vy <= 1e-18 {
		return nil
	}
	c := cov / math.Sqrt(vx*vy)
	return ptr(round(c*c, 4))
}

func periodSums(eq []EquityPoint, rets []float64, key func(time.Time) int) []float64 {
	var out []float64
	last := math.MinInt
	for i, p := range eq {
		k := key(p.Time)
		if k != last {
			out = append(out, 0)
			last = k
		}
		out[len(out)-1] += rets[i]
	}
	return out
}

func periodStats(v []float64) (winPct, avgWin, avgLoss, best, worst *float64) {
	if len(v) == 0 {
		return
	}
	var pos, neg int
	var ps, ns float64
	b, w := math.Inf(-1), math.Inf(1)
	for _, x := range v {
		if x > 0 {
			pos++
			ps += x
		} else if x < 0 {
			neg++
			ns += x
		}
		b, w = math.Max(b, x), math.Min(w, x)
	}
	winPct = ptr(round(float64(pos)/float64(len(v))*100, 2))
	avgWin, avgLoss = ptr(0), ptr(0)
	if pos > 0 {
		avgWin = ptr(ps / float64(pos))
	}
	if neg > 0 {
		avgLoss = ptr(ns / float64(neg))
	}
	return winPct, avgWin, avgLoss, ptr(b), ptr(w)
}
