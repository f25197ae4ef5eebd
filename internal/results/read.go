package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/store"
)

// notFound is the 404 for a task without a stored result.
func notFound(taskID string) error { return apperr.NotFound("Result not found: %s", taskID) }

// Summary is the 12 summary keys, in api/openapi.yaml's order. Nil means undefined (JSON null).
type Summary struct {
	InitialCash    float64  `json:"initial_cash"`
	FinalValue     float64  `json:"final_value"`
	TotalReturn    float64  `json:"total_return"`
	AnnualReturn   *float64 `json:"annual_return"`
	SharpeRatio    *float64 `json:"sharpe_ratio"`
	MaxDrawdown    float64  `json:"max_drawdown"`
	MaxDrawdownPct float64  `json:"max_drawdown_pct"`
	TotalTrades    int      `json:"total_trades"`
	WinRate        *float64 `json:"win_rate"`
	ProfitFactor   *float64 `json:"profit_factor"`
	AvgWin         *float64 `json:"avg_win"`
	AvgLoss        *float64 `json:"avg_loss"`
}

// SummaryKeys are the summary keys in api/openapi.yaml's order (the CSV export's rows).
var SummaryKeys = []string{"initial_cash", "final_value", "total_return", "annual_return", "sharpe_ratio",
	"max_drawdown", "max_drawdown_pct", "total_trades", "win_rate", "profit_factor", "avg_win", "avg_loss"}

// Values returns the summary's values in SummaryKeys order.
func (s Summary) Values() []*float64 {
	f := func(v float64) *float64 { return &v }
	return []*float64{f(s.InitialCash), f(s.FinalValue), f(s.TotalReturn), s.AnnualReturn, s.SharpeRatio,
		f(s.MaxDrawdown), f(s.MaxDrawdownPct), f(float64(s.TotalTrades)), s.WinRate, s.ProfitFactor, s.AvgWin, s.AvgLoss}
}

func summaryOf(r store.Result) Summary {
	return Summary{
		InitialCash: r.InitialCash, FinalValue: r.FinalValue, TotalReturn: r.TotalReturn,
		AnnualReturn: r.AnnualReturn, SharpeRatio: r.SharpeRatio, MaxDrawdown: r.MaxDrawdown,
		MaxDrawdownPct: r.MaxDrawdownPct, TotalTrades: int(r.TotalTrades), WinRate: r.WinRate,
		ProfitFactor: r.ProfitFactor, AvgWin: r.AvgWin, AvgLoss: r.AvgLoss,
	}
}

// GetSummary returns the stored summary of taskID.
func (svc *Service) GetSummary(ctx context.Context, taskID string) (Summary, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return Summary{}, err
	}
	return summaryOf(r), nil
}

// result is the stored results row of a task; a 404 when there is none.
func (svc *Service) result(ctx context.Context, taskID string) (store.Result, error) {
	r, err := q.GetResult(ctx, svc.db, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return r, notFound(taskID)
	}
	if err != nil {
		return r, fmt.Errorf("get result %s: %w", taskID, err)
	}
	return r, nil
}

// EngineSummary is a stored result's summary in the engine's shape: what a run's
// completion event carries.
func (svc *Service) EngineSummary(ctx context.Context, taskID string) (engine.Summary, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return engine.Summary{}, err
	}
	winRate := 0.0
	if r.WinRate != nil {
		winRate = *r.WinRate
	}
	return engine.Summary{
		InitialCash: r.InitialCash, FinalValue: r.FinalValue, TotalReturn: r.TotalReturn,
		AnnualReturn: r.AnnualReturn, SharpeRatio: r.SharpeRatio, MaxDrawdown: r.MaxDrawdown,
		MaxDrawdownPct: r.MaxDrawdownPct, TotalTrades: int(r.TotalTrades), WinRate: winRate,
		ProfitFactor: r.ProfitFactor, AvgWin: r.AvgWin, AvgLoss: r.AvgLoss, Won: int(r.Won),
		Lost: int(r.Lost), SQN: r.Sqn, MaxDrawdownDuration: int(r.MaxDrawdownDuration),
	}, nil
}

