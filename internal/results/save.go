// Package results stores a finished backtest's result relationally (one summary row, one row
// per execution, per round trip and per equity point) and serves every read of it: summary,
// trade pages, statistics and whole results. It owns the result tables and their SQL;
// charts, exports and comparisons are the report package's, built on Load.
package results

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/pnlmonths"
	"github.com/backtestd/backtestd/internal/store"
)

var q = store.New()

// Save stores res as the result of taskID's attempt, replacing any result the task already
// has (so a retried task that completes again is idempotent). It writes the summary row and
// COPYs the executions, round trips and equity points, so it belongs inside the caller's
// completion transaction: db is typically a pgx.Tx. The task row must exist. bench, when
// given, is what the statistics measure the run against.
func Save(ctx context.Context, db store.DBTX, taskID string, attempt int, res *engine.Result, bench *engine.Benchmark) error {
	if res == nil {
		return fmt.Errorf("save result %s: nil result", taskID)
	}
	if err := pnlmonths.Remove(ctx, db, taskID); err != nil { // what a previous result added
		return fmt.Errorf("save result %s: %w", taskID, err)
	}
	if err := q.DeleteResult(ctx, db, taskID); err != nil {
		return fmt.Errorf("save result %s: delete previous: %w", taskID, err)
	}
	doc := res.Analyzers
	positions := splitPositions(res)
	if positions != nil && derivableTransactions(taskID, res) {
		// Kept with the equity curve and derived from the stored fills (RestorePositions):
		// an empty positions list and null transactions.
		doc.PyFolio.Positions, doc.PyFolio.Transactions = engine.Rows{}, nil
	} else {
		positions = nil
	}
	analyzers, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("save result %s: analyzers: %w", taskID, err)
	}
	bySymbol := []byte("[]")
	if len(res.Symbols) > 0 {
		if bySymbol, err = json.Marshal(res.Symbols); err != nil {
			return fmt.Errorf("save result %s: symbols: %w", taskID, err)
		}
	}
	byStrategy := []byte("[]")
	if len(res.Strategies) > 0 {
		if byStrategy, err = json.Marshal(res.Strategies); err != nil {
			return fmt.Errorf("save result %s: strategies: %w", taskID, err)
		}
	}
	s := res.Summary
	winRate := finite(s.WinRate)
	err = q.InsertResult(ctx, db, store.InsertResultParams{
		TaskID:              taskID,
		Attempt:             int32(attempt),
		InitialCash:         res.InitialCash,
		FinalValue:          res.FinalValue,
		FinalCash:           res.FinalCash,
		TotalReturn:         s.TotalReturn,
		AnnualReturn:        finitePtr(s.AnnualReturn),
		SharpeRatio:         finitePtr(s.SharpeRatio),
		MaxDrawdown:         s.MaxDrawdown,
		MaxDrawdownPct:      s.MaxDrawdownPct,
		MaxDrawdownDuration: int32(s.MaxDrawdownDuration),
		TotalTrades:         int32(s.TotalTrades),
		Won:                 int32(s.Won),
		Lost:                int32(s.Lost),
		WinRate:             winRate,
		ProfitFactor:        finitePtr(s.ProfitFactor),
		AvgWin:              finitePtr(s.AvgWin),
		AvgLoss:             finitePtr(s.AvgLoss),
		Sqn:                 s.SQN,
		Bars:                int32(len(res.Equity)),
		Analyzers:           analyzers,
		BySymbol:            bySymbol,
		ByStrategy:          byStrategy,
	})
	if err != nil {
		return fmt.Errorf("save result %s: insert summary: %w", taskID, err)
	}
	// The statistics record is computed once here (from what is stored below) and kept, so
	// the statistics route reads one row.
	record, err := json.Marshal(engine.ComputeStatistics(res.InitialCash, res.Equity, storedTrades(res.Trades), s.SQN, bench))
	if err != nil {
		return fmt.Errorf("save result %s: statistics: %w", taskID, err)
	}
	if err := q.InsertResultStatistics(ctx, db, store.InsertResultStatisticsParams{TaskID: taskID, Record: record}); err != nil {
		return fmt.Errorf("save result %s: statistics: %w", taskID, err)
	}

	if len(res.Executions) > 0 {
		rows := make([]store.CopyResultExecutionsParams, len(res.Executions))
		for i, e := range res.Executions {
			rows[i] = store.CopyResultExecutionsParams{
				TaskID: taskID, Seq: int32(i + 1), Ref: int32(e.Ref), Ts: e.Time, Side: e.Side,
				ExecType: e.ExecType, Price: e.Price, Size: e.Size, Value: e.Value,
				Commission: e.Commission, Pnl: e.PnL, Symbol: e.Symbol, Status: e.Status, Strategy: int16(e.Strategy),
			}
		}
		if _, err := q.CopyResultExecutions(ctx, db, rows); err != nil {
			return fmt.Errorf("save result %s: executions: %w", taskID, err)
		}
	}
	if len(res.Trades) > 0 {
		rows := make([]store.CopyResultTradesParams, len(res.Trades))
		for i, t := range res.Trades {
			r := store.CopyResultTradesParams{
				TaskID: taskID, Seq: int32(i + 1), Ref: int32(t.Ref), Symbol: t.Symbol, IsOpen: t.IsOpen,
				OpenTs: t.OpenTime, CloseTs: t.CloseTime, Size: t.Size, EntryPrice: t.EntryPrice,
				PnlGross: t.PnLGross, PnlNet: t.PnLNet, Commission: t.Commission, BarLen: int32(t.BarLen), Tradeid: int32(t.TradeID),
				Strategy: int16(t.Strategy),
			}
			if !t.IsOpen && t.CloseTime != nil {
				x := t.ExitPrice
				r.ExitPrice = &x
			} else {
				r.CloseTs = nil
			}
			rows[i] = r
		}
		if _, err := q.CopyResultTrades(ctx, db, rows); err != nil {
			return fmt.Errorf("save result %s: trades: %w", taskID, err)
		}
	}
	if len(res.Equity) > 0 {
		n := len(res.Equity)
		// Returns and drawdowns are not stored: they follow from the values (engine.DeriveEquity).
		// The times as the first and the step to each next one, in microseconds (migration
		// 00044): a daily series' steps repeat, and compress to almost nothing.
		row := store.InsertResultEquityParams{TaskID: taskID, TsFirst: res.Equity[0].Time, TsSteps: make([]int64, n),
			Value: make([]float64, n), Cash: make([]float64, n), Positions: positions}
		prev := res.Equity[0].Time
		for i, p := range res.Equity {
			row.TsSteps[i] = p.Time.Sub(prev).Microseconds()
			prev = p.Time
			row.Value[i], row.Cash[i] = p.Value, p.Cash
		}
		if err := q.InsertResultEquity(ctx, db, row); err != nil {
			return fmt.Errorf("save result %s: equity: %w", taskID, err)
		}
	}
	// Last: the months' rows stay locked until the caller commits, and other workers
	// completing runs of the same strategy wait for them.
	if err := pnlmonths.Add(ctx, db, taskID); err != nil {
		return fmt.Errorf("save result %s: %w", taskID, err)
	}
	return nil
}

