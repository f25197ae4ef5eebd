package engine

import (
	"math"
	"time"
)

// AnalyzerNames are the analyzers every run has, named as a result's analyzers are
// (backtrader's pyfolio returns, drawdown, SQN and trade analyzer).
var AnalyzerNames = []string{"pyfolio", "drawdown", "SQN", "trades"}

func ptr(v float64) *float64 { return &v }

// meanPopSD returns fsum(x)/n and the population standard deviation, as
// backtrader's mathsupport average and standarddev compute them.
func meanPopSD(x []float64) (mean, sd float64) {
	n := float64(len(x))
	mean = Fsum(x) / n
	var acc exactSum
	for _, v := range x {
		d := v - mean
		acc.add(d * d)
	}
	sd = math.Sqrt(acc.value() / n)
	return
}

// DeriveEquity fills each point's return (against the previous value, the first against
// initialCash) and its drawdown below the running peak, in money and percent, from the
// values alone. Results are stored without them and read back through this, so what a
// reader gets is what the run computed, to the bit.
func DeriveEquity(initialCash float64, eq []EquityPoint) {
	prev := initialCash
	peak := math.Inf(-1)
	for i := range eq {
		p := &eq[i]
		p.Return = p.Value/prev - 1.0
		prev = p.Value
		peak = math.Max(peak, p.Value)
		p.DrawdownMoney = peak - p.Value
		p.Drawdown = 100.0 * p.DrawdownMoney / peak
	}
}

// analyze fills the per-bar returns and drawdowns of r.Equity and derives
// the analyzers and the summary from r.Equity and r.Trades; opened is the number of
// trades notified as opened. Without returns, the returns family (analyzeReturns) is
// left empty.
func analyze(r *Result, opened int, returns bool) {
	eq := r.Equity
	DeriveEquity(r.InitialCash, eq)
	var dd DrawdownResult
	ddLen := 0
	for i := range eq {
		p := &eq[i]
		dd.MaxMoney = math.Max(dd.MaxMoney, p.DrawdownMoney)
		dd.MaxPct = math.Max(dd.MaxPct, p.Drawdown)
		if p.Drawdown != 0 {
			ddLen++
		} else {
			ddLen = 0
		}
		dd.MaxLenBars = max(dd.MaxLenBars, ddLen)
	}
	if len(eq) > 0 {
		last := eq[len(eq)-1]
		dd.FinalPct, dd.FinalMoney, dd.FinalLenBars = last.Drawdown, last.DrawdownMoney, ddLen
	}
	r.Analyzers.Drawdown = dd
	cf := CurveFiguresOf(r.InitialCash, eq)
	r.Analyzers.Sharpe = sharpe(r.InitialCash, eq, cf)
	r.Analyzers.TradeAnalyzer = tradeAnalyzer(r.Trades, opened)
	r.Analyzers.SQN = sqn(r.Trades)
	if returns {
		analyzeReturns(r, cf.PerYear)
	}
	r.Summary = summarize(r, cf)
}

// sharpe is backtrader's SharpeRatio analyzers: DailyAnnualized over the returns per
// calendar day (TimeReturn with timeframe Days) × √252 whatever the bars, Default over the
// yearly returns less 1%. On daily bars DailyAnnualized is the curve's Sharpe ratio (cf's):
// the same returns and formula, so it is taken from there rather than computed twice.
func sharpe(initial float64, eq []EquityPoint, cf CurveFigures) SharpeResult {
	var s SharpeResult
	if len(eq) == 0 {
		return s
	}
	if cf.PerYear == 252 {
		s.DailyAnnualized = cf.SharpeRatio
	} else {
		// perYear 252: one return per calendar day, as on daily bars.
		s.DailyAnnualized, _ = sharpeRatio(eq, 252)
	}
	yr := yearlyReturns(initial, eq)
	// backtrader's yearly risk-free rate (1+0.01)^(1/1) - 1, which is 0.010000000000000009.
	rate := 1.01 - 1.0
	for i := range yr {
		yr[i] -= rate
	}
	if len(yr) > 0 {
		if m, sd := meanPopSD(yr); sd != 0 && !math.IsNaN(sd) {
			s.Default = ptr(m / sd)
		}
	}
	return s
}