// TradeRow is one execution as the trade list and the CSV export show it: entries and exits
// both appear; pnl is what that execution realised (0 for an entry).
type TradeRow struct {
	Date       string  `json:"date"`
	Symbol     string  `json:"symbol"` // the feed it traded
	Type       string  `json:"type"`   // buy or sell
	Price      float64 `json:"price"`
	Size       float64 `json:"size"` // absolute; the type gives the direction
	PnL        float64 `json:"pnl"`
	Value      float64 `json:"value"`
	Commission float64 `json:"commission"`
	OrderRef   int32   `json:"order_ref"`
	// Status is the order's after this execution: Partial (more of it fills on later
	// bars), Completed, or "" for results stored before it was recorded.
	Status   string `json:"status"`
	Strategy int32  `json:"strategy"` // index of the strategy whose order filled (0 with one)
}

// RoundTrip is a closed (or still open) trade from entry to exit.
type RoundTrip struct {
	Seq        int32    `json:"seq"`
	TradeID    int32    `json:"tradeid"` // the strategy's grouping of orders (backtrader's tradeid), 0 by default
	Symbol     string   `json:"symbol"`
	IsOpen     bool     `json:"is_open"`
	EntryDate  string   `json:"entry_date"`
	ExitDate   *string  `json:"exit_date"`
	Size       float64  `json:"size"`
	EntryPrice float64  `json:"entry_price"`
	ExitPrice  *float64 `json:"exit_price"`
	BarsHeld   int32    `json:"bars_held"`
	PnLGross   float64  `json:"pnl_gross"`
	PnLNet     float64  `json:"pnl_net"`
	Commission float64  `json:"commission"`
	Strategy   int32    `json:"strategy"` // index of the strategy whose orders made it (0 with one)
}

// TradePage is the trades route's data.
type TradePage struct {
	Total  int64  `json:"total"`
	Trades any    `json:"trades"`
	Kind   string `json:"kind"`
}

// Trade kinds of the trades route.
const (
	KindExecutions = "executions"
	KindRoundTrips = "round_trips"
)

// FormatTime writes a bar or fill time: YYYY-MM-DD at midnight UTC, RFC 3339 otherwise.
func FormatTime(t time.Time) string {
	var b [32]byte
	return string(AppendTime(b[:0], t))
}

// AppendTime appends t as FormatTime writes it, without allocating: a chart writes one
// time per bar, two or three times over.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	if h, m, s := t.Clock(); h != 0 || m != 0 || s != 0 || t.Nanosecond() != 0 {
		return t.AppendFormat(b, time.RFC3339)
	}
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, time.DateOnly)
	}
	// Several times faster than t.AppendFormat.
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// TradeRowOf is execution e as the trade list shows it.
func TradeRowOf(e engine.Execution) TradeRow {
	return TradeRow{Date: FormatTime(e.Time), Symbol: e.Symbol, Type: e.Side, Price: e.Price, Size: math.Abs(e.Size), PnL: e.PnL,
		Value: e.Value, Commission: e.Commission, OrderRef: int32(e.Ref), Status: e.Status, Strategy: int32(e.Strategy)}
}

// RoundTripOf is the seq-th (1-based) round trip t as the trade list shows it.
func RoundTripOf(seq int, t engine.Trade) RoundTrip {
	rt := RoundTrip{Seq: int32(seq), TradeID: int32(t.TradeID), Symbol: t.Symbol, IsOpen: t.IsOpen, EntryDate: FormatTime(t.OpenTime), Size: t.Size,
		EntryPrice: t.EntryPrice, BarsHeld: int32(t.BarLen), PnLGross: t.PnLGross,
		PnLNet: t.PnLNet, Commission: t.Commission, Strategy: int32(t.Strategy)}
	if t.CloseTime != nil && !t.IsOpen {
		s := FormatTime(*t.CloseTime)
		x := t.ExitPrice
		rt.ExitDate, rt.ExitPrice = &s, &x
	}
	return rt
}

