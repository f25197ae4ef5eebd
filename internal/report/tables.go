package report

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tabular"
)

// ExportTables are the tables a result exports one at a time, as plain CSV or Parquet
// (tabular): its round trips, its fills, its equity curve and its statistics record.
var ExportTables = []string{"trades", "executions", "equity", "statistics"}

// CheckExportTable is the 400 for a table or format a table export does not have.
func CheckExportTable(table, format string) error {
	if !slices.Contains(ExportTables, table) {
		return apperr.Invalid("Unsupported export table: %q (use %s)", table, strings.Join(ExportTables, ", "))
	}
	if !slices.Contains(tabular.Formats, format) {
		return apperr.Invalid("Unsupported format for table %s: %q (use %s)", table, format, strings.Join(tabular.Formats, " or "))
	}
	return nil
}

// ExportTable returns table (one of ExportTables) of taskID's result: the rows the API
// answers for it (every fill, round trip, point of the equity curve or statistic), with
// each fill's and round trip's symbol, strategy and commission.
func (svc *Service) ExportTable(ctx context.Context, taskID, table string) (tabular.Table, error) {
	if err := CheckExportTable(table, "csv"); err != nil {
		return tabular.Table{}, err
	}
	if table == "statistics" {
		st, err := svc.results.Statistics(ctx, taskID)
		if err != nil {
			return tabular.Table{}, err
		}
		return statisticsTable(st), nil
	}
	parts := map[string]results.Parts{"trades": results.RoundTrips, "executions": results.Executions, "equity": results.EquityFull}[table]
	s, err := svc.results.Load(ctx, taskID, parts)
	if err != nil {
		return tabular.Table{}, err
	}
	switch table {
	case "trades":
		return tradesTable(s), nil
	case "executions":
		return executionsTable(s), nil
	}
	return equityTable(s.Equity), nil
}

// strategyName is the name of a result's i-th strategy: its label in a run of several, the
// strategy's name in a run of one.
func strategyName(s *results.Stored, i int) string {
	if len(s.Strategies) == 0 {
		return s.Run.StrategyName
	}
	if i >= 0 && i < len(s.Strategies) {
		return s.Strategies[i].Label
	}
	return ""
}

func executionsTable(s *results.Stored) tabular.Table {
	x := s.Executions
	col := func(name string, kind tabular.Kind, f func(e *engine.Execution) any) tabular.Column {
		return tabular.Column{Name: name, Kind: kind, Cell: func(i int) any { return f(&x[i]) }}
	}
	return tabular.Table{Rows: len(x), Columns: []tabular.Column{
		col("date", tabular.Time, func(e *engine.Execution) any { return e.Time }),
		col("symbol", tabular.String, func(e *engine.Execution) any { return e.Symbol }),
		col("strategy", tabular.String, func(e *engine.Execution) any { return strategyName(s, e.Strategy) }),
		col("type", tabular.String, func(e *engine.Execution) any { return e.Side }),
		col("price", tabular.Float, func(e *engine.Execution) any { return e.Price }),
		col("size", tabular.Float, func(e *engine.Execution) any { return math.Abs(e.Size) }),
		col("value", tabular.Float, func(e *engine.Execution) any { return e.Value }),
		col("commission", tabular.Float, func(e *engine.Execution) any { return e.Commission }),
		col("pnl", tabular.Float, func(e *engine.Execution) any { return e.PnL }),
		col("order_ref", tabular.Int, func(e *engine.Execution) any { return int64(e.Ref) }),
		col("status", tabular.String, func(e *engine.Execution) any { return e.Status }),
	}}
}

