// Package findings checks a finished backtest for what can make its figures mislead: too
// few trades for its parameters, a profit that rests on a handful of trades, fills at prices
// or volumes the bars never had, an open position carrying the result, and, from the
// look-ahead check of its strategy version (internal/bias), whether the strategy reads the
// future and how long its indicators depend on where the data starts.
//
// Each rule and threshold is defined here once; docs/backtests.md ("Findings") states them.
// The run's own findings (Of) are computed when it completes and stored with the result;
// the look-ahead ones (OfCheck) are read from the latest check whenever they are asked for,
// since a check made after the run still speaks of the run's code.
package findings

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
)

// Severity says how much a finding should change how a result is read.
type Severity string

const (
	// Info describes the run; nothing in it is suspect.
	Info Severity = "info"
	// Warning: the figures may mislead; read the detail before trusting them.
	Warning Severity = "warning"
	// Critical: the figures cannot be trusted (the strategy reads the future).
	Critical Severity = "critical"
)

// Finding is one check's outcome. Value and Threshold are in the unit the title names
// (a count, a percent); nil where the finding has none.
type Finding struct {
	ID        string   `json:"id"`
	Severity  Severity `json:"severity"`
	Title     string   `json:"title"`
	Detail    string   `json:"detail"`
	Value     *float64 `json:"value"`
	Threshold *float64 `json:"threshold"`
}

// The rules' thresholds.
const (
	// TradesPerParameter is the fewest closed trades per strategy parameter (at least
	// one parameter is counted) below which the result may be fitted to the few trades it
	// has: a common rule of thumb for how many observations a free parameter needs.
	TradesPerParameter = 10
	// BestTradesFraction is the share of the closed trades, the best ones (at least one),
	// whose removal must leave a profit: when the net profit of the closed trades is more
	// than these trades made (they make over 100% of it), the rest lose money together.
	BestTradesFraction = 0.05
	// OpenShareLimit is the share of the result (the final value less the initial cash)
	// above which a position still open at the end is reported: its profit or loss is
	// not realised, and closing it could make it another.
	OpenShareLimit = 0.5
)

// Run is what Of checks: a finished run, the bars it was given (one feed per symbol, in
// the result's order) and how many parameters its strategy declares.
type Run struct {
	Result     *engine.Result
	Feeds      []engine.Feed
	Parameters int
}

// Of checks a finished run. The order is stable: trades, concentration, fills, the open
// position, time in market.
func Of(r Run) []Finding {
	res := r.Result
	out := []Finding{}
	if res == nil {
		return out
	}
	closed := closedTrades(res.Trades)
	out = append(out, tradeCount(len(closed), r.Parameters)...)
	out = append(out, concentration(closed)...)
	out = append(out, fills(res.Executions, r.Feeds)...)
	out = append(out, openAtEnd(res)...)
	out = append(out, timeInMarket(res))
	return out
}

func ptr(v float64) *float64 { return &v }

func closedTrades(ts []engine.Trade) []engine.Trade {
	var out []engine.Trade
	for _, t := range ts {
		if !t.IsOpen {
			out = append(out, t)
		}
	}
	return out
}

func tradeCount(n, params int) []Finding {
	k := max(params, 1)
	need := TradesPerParameter * k
	if n >= need {
		return nil
	}
	title := fmt.Sprintf("Too few trades for %d parameter(s)", k)
	if n == 0 {
		title = "No closed trades"
	}
	return []Finding{{
		ID: "trades_per_parameter", Severity: Warning, Title: title,
		Detail: fmt.Sprintf("%d closed trade(s) for %d strategy parameter(s): under %d per parameter, the figures can be fitted to a few trades and say little of the next ones.",
			n, k, TradesPerParameter),
		Value: ptr(float64(n)), Threshold: ptr(float64(need)),
	}}
}