// Trades returns a page of the executions (kind "executions", the default) or of the round
// trips (kind "round_trips") of taskID's result.
func (svc *Service) Trades(ctx context.Context, taskID, kind string, skip, limit int) (TradePage, error) {
	if skip < 0 {
		return TradePage{}, apperr.Unprocessable("skip must be 0 or more, got %d", skip)
	}
	if limit < 0 {
		return TradePage{}, apperr.Unprocessable("limit must be 0 or more, got %d", limit)
	}
	if kind == "" {
		kind = KindExecutions
	}
	if kind != KindExecutions && kind != KindRoundTrips {
		return TradePage{}, apperr.Invalid("Unsupported trade kind: %s (use executions or round_trips)", kind)
	}
	if _, err := svc.GetSummary(ctx, taskID); err != nil {
		return TradePage{}, err
	}
	page := TradePage{Kind: kind}
	var err error
	if kind == KindExecutions {
		if page.Total, err = q.CountResultExecutions(ctx, svc.db, taskID); err != nil {
			return page, fmt.Errorf("count executions: %w", err)
		}
		rows, err := q.PageResultExecutions(ctx, svc.db, store.PageResultExecutionsParams{TaskID: taskID, Offset: clamp32(skip), Limit: clamp32(limit)})
		if err != nil {
			return page, fmt.Errorf("page executions: %w", err)
		}
		page.Trades = mapSlice(rows, func(r store.ResultExecution) TradeRow { return TradeRowOf(execution(r)) })
		return page, nil
	}
	if page.Total, err = q.CountResultTrades(ctx, svc.db, taskID); err != nil {
		return page, fmt.Errorf("count trades: %w", err)
	}
	rows, err := q.PageResultTrades(ctx, svc.db, store.PageResultTradesParams{TaskID: taskID, Offset: clamp32(skip), Limit: clamp32(limit)})
	if err != nil {
		return page, fmt.Errorf("page trades: %w", err)
	}
	page.Trades = mapSlice(rows, func(r store.ResultTrade) RoundTrip { return RoundTripOf(int(r.Seq), trade(r)) })
	return page, nil
}

// Size is how long a stored result is: what the memory of reading it grows with.
type Size struct {
	Bars       int // bars run, and points of the equity curve
	Executions int // fills; counted only when asked for
	RoundTrips int // round trips, the still open one included
}

// Size reads the size of taskID's result, counting its fills when withExecutions is set
// (a count over the result's rows: a strategy may fill many times per round trip). A task
// without a result is the not-found apperr.
func (svc *Service) Size(ctx context.Context, taskID string, withExecutions bool) (Size, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return Size{}, err
	}
	s := Size{Bars: int(r.Bars), RoundTrips: int(r.TotalTrades)}
	if withExecutions {
		n, err := q.CountResultExecutions(ctx, svc.db, taskID)
		if err != nil {
			return s, fmt.Errorf("count executions of %s: %w", taskID, err)
		}
		s.Executions = int(n)
	}
	return s, nil
}

// Stored is everything stored for one result, with what its task ran.
type Stored struct {
	TaskID     string
	Run        Run
	Summary    Summary
	SQN        float64
	Equity     []engine.EquityPoint
	Executions []engine.Execution
	Trades     []engine.Trade
	// Analyzers is the stored engine.Analyzers as JSON (DecodeAnalyzers reads it).
	Analyzers json.RawMessage
	// Provenance is the run's provenance.Provenance as JSON; nil when none was recorded.
	Provenance json.RawMessage
	// Strategies is each strategy's part of a run of several; empty for one.
	Strategies []engine.StrategyResult
}