// dayNumber numbers t's calendar date in its location: the days from 1970-01-01 to it,
// so that two times are on the same date when their numbers are equal. A UTC time's is
// its Unix time in whole days, without the work of its date.
func dayNumber(t time.Time) int64 {
	if t.Location() != time.UTC {
		y, m, d := t.Date()
		t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	u := t.Unix()
	day := u / 86400
	if u%86400 < 0 {
		day-- // before 1970: towards minus infinity
	}
	return day
}

// yearOf tells times' calendar years, a UTC time's from the bounds of the last UTC year
// it computed when it falls within them.
type yearOf struct {
	year   int
	lo, hi int64 // Unix times of the year's first second and the next year's
}

func (c *yearOf) of(t time.Time) int {
	if t.Location() != time.UTC {
		return t.Year()
	}
	if u := t.Unix(); u >= c.lo && u < c.hi {
		return c.year
	}
	c.year = t.Year()
	c.lo = time.Date(c.year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	c.hi = time.Date(c.year+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return c.year
}

// yearlyReturns is value at the last bar of each calendar year over the
// value at the last bar of the previous one (the starting cash first).
func yearlyReturns(initial float64, eq []EquityPoint) []float64 {
	var out []float64
	start := initial
	if len(eq) == 0 {
		return out
	}
	var years yearOf
	year := years.of(eq[0].Time)
	for i, p := range eq {
		next := year
		if i+1 < len(eq) {
			next = years.of(eq[i+1].Time)
		}
		if i == len(eq)-1 || next != year {
			out = append(out, p.Value/start-1.0)
			start = p.Value
		}
		year = next
	}
	return out
}

// tradeAnalyzer is backtrader's TradeAnalyzer. Like it, it counts the trades notified as
// opened (opened), and takes the open ones as those less the closed: the same as the open
// trades at the end, except where trades of several tradeids meet (a trade a closing
// part of a fill reopens is not notified as opened, in backtrader nor here).
func tradeAnalyzer(trades []Trade, opened int) TradeAnalyzerResult {
	ta := TradeAnalyzerResult{Total: opened}
	var net, gross, wonT, lostT float64
	curWon, curLost := 0, 0
	for _, t := range trades {
		if t.IsOpen {
			continue
		}
		ta.Closed++
		net += t.PnLNet
		gross += t.PnLGross
		ta.LenTotalBars += t.BarLen
		if t.PnLNet >= 0 {
			ta.Won++
			wonT += t.PnLNet
			curWon++
			curLost = 0
		} else {
			ta.Lost++
			lostT += t.PnLNet
			curLost++
			curWon = 0
		}
		ta.StreakWonLongest = max(ta.StreakWonLongest, curWon)
		ta.StreakLostLongest = max(ta.StreakLostLongest, curLost)
	}
	ta.Open = ta.Total - ta.Closed
	if ta.Closed > 0 {
		// As backtrader's TradeAnalyzer, which opens both groups at the first close: an
		// empty won or lost group has a total and an average of 0.
		ta.PnLNetTotal, ta.PnLGrossTotal = ptr(net), ptr(gross)
		ta.WonPnLTotal, ta.WonPnLAverage = ptr(wonT), ptr(wonT/float64(max(ta.Won, 1)))
		ta.LostPnLTotal, ta.LostPnLAverage = ptr(lostT), ptr(lostT/float64(max(ta.Lost, 1)))
	}
	return ta
}

func closedNet(trades []Trade) []float64 {
	var pnl []float64
	for _, t := range trades {
		if !t.IsOpen {
			pnl = append(pnl, t.PnLNet)
		}
	}
	return pnl
}

// SQNOf is the system quality number of net pnls: √n × mean / population
// sd; 0 when n <= 1 or the deviation is 0.
func SQNOf(pnl []float64) float64 {
	if len(pnl) <= 1 {
		return 0
	}
	m, sd := meanPopSD(pnl)
	if sd == 0 {
		return 0
	}
	return math.Sqrt(float64(len(pnl))) * m / sd
}

func sqn(trades []Trade) SQNResult {
	pnl := closedNet(trades)
	return SQNResult{Value: SQNOf(pnl), Trades: len(pnl)}
}

func days(a, b time.Time) float64 { return b.Sub(a).Hours() / 24 }

// summarize is the run's summary: the curve's figures from their owner (cf, CurveFiguresOf
// of r.Equity), the trades' from the trade analyzer, the win rate over closed trades
// (WinRate).
func summarize(r *Result, cf CurveFigures) Summary {
	s := Summary{InitialCash: r.InitialCash, FinalValue: r.FinalValue}
	s.TotalReturn = cf.TotalReturn
	s.AnnualReturn = cf.CAGR
	s.SharpeRatio = cf.SharpeRatio
	s.MaxDrawdown = cf.MaxDrawdown
	s.MaxDrawdownPct = cf.MaxDrawdownPct
	s.MaxDrawdownDuration = cf.MaxDrawdownDuration
	ta := r.Analyzers.TradeAnalyzer
	s.TotalTrades, s.Won, s.Lost = ta.Total, ta.Won, ta.Lost
	s.WinRate = WinRate(ta.Won, ta.Closed)
	if ta.Lost > 0 && ta.LostPnLTotal != nil && *ta.LostPnLTotal != 0 {
		won := 0.0
		if ta.WonPnLTotal != nil {
			won = *ta.WonPnLTotal
		}
		s.ProfitFactor = ptr(won / math.Abs(*ta.LostPnLTotal))
	}
	// the summary's averages stay empty for a group without trades
	if ta.Won > 0 {
		s.AvgWin = ta.WonPnLAverage
	}
	if ta.Lost > 0 {
		s.AvgLoss = ta.LostPnLAverage
	}
	s.SQN = r.Analyzers.SQN.Value
	return s
}