// splitPositions returns the feed columns of res's PyFolio positions, row by row, when the
// rows are the equity curve's (one per point, the last column its cash to the bit), so that
// the analyzers document can leave them out: 80% of it, about 160 KB of JSON for 5,000 bars.
// Nil: the document keeps them.
func splitPositions(res *engine.Result) []float64 {
	pf := res.Analyzers.PyFolio
	w := pf.Positions.Width
	if w < 1 || len(pf.Symbols) != w || len(res.Equity) == 0 || pf.Positions.Len() != len(res.Equity) || len(pf.Positions.Flat) != w*len(res.Equity) {
		return nil
	}
	out := make([]float64, 0, (w-1)*len(res.Equity))
	for i, p := range res.Equity {
		row := pf.Positions.Row(i)
		if math.Float64bits(row[w-1]) != math.Float64bits(p.Cash) {
			return nil
		}
		out = append(out, row[:w-1]...)
	}
	return out
}

// derivableTransactions tells whether res's PyFolio transactions are what reading derives
// from its fills as stored (times in microseconds, in UTC), to the bit.
func derivableTransactions(taskID string, res *engine.Result) bool {
	pf := res.Analyzers.PyFolio
	if len(pf.Symbols) == 0 {
		return false
	}
	xs := make([]engine.Execution, len(res.Executions))
	for i, e := range res.Executions {
		xs[i] = execution(store.ResultExecution{TaskID: taskID, Ts: e.Time.Truncate(time.Microsecond).UTC(), Price: e.Price, Size: e.Size, Symbol: e.Symbol})
	}
	got := engine.Transactions(pf.Symbols[:len(pf.Symbols)-1], xs)
	if len(got) != len(pf.Transactions) {
		return false
	}
	for i, t := range pf.Transactions {
		g := got[i]
		if !g.Time.Equal(t.Time) || g.Time.Location() != t.Time.Location() || g.SID != t.SID || g.Symbol != t.Symbol ||
			math.Float64bits(g.Amount) != math.Float64bits(t.Amount) || math.Float64bits(g.Price) != math.Float64bits(t.Price) ||
			math.Float64bits(g.Value) != math.Float64bits(t.Value) {
			return false
		}
	}
	return true
}

// storedTrades returns trades as they read back from result_trades: an open trade has no
// close time and no exit price.
func storedTrades(trades []engine.Trade) []engine.Trade {
	out := make([]engine.Trade, len(trades))
	for i, t := range trades {
		if t.IsOpen || t.CloseTime == nil {
			t.CloseTime, t.ExitPrice = nil, 0
		}
		out[i] = t
	}
	return out
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func finitePtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return finite(*v)
}