// Run is what a result's task ran: strategy, data and money.
type Run struct {
	StrategyID      string
	StrategyName    string
	StrategyVersion int
	StrategyParams  json.RawMessage
	DataSource      string
	Symbol          string   // the first feed
	Symbols         []string // the feeds, in order
	Timeframe       string
	Benchmark       string // the symbol the run is measured against
	Timezone        string // IANA name: the zone of the first feed's data, where its times are shown
	StartDate       time.Time
	EndDate         time.Time
	InitialCash     float64
	Commission      float64
}

// Parts chooses what Load reads besides the run and its summary.
type Parts uint8

// Parts of a stored result.
const (
	EquityValues Parts = 1 << iota // the equity curve's times and values
	EquityFull                     // the whole equity curve: cash, returns and drawdowns too
	Executions                     // every fill
	RoundTrips                     // every round trip
	All          = EquityFull | Executions | RoundTrips
)

// Load reads the parts of taskID's result that parts names.
func (svc *Service) Load(ctx context.Context, taskID string, parts Parts) (*Stored, error) {
	row, err := q.GetResultWithTask(ctx, svc.db, taskID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound(taskID)
		}
		return nil, fmt.Errorf("get result %s: %w", taskID, err)
	}
	s := &Stored{TaskID: taskID, SQN: row.Sqn, Analyzers: row.Analyzers, Run: Run{
		StrategyID: row.StrategyID, StrategyName: row.StrategyName, StrategyVersion: int(row.StrategyVersion),
		StrategyParams: row.StrategyParams, DataSource: row.DataSource, Symbol: row.Symbol, Symbols: row.Symbols, Timeframe: row.Timeframe, Benchmark: row.Benchmark, Timezone: row.Timezone,
		StartDate: row.StartDate, EndDate: row.EndDate, InitialCash: row.InitialCash, Commission: row.Commission,
	}}
	s.Summary = Summary{
		InitialCash: row.InitialCash, FinalValue: row.FinalValue, TotalReturn: row.TotalReturn,
		AnnualReturn: row.AnnualReturn, SharpeRatio: row.SharpeRatio, MaxDrawdown: row.MaxDrawdown,
		MaxDrawdownPct: row.MaxDrawdownPct, TotalTrades: int(row.TotalTrades), WinRate: row.WinRate,
		ProfitFactor: row.ProfitFactor, AvgWin: row.AvgWin, AvgLoss: row.AvgLoss,
	}
	if s.Strategies, err = strategiesOf(taskID, row.ByStrategy); err != nil {
		return nil, err
	}
	if s.Provenance, err = q.RunProvenance(ctx, svc.db, taskID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("provenance of %s: %w", taskID, err)
	}
	if parts&(EquityValues|EquityFull) != 0 {
		if s.Equity, err = storedEquity(ctx, svc.db, taskID, row.InitialCash, parts&EquityFull == 0); err != nil {
			return nil, err
		}
	}
	if parts&Executions != 0 {
		execs, err := q.ListResultExecutions(ctx, svc.db, taskID)
		if err != nil {
			return nil, fmt.Errorf("executions of %s: %w", taskID, err)
		}
		s.Executions = mapSlice(execs, execution)
	}
	if parts&RoundTrips != 0 {
		if s.Trades, err = loadTrades(ctx, svc.db, taskID); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// State is taskID's status and whether it has a stored result; an unknown task is a
// not-found apperr.
func (svc *Service) State(ctx context.Context, taskID string) (status string, hasResult bool, err error) {
	st, err := q.GetTaskResultState(ctx, svc.db, taskID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", false, apperr.NotFound("Task not found: %s", taskID)
		}
		return "", false, fmt.Errorf("task %s: %w", taskID, err)
	}
	return st.Status, st.HasResult, nil
}