func tradesTable(s *results.Stored) tabular.Table {
	x := s.Trades
	col := func(name string, kind tabular.Kind, f func(seq int, t *engine.Trade) any) tabular.Column {
		return tabular.Column{Name: name, Kind: kind, Cell: func(i int) any { return f(i+1, &x[i]) }}
	}
	closed := func(t *engine.Trade) bool { return t.CloseTime != nil && !t.IsOpen }
	exit := col("exit_date", tabular.Time, func(_ int, t *engine.Trade) any {
		if !closed(t) {
			return nil
		}
		return *t.CloseTime
	})
	exitPrice := col("exit_price", tabular.Float, func(_ int, t *engine.Trade) any {
		if !closed(t) {
			return nil
		}
		return t.ExitPrice
	})
	exit.Nullable, exitPrice.Nullable = true, true
	return tabular.Table{Rows: len(x), Columns: []tabular.Column{
		col("seq", tabular.Int, func(seq int, _ *engine.Trade) any { return int64(seq) }),
		col("tradeid", tabular.Int, func(_ int, t *engine.Trade) any { return int64(t.TradeID) }),
		col("symbol", tabular.String, func(_ int, t *engine.Trade) any { return t.Symbol }),
		col("strategy", tabular.String, func(_ int, t *engine.Trade) any { return strategyName(s, t.Strategy) }),
		col("is_open", tabular.Bool, func(_ int, t *engine.Trade) any { return t.IsOpen }),
		col("entry_date", tabular.Time, func(_ int, t *engine.Trade) any { return t.OpenTime }),
		exit,
		col("size", tabular.Float, func(_ int, t *engine.Trade) any { return t.Size }),
		col("entry_price", tabular.Float, func(_ int, t *engine.Trade) any { return t.EntryPrice }),
		exitPrice,
		col("bars_held", tabular.Int, func(_ int, t *engine.Trade) any { return int64(t.BarLen) }),
		col("pnl_gross", tabular.Float, func(_ int, t *engine.Trade) any { return t.PnLGross }),
		col("pnl_net", tabular.Float, func(_ int, t *engine.Trade) any { return t.PnLNet }),
		col("commission", tabular.Float, func(_ int, t *engine.Trade) any { return t.Commission }),
	}}
}

func equityTable(x []engine.EquityPoint) tabular.Table {
	col := func(name string, kind tabular.Kind, f func(p *engine.EquityPoint) any) tabular.Column {
		return tabular.Column{Name: name, Kind: kind, Cell: func(i int) any { return f(&x[i]) }}
	}
	return tabular.Table{Rows: len(x), Columns: []tabular.Column{
		col("date", tabular.Time, func(p *engine.EquityPoint) any { return p.Time }),
		col("value", tabular.Float, func(p *engine.EquityPoint) any { return p.Value }),
		col("cash", tabular.Float, func(p *engine.EquityPoint) any { return p.Cash }),
		col("return", tabular.Float, func(p *engine.EquityPoint) any { return p.Return }),
		col("drawdown", tabular.Float, func(p *engine.EquityPoint) any { return p.Drawdown }),
		col("drawdown_money", tabular.Float, func(p *engine.EquityPoint) any { return p.DrawdownMoney }),
	}}
}

// statisticsTable is the statistics record one metric a row, in the record's order.
func statisticsTable(st engine.Statistics) tabular.Table {
	type row struct {
		group string
		m     engine.Metric
	}
	var rows []row
	for _, g := range st.Groups {
		for _, m := range g.Metrics {
			rows = append(rows, row{g.Name, m})
		}
	}
	col := func(name string, kind tabular.Kind, f func(r *row) any) tabular.Column {
		return tabular.Column{Name: name, Kind: kind, Cell: func(i int) any { return f(&rows[i]) }}
	}
	value := col("value", tabular.Float, func(r *row) any {
		if r.m.Value == nil {
			return nil
		}
		return *r.m.Value
	})
	value.Nullable = true
	return tabular.Table{Rows: len(rows), Columns: []tabular.Column{
		col("group", tabular.String, func(r *row) any { return r.group }),
		col("key", tabular.String, func(r *row) any { return r.m.Key }),
		col("label", tabular.String, func(r *row) any { return r.m.Label }),
		value,
		col("display", tabular.String, func(r *row) any { return r.m.Display }),
	}}
}