func concentration(closed []engine.Trade) []Finding {
	if len(closed) == 0 {
		return nil
	}
	var net float64
	pnl := make([]float64, len(closed))
	for i, t := range closed {
		pnl[i] = t.PnLNet
		net += t.PnLNet
	}
	if net <= 0 {
		return nil
	}
	slices.SortFunc(pnl, func(a, b float64) int { return -cmpFloat(a, b) })
	m := max(1, int(math.Ceil(BestTradesFraction*float64(len(closed)))))
	var best float64
	for _, p := range pnl[:m] {
		best += p
	}
	share := 100 * best / net
	if share <= 100 {
		return nil
	}
	return []Finding{{
		ID: "profit_concentration", Severity: Warning, Title: "Profit rests on a few trades",
		Detail: fmt.Sprintf("The best %d of %d closed trades made %.4g, %.1f%% of the closed trades' net profit %.4g: without them the others lose %.4g together.",
			m, len(closed), best, share, net, best-net),
		Value: ptr(share), Threshold: ptr(100),
	}}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fills finds executions on bars that traded nothing and at prices outside the bar's
// range. An execution is matched to its symbol's bar of the same time; one with no such
// bar (a fill on a bar the strategy made, e.g. by resampling) is not judged.
func fills(xs []engine.Execution, feeds []engine.Feed) []Finding {
	bars := map[string]map[int64]engine.Bar{}
	for _, f := range feeds {
		m := make(map[int64]engine.Bar, len(f.Bars))
		for _, b := range f.Bars {
			m[b.Time.UnixNano()] = b
		}
		bars[f.Symbol] = m
	}
	var zero, outside int
	var firstZero, firstOut *engine.Execution
	for i := range xs {
		x := &xs[i]
		b, ok := bars[x.Symbol][x.Time.UnixNano()]
		if !ok {
			continue
		}
		if b.Volume == 0 {
			zero++
			if firstZero == nil {
				firstZero = x
			}
		}
		if tol := 1e-9 * math.Max(1, math.Abs(x.Price)); x.Price < b.Low-tol || x.Price > b.High+tol {
			outside++
			if firstOut == nil {
				firstOut = x
			}
		}
	}
	var out []Finding
	if zero > 0 {
		out = append(out, Finding{
			ID: "fills_zero_volume", Severity: Warning, Title: "Fills on bars that traded nothing",
			Detail: fmt.Sprintf("%d fill(s) on bars of volume 0, the first %s %s at %s: nobody could have taken the other side.",
				zero, firstZero.Symbol, firstZero.Side, stamp(firstZero.Time)),
			Value: ptr(float64(zero)), Threshold: ptr(0),
		})
	}
	if outside > 0 {
		out = append(out, Finding{
			ID: "fills_outside_range", Severity: Warning, Title: "Fills outside the bar's range",
			Detail: fmt.Sprintf("%d fill(s) at prices the bar never traded, the first %s %s at %.6g on %s: check slippage that may leave the bar, filters that change prices, or the data.",
				outside, firstOut.Symbol, firstOut.Side, firstOut.Price, stamp(firstOut.Time)),
			Value: ptr(float64(outside)), Threshold: ptr(0),
		})
	}
	return out
}

func stamp(t time.Time) string {
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.UTC().Format(time.DateOnly)
	}
	return t.UTC().Format(time.RFC3339)
}

// openAtEnd reports a position still open at the end whose unrealised profit or loss is
// most of the result.
func openAtEnd(res *engine.Result) []Finding {
	total := res.FinalValue - res.InitialCash
	if total == 0 || math.IsNaN(total) {
		return nil
	}
	var open float64
	var symbols []string
	for _, s := range res.Symbols {
		if s.FinalSize != 0 {
			open += s.PnL - s.PnLClosed
			symbols = append(symbols, s.Symbol)
		}
	}
	if len(symbols) == 0 {
		return nil
	}
	share := math.Abs(open) / math.Abs(total)
	if share <= OpenShareLimit {
		return nil
	}
	return []Finding{{
		ID: "open_position_at_end", Severity: Warning, Title: "An open position carries the result",
		Detail: fmt.Sprintf("The position(s) still open at the end (%v) hold %.4g of the result %.4g (%.1f%%), not realised: a close at another price could change the result.",
			symbols, open, total, 100*share),
		Value: ptr(100 * share), Threshold: ptr(100 * OpenShareLimit),
	}}
}