// storedEquity reads taskID's stored equity curve (none for a result without bars), its
// returns and drawdowns derived from the values and initialCash as the run did; with
// valuesOnly, only the times and values (what the equity chart and the statistics read).
func storedEquity(ctx context.Context, db store.DBTX, taskID string, initialCash float64, valuesOnly bool) ([]engine.EquityPoint, error) {
	var r store.GetResultEquityRow
	var err error
	if valuesOnly {
		var v store.GetResultEquityValuesRow
		v, err = q.GetResultEquityValues(ctx, db, taskID)
		r.TsFirst, r.TsSteps, r.Value = v.TsFirst, v.TsSteps, v.Value
	} else {
		r, err = q.GetResultEquity(ctx, db, taskID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("equity of %s: %w", taskID, err)
	}
	if len(r.TsSteps) != len(r.Value) || (len(r.TsSteps) > 0 && r.TsFirst == nil) {
		return nil, fmt.Errorf("equity of %s: %d times for %d values", taskID, len(r.TsSteps), len(r.Value))
	}
	out := make([]engine.EquityPoint, len(r.TsSteps))
	// The times are stored as the first and the step to each next one, in microseconds
	// (migration 00044; the SQL function equity_times does the same for the views).
	var t time.Time
	if r.TsFirst != nil {
		t = *r.TsFirst
	}
	for i, step := range r.TsSteps {
		t = t.Add(time.Duration(step) * time.Microsecond)
		out[i] = engine.EquityPoint{Time: t, Value: r.Value[i]}
		if !valuesOnly {
			out[i].Cash = r.Cash[i]
		}
	}
	if !valuesOnly {
		engine.DeriveEquity(initialCash, out)
	}
	return out, nil
}

// loadTrades reads taskID's round trips.
func loadTrades(ctx context.Context, db store.DBTX, taskID string) ([]engine.Trade, error) {
	rows, err := q.ListResultTrades(ctx, db, taskID)
	if err != nil {
		return nil, fmt.Errorf("trades of %s: %w", taskID, err)
	}
	return mapSlice(rows, trade), nil
}

func execution(r store.ResultExecution) engine.Execution {
	return engine.Execution{Ref: int(r.Ref), Symbol: r.Symbol, Time: r.Ts, Side: r.Side, ExecType: r.ExecType, Price: r.Price,
		Size: r.Size, Value: r.Value, Commission: r.Commission, PnL: r.Pnl, Status: r.Status, Strategy: int(r.Strategy)}
}

func trade(r store.ResultTrade) engine.Trade {
	t := engine.Trade{Ref: int(r.Ref), TradeID: int(r.Tradeid), Symbol: r.Symbol, OpenTime: r.OpenTs, CloseTime: r.CloseTs, Size: r.Size,
		EntryPrice: r.EntryPrice, PnLGross: r.PnlGross, PnLNet: r.PnlNet, Commission: r.Commission,
		BarLen: int(r.BarLen), IsOpen: r.IsOpen, Strategy: int(r.Strategy)}
	if r.ExitPrice != nil {
		t.ExitPrice = *r.ExitPrice
	}
	return t
}

func mapSlice[A, B any](in []A, f func(A) B) []B {
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}

// Statistics returns the statistics record of taskID's result: the one stored with
// the result, or, for results stored before records were kept, one computed
// (engine.ComputeStatistics) from the stored equity curve and round trips. A record stored
// before the Risk group existed gets that group computed from the stored equity curve.
func (svc *Service) Statistics(ctx context.Context, taskID string) (engine.Statistics, error) {
	r, err := q.GetResultStatistics(ctx, svc.db, taskID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return engine.Statistics{}, notFound(taskID)
		}
		return engine.Statistics{}, fmt.Errorf("get result %s: %w", taskID, err)
	}
	if len(r.Record) == 0 {
		return computeStatistics(ctx, svc.db, taskID, r.InitialCash, r.Sqn)
	}
	var st engine.Statistics
	if err := json.Unmarshal(r.Record, &st); err != nil {
		return engine.Statistics{}, fmt.Errorf("statistics of %s: %w", taskID, err)
	}
	if slices.ContainsFunc(st.Groups, func(g engine.StatGroup) bool { return g.Name == engine.RiskGroupName }) {
		return st, nil
	}
	eq, err := storedEquity(ctx, svc.db, taskID, r.InitialCash, true)
	if err != nil {
		return engine.Statistics{}, err
	}
	// Where ComputeStatistics puts it: after Time, before a Benchmark group.
	at := len(st.Groups)
	if i := slices.IndexFunc(st.Groups, func(g engine.StatGroup) bool { return g.Name == "Benchmark" }); i >= 0 {
		at = i
	}
	st.Groups = slices.Insert(st.Groups, at, engine.RiskGroup(r.InitialCash, eq))
	return st, nil
}

