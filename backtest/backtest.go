// Package backtest runs a JavaScript strategy over bars in this process and returns what
// the run produced: fills, round trips, the equity curve, backtrader's analyzers and the
// statistics. It is the library beneath `backtestd run`, for a Go program that backtests
// its own strategies without the service.
//
// Strategies are the ones the service takes (see docs/strategy-api.md): a class extending
// Strategy with static params, init() and next(). They run in the calling process under a
// wall-time and a memory limit but without the service's OS isolation, so use this package
// only for code you trust; the service runs uploaded code in separate runner processes.
//
// The types are the engine's own, under stable names: a Result marshals to the JSON that
// the service's export route and `backtestd run --json` write.
package backtest

import (
	"context"
	"io"
	"time"

	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

type (
	// Bar is one OHLCV bar; Time is its open time.
	Bar = engine.Bar
	// Feed is one symbol's bars, oldest first. A strategy's this.datas[i] is Feeds[i].
	Feed = engine.Feed
	// Result is everything a run produced.
	Result = engine.Result
	// Statistics are the figures of the service's statistics route.
	Statistics = engine.Statistics
	// LogEntry is a line the strategy (this.log) or the engine (fills, trades) wrote.
	LogEntry = engine.LogEntry
	// Error is a failed run: Kind is "strategy" (an exception or a bad parameter, with
	// Line when known), "timeout", "memory" or "cancelled".
	Error = jsrt.RunError
)

// Defaults of a run.
const (
	DefaultCash      = 10000
	DefaultTimeLimit = jsrt.DefaultWallTimeLimit
)

// Config describes one run.
type Config struct {
	Code   string         // the strategy's JavaScript source
	Params map[string]any // overrides of its static params, checked against their types
	Feeds  []Feed         // at least one; bars oldest first

	Cash       float64 // starting cash; 0 means DefaultCash
	Commission float64 // fraction of the traded value, e.g. 0.001

	TimeLimit   time.Duration // wall time; 0 means DefaultTimeLimit
	MemoryLimit uint64        // bytes of heap the run may grow by; 0 means 1 GiB

	OnLog func(LogEntry) // called for each line as it is written; nil keeps them in Result.Logs
	// QuietEngine drops the engine's own lines (orders submitted, filled, cancelled, trades
	// closed): only the strategy's reach OnLog or Result.Logs, and a run with many orders
	// does not spend its time formatting the others.
	QuietEngine bool
	// SummaryOnly leaves out of Result.Analyzers what the summary, the equity curve, the
	// trades and ComputeStatistics do not need (backtrader's Returns, VWR, Calmar,
	// AnnualReturn, TimeReturn, the Sharpe ratios of years and months, PyFolio's
	// transactions): for a parameter study, which keeps only those of each run.
	SummaryOnly bool
	OnProgress  func(current, total int) // called every 1% of the bars; may be nil
}

// Run runs the strategy over the feeds. A failure of the strategy itself is an *Error;
// when ctx ends first the error is an *Error of kind "cancelled" wrapping ctx.Err().
func Run(ctx context.Context, cfg Config) (*Result, error) {
	return jsrt.Run(ctx, jsrtConfig(cfg))
}

func jsrtConfig(cfg Config) jsrt.RunConfig {
	return jsrt.RunConfig{
		Code: cfg.Code, Params: cfg.Params, Feeds: cfg.Feeds,
		Cash: cfg.Cash, Commission: cfg.Commission,
		WallTimeLimit: cfg.TimeLimit, MemoryLimit: cfg.MemoryLimit,
		OnProgress: cfg.OnProgress, OnLog: cfg.OnLog, QuietEngine: cfg.QuietEngine,
		SummaryOnly: cfg.SummaryOnly,
	}
}

// Batch runs one strategy on one set of feeds with many parameter sets, as a parameter
// study does: the code is compiled once, and the bars' columns and the indicators of equal
// inputs are computed once and shared by the runs instead of being built again for each.
// Every run has a fresh JavaScript runtime, so no state passes from one run to another, and
// its result is the one Run gives for the same Config. Run may be called from several
// goroutines at once, one run per goroutine, to use every core.
type Batch struct {
	b *jsrt.Batch
}

// NewBatch prepares runs of cfg with different parameters; cfg.Params is ignored. OnLog
// and OnProgress, when set, are called by every run from the goroutine running it.
func NewBatch(cfg Config) *Batch {
	return &Batch{b: jsrt.NewBatch(jsrtConfig(cfg))}
}

// Run runs the batch's strategy with params overriding its static params; errors are
// Run's.
func (b *Batch) Run(ctx context.Context, params map[string]any) (*Result, error) {
	return b.b.Run(ctx, params)
}

// ComputeStatistics derives the statistics (returns, risk, drawdowns, trade figures, the
// monthly and yearly tables) of a result.
func ComputeStatistics(r *Result) Statistics {
	return engine.ComputeStatistics(r.InitialCash, r.Equity, r.Trades, r.Summary.SQN, nil)
}

// ComputeStatisticsAgainst is ComputeStatistics with the "Benchmark" group: alpha, beta,
// correlation, tracking error and information ratio against buying bench with the
// starting cash at its first close and holding it, as the service measures a task against
// its benchmark (by default its first feed).
func ComputeStatisticsAgainst(r *Result, bench Feed) Statistics {
	return engine.ComputeStatistics(r.InitialCash, r.Equity, r.Trades, r.Summary.SQN,
		&engine.Benchmark{Symbol: bench.Symbol, Values: engine.BuyAndHold(r.InitialCash, bench.Bars, r.Equity)})
}

// ReadCSV reads bars from CSV as the service's import does: the date,open,high,low,close,
// volume layout or Yahoo's (its Adj Close is ignored), oldest first. An error names the
// line at fault.
func ReadCSV(r io.Reader) ([]Bar, error) { return barcsv.Parse(r) }