// timeInMarket is the share of the run's bars that ended holding a position, in any
// symbol: from the per-bar positions when the run kept them, else the largest symbol's
// exposure.
func timeInMarket(res *engine.Result) Finding {
	pct := 0.0
	pf := res.Analyzers.PyFolio.Positions
	if w, n := pf.Width, pf.Len(); w > 1 && n > 0 && len(pf.Flat) == w*n {
		held := 0
		for i := range n {
			if slices.ContainsFunc(pf.Row(i)[:w-1], func(v float64) bool { return v != 0 }) {
				held++
			}
		}
		pct = 100 * float64(held) / float64(n)
	} else {
		for _, s := range res.Symbols {
			pct = math.Max(pct, 100*s.Exposure)
		}
	}
	return Finding{
		ID: "time_in_market", Severity: Info, Title: "Time in market",
		Detail: fmt.Sprintf("A position was held at the end of %.1f%% of the bars; the rest of the time the money stayed in cash.", pct),
		Value:  ptr(pct),
	}
}

// Check is the latest look-ahead check of the run's strategy version on its data and
// timeframe; nil when none was made.
type Check struct {
	LookAhead bool
	Cuts      int
	CheckedAt time.Time
	Report    *bias.Report // nil when its report cannot be read
}

// OfCheck is what the look-ahead check says of the run: the verdict (or that none was
// made) and, when the check measured it, how long the indicators depend on the data's
// start.
func OfCheck(c *Check) []Finding {
	if c == nil {
		return []Finding{{
			ID: "lookahead", Severity: Info, Title: "Look-ahead never checked",
			Detail: "This strategy version was never checked for look-ahead on this data: POST /api/strategies/{id}/versions/{version}/lookahead (or the version's page) reruns it on cut data and tells whether it reads bars ahead.",
		}}
	}
	on := c.CheckedAt.UTC().Format(time.RFC3339)
	var out []Finding
	if c.LookAhead {
		n := 0.0
		if c.Report != nil {
			n = float64(len(c.Report.Findings))
		}
		out = append(out, Finding{
			ID: "lookahead", Severity: Critical, Title: "The strategy reads the future",
			Detail: fmt.Sprintf("The look-ahead check of %s found decisions or values that change when later bars are removed: the result uses data it could not have had. The check's report names them.", on),
			Value:  ptr(n), Threshold: ptr(0),
		})
	} else {
		out = append(out, Finding{
			ID: "lookahead", Severity: Info, Title: "No look-ahead found",
			Detail: fmt.Sprintf("The look-ahead check of %s reran the strategy on the data cut at %d points and nothing it decided or computed changed.", on, c.Cuts),
		})
	}
	if c.Report == nil || len(c.Report.Warmup) == 0 {
		return out
	}
	longest, unsettled := 0, []string{}
	for _, w := range c.Report.Warmup {
		longest = max(longest, w.Bars)
		if !w.Converged {
			unsettled = append(unsettled, w.What)
		}
	}
	if len(unsettled) > 0 {
		out = append(out, Finding{
			ID: "warmup", Severity: Warning, Title: "Indicators depend on where the data starts",
			Detail: fmt.Sprintf("Started later, %v never agreed with the full run within %d bars: the result depends on the first date chosen.", unsettled, longest),
			Value:  ptr(float64(len(unsettled))), Threshold: ptr(0),
		})
	} else {
		out = append(out, Finding{
			ID: "warmup", Severity: Info, Title: "Warm-up",
			Detail: fmt.Sprintf("Started later, every indicator agreed with the full run within %d bars.", longest),
			Value:  ptr(float64(longest)),
		})
	}
	return out
}