// computeStatistics computes the statistics record from the stored rows (without the
// benchmark group: these results predate it).
func computeStatistics(ctx context.Context, db store.DBTX, taskID string, initialCash, sqn float64) (engine.Statistics, error) {
	eq, err := storedEquity(ctx, db, taskID, initialCash, true)
	if err != nil {
		return engine.Statistics{}, err
	}
	trades, err := loadTrades(ctx, db, taskID)
	if err != nil {
		return engine.Statistics{}, err
	}
	return engine.ComputeStatistics(initialCash, eq, trades, sqn, nil), nil
}

// Params decodes the task's strategy parameters.
func (s *Stored) Params() map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(s.Run.StrategyParams, &m)
	return m
}

func clamp32(n int) int32 { return int32(min(n, math.MaxInt32)) }

// Service reads stored results: summaries, trades, statistics and whole results for the
// report package's charts, exports and comparisons. Results are written by Save, in the
// transaction that completes their task.
type Service struct {
	db store.DBTX
}

// NewService returns a Service reading from db.
func NewService(db store.DBTX) *Service { return &Service{db: db} }

// Strategies returns each strategy's part of taskID's result, in the order they ran: empty
// for a run of one strategy (and for results stored before runs could hold several).
func (svc *Service) Strategies(ctx context.Context, taskID string) ([]engine.StrategyResult, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return strategiesOf(taskID, r.ByStrategy)
}

// strategiesOf reads a result's stored by_strategy document, labelled (results stored before
// labels existed have none).
func strategiesOf(taskID string, raw []byte) ([]engine.StrategyResult, error) {
	out := []engine.StrategyResult{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("strategies of %s: %w", taskID, err)
		}
	}
	engine.LabelStrategies(out)
	return out, nil
}

// Symbols returns the per-feed breakdown of taskID's result, in feed order. Results stored
// before breakdowns were kept ran on one feed: theirs is derived from the stored summary
// and rows, with the exposure taken from the round trips' bars held.
func (svc *Service) Symbols(ctx context.Context, taskID string) ([]engine.SymbolResult, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return nil, err
	}
	var out []engine.SymbolResult
	if err := json.Unmarshal(r.BySymbol, &out); err != nil {
		return nil, fmt.Errorf("symbols of %s: %w", taskID, err)
	}
	if len(out) > 0 {
		return out, nil
	}
	s, err := svc.Load(ctx, taskID, Executions|RoundTrips)
	if err != nil {
		return nil, err
	}
	one := engine.SymbolResult{Symbol: s.Run.Symbol, PnL: r.FinalValue - r.InitialCash, Contribution: r.TotalReturn}
	held := 0
	for _, x := range s.Executions {
		one.AddExecution(x)
	}
	for _, t := range s.Trades {
		held += t.BarLen
		one.AddTrade(t)
	}
	if r.Bars > 0 {
		one.Exposure = min(float64(held)/float64(r.Bars), 1)
	}
	return []engine.SymbolResult{one}, nil
}
