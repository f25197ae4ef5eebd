// Package tasks is the backtest task lifecycle: create (validated, stored as pending and
// enqueued in one transaction), list, read, cancel, retry, progress and logs, and the run
// step a River worker executes (load bars and the recorded strategy version, run the engine,
// store the result and the completion in one transaction, publish events).
//
// States follow the spec's table with the deviations of DESIGN.md: cancelling a pending
// task cancels it and removes its job; a failed or cancelled task can be retried as a new
// attempt. Every worker-side status change is guarded by the task's status and attempt, so
// a cancel, a retry or a rescued duplicate job can never overwrite a newer state.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/store"
)

// MaxFeeds is the most symbols one task runs on (documented in api/openapi.yaml).
const MaxFeeds = 20

// Defaults of a backtest request (the spec's Limits).
const (
	DefaultCash       = 10000
	DefaultCommission = 0.001
)

// Bounds of a backtest request, documented in api/openapi.yaml: initial_cash is finite,
// greater than 0 and at most MaxCash; commission is a fraction of the traded value, from 0
// up to but not including 1; start_date and end_date are from marketdata.MinDay to
// marketdata.MaxDay.
const MaxCash = 1e12

// States of a task.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Statuses lists the valid states, for validating filters.
var Statuses = []string{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled}

// Config configures a Service.
type Config struct {
	RunTimeout  time.Duration // wall-time limit of one run; 0: jsrt's default
	MemoryLimit uint64        // bytes; 0: jsrt's default
	LogDir      string        // when set, log lines are appended to <LogDir>/<session_id>.log
	// CPU is this process's places for runs that compute (nil: no limit), shared with the
	// studies' runs (see fairshare.Slots).
	CPU *fairshare.Slots
	// Runner runs the strategy code, which is untrusted: in the service, a pool of runner
	// processes (internal/runner). Required for Execute.
	Runner Runner
	// Lease is how long a running task's worker may go without renewing its lease before
	// Reap queues the task again (0: DefaultLease).
	Lease time.Duration
	// UserMaxRunning is how many units of work (backtests and study jobs) of one user run
	// at once over all workers (0: no limit; see fairshare.Admit). The user's other tasks
	// wait, and the queue serves other users meanwhile. Tasks without an owner (accounts
	// off) are not limited.
	UserMaxRunning int
}

// Runner runs one backtest of strategy code. Failures of the strategy are *jsrt.RunError;
// other errors are infrastructure failures and are retried.
type Runner interface {
	Run(ctx context.Context, cfg jsrt.RunConfig) (*engine.Result, error)
}

// Service implements the task lifecycle. Create it with New, then give it the River client
// with SetQueue (the client's worker needs the service, so they are built in two steps).
type Service struct {
	cfg   Config
	db    *store.Store
	q     *store.Queries
	pub   *events.Publisher
	log   *slog.Logger
	queue *jobs.Client
	feeds *marketdata.Feeds
	// stopping is set when the worker shuts down: runs interrupted from then on are handed
	// back to the queue rather than retried as failures.
	stopping atomic.Bool
	worker   string // this process, as the attempt history names it
	metrics  *metrics
}

// New returns a service over db.
func New(cfg Config, db *store.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	s := &Service{cfg: cfg, db: db, q: db.Queries, pub: events.NewPublisher(db.Pool), log: log,
		feeds:  marketdata.NewFeeds(db, 0),
		worker: jobs.WorkerName()}
	s.metrics = newMetrics(s)
	return s
}

// Stopping tells the service its worker is shutting down: runs cancelled from now on (by
// River's hard stop after the grace period) go back to the queue unchanged, without
// failing or spending an attempt.
func (s *Service) Stopping() { s.stopping.Store(true) }

// SetQueue gives the service the River client it enqueues and cancels jobs with.
func (s *Service) SetQueue(c *jobs.Client) { s.queue = c }

// Publisher returns the service's event publisher.
func (s *Service) Publisher() *events.Publisher { return s.pub }

// Request is the body of POST /api/backtests (the spec's BacktestRequest) plus session_id.
// Pointers tell a missing field from a zero one.
type Request struct {
	StrategyID *string `json:"strategy_id"`
	// StrategyVersion picks an earlier version of the strategy; nil runs the current one.
	StrategyVersion *int           `json:"strategy_version"`
	StrategyParams  map[string]any `json:"strategy_params"`
	DataSource      *string        `json:"data_source"`
	Symbol          *string        `json:"symbol"`
	// Symbols are several feeds, in order (this.datas[i]), instead of Symbol.
	Symbols []string `json:"symbols"`
	// Timeframe is the bars' interval (marketdata.Timeframes; default 1d), aggregated from
	// finer stored bars.
	Timeframe *string `json:"timeframe"`
	// Benchmark is the symbol of the data source the run is measured against (bought and
	// held); default the first feed.
	Benchmark   *string  `json:"benchmark"`
	StartDate   *string  `json:"start_date"`
	EndDate     *string  `json:"end_date"`
	InitialCash *float64 `json:"initial_cash"`
	Commission  *float64 `json:"commission"`
	SessionID   *string  `json:"session_id"`
	// By is the user submitting it, the task's owner (not read from JSON); nil for nobody.
	By *string `json:"-"`
}

// Task is the spec's BacktestStatus plus what the task records (strategy version, attempt,
// request). Attempts is filled by Get.
type Task struct {
	TaskID          string          `json:"task_id"`
	Status          string          `json:"status"`
	Progress        float64         `json:"progress"`
	CurrentBar      int             `json:"current_bar"`
	TotalBars       int             `json:"total_bars"`
	Error           *string         `json:"error"`
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       *time.Time      `json:"started_at"`
	CompletedAt     *time.Time      `json:"completed_at"`
	StrategyID      string          `json:"strategy_id"`
	StrategyVersion int             `json:"strategy_version"`
	Attempt         int             `json:"attempt"`
	DataSource      string          `json:"data_source"`
	Symbol          string          `json:"symbol"`
	Symbols         []string        `json:"symbols"` // the feeds in order; Symbol is the first (a database check keeps it so)
	Timeframe       string          `json:"timeframe"`
	Benchmark       string          `json:"benchmark"`
	Timezone        string          `json:"timezone"` // the first feed's: where its times are shown, and local time for its strategy
	StartDate       string          `json:"start_date"`
	EndDate         string          `json:"end_date"`
	InitialCash     float64         `json:"initial_cash"`
	Commission      float64         `json:"commission"`
	StrategyParams  json.RawMessage `json:"strategy_params"`
	SessionID       string          `json:"session_id"`
	CreatedBy       *string         `json:"created_by"` // the user who submitted it, its owner; nil without accounts
	Attempts        []Attempt       `json:"attempts,omitempty"`
	Figures         *Figures        `json:"figures,omitempty"` // in lists only: the result's key figures, when it has one
}

// Attempt is one run of a task: the first, and one per retry.
type Attempt struct {
	Attempt     int        `json:"attempt"`
	Status      string     `json:"status"`
	Error       *string    `json:"error"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	// Runs is how many times the attempt was started: more than one when a worker was lost
	// (Interruptions) or stopped and handed the run back.
	Runs          int            `json:"runs"`
	Worker        *string        `json:"worker"` // the process running or last running it
	Interruptions []Interruption `json:"interruptions"`
}

// Interruption is a run of an attempt its worker left unfinished (the worker died or lost
// the database): detected when its lease expired, after which the attempt ran again.
type Interruption struct {
	Worker        string    `json:"worker"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	DetectedAt    time.Time `json:"detected_at"`
}

// ProgressInfo is the data of GET /api/backtests/{task_id}/progress.
type ProgressInfo struct {
	TaskID     string  `json:"task_id"`
	Status     string  `json:"status"`
	Progress   float64 `json:"progress"`
	CurrentBar int     `json:"current_bar"`
	TotalBars  int     `json:"total_bars"`
}

// FromRow converts a stored task.
func FromRow(t store.Task) Task {
	params := t.StrategyParams
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	return Task{
		TaskID: t.ID, Status: t.Status, Progress: t.Progress, CurrentBar: int(t.CurrentBar),
		TotalBars: int(t.TotalBars), Error: t.Error, CreatedAt: t.CreatedAt, StartedAt: t.StartedAt,
		CompletedAt: t.CompletedAt, StrategyID: t.StrategyID, StrategyVersion: int(t.StrategyVersion),
		Attempt: int(t.Attempt), DataSource: t.DataSource, Symbol: t.Symbol, Symbols: t.Symbols, Timeframe: t.Timeframe, Benchmark: t.Benchmark, Timezone: t.Timezone,
		StartDate: t.StartDate.Format(time.DateOnly), EndDate: t.EndDate.Format(time.DateOnly),
		InitialCash: t.InitialCash, Commission: t.Commission, StrategyParams: params, SessionID: t.SessionID,
		CreatedBy: t.CreatedBy,
	}
}

// TaskNotFound is the 404 of the task routes.
func TaskNotFound(id string) error { return apperr.NotFound("Task not found: %s", id) }

// parseDate parses a request date (the spec's %Y-%m-%d) from marketdata.MinDay to
// marketdata.MaxDay.
func parseDate(field, v string) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, apperr.Invalid("Invalid %s '%s': expected a date as YYYY-MM-DD", field, v)
	}
	if !marketdata.InDateRange(d) {
		return time.Time{}, apperr.Invalid("%s %s is out of range: %s", field, d.Format(time.DateOnly), marketdata.DateRangeText)
	}
	return d, nil
}

// checkCash checks initial_cash: finite, greater than 0, at most MaxCash.
func checkCash(cash float64) error {
	if !(cash > 0) || math.IsInf(cash, 0) {
		return apperr.Invalid("initial_cash must be a positive number, got %v", cash)
	}
	if cash > MaxCash {
		return apperr.Invalid("initial_cash must be at most 1e12 (1,000,000,000,000), got %v", cash)
	}
	return nil
}

// checkCommission checks commission, a fraction of the traded value: 0 <= c < 1.
func checkCommission(c float64) error {
	if !(c >= 0) {
		return apperr.Invalid("commission must be a fraction from 0 up to 1, got %v", c)
	}
	if !(c < 1) {
		return apperr.Invalid("commission must be less than 1: it is a fraction of the traded value (0.001 is 0.1%%), got %v", c)
	}
	return nil
}

// Create validates req, stores the task as pending and enqueues its job in one transaction.
// Everything knowable before running is checked here and answered with a 4xx error: a
// missing field (422), an unknown strategy (404), bad dates, cash or commission (outside
// the bounds above), an unsupported data source, an unknown symbol, an empty bar range and
// invalid strategy parameters (400, with the spec's texts).
func (s *Service) Create(ctx context.Context, req Request) (Task, error) {
	r, err := s.Resolve(ctx, req)
	if err != nil {
		return Task{}, err
	}
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = s.q.CreateTask(ctx, tx, r.CreateTaskParams); err != nil {
			return fmt.Errorf("insert task: %w", err)
		}
		return s.enqueue(ctx, tx, &row)
	})
	if err != nil {
		return Task{}, err
	}
	return FromRow(row), nil
}

// Resolved is a backtest request checked and completed with its defaults: the task it
// makes, and the parameters its strategy version declares.
type Resolved struct {
	store.CreateTaskParams
	Strategy jsrt.StrategyInfo // its Params only
}

// Resolve checks req as Create does and returns what the task would be, without storing
// anything: parameter studies run such requests with many parameter sets.
func (s *Service) Resolve(ctx context.Context, req Request) (Resolved, error) {
	if req.StrategyID == nil || *req.StrategyID == "" {
		return Resolved{}, apperr.Unprocessable("Field 'strategy_id' is required")
	}
	if req.StartDate == nil {
		return Resolved{}, apperr.Unprocessable("Field 'start_date' is required")
	}
	if req.EndDate == nil {
		return Resolved{}, apperr.Unprocessable("Field 'end_date' is required")
	}
	var version *int32
	if req.StrategyVersion != nil {
		if *req.StrategyVersion < 1 || *req.StrategyVersion > math.MaxInt32 {
			return Resolved{}, apperr.Invalid("strategy_version must be a version number from 1, got %d", *req.StrategyVersion)
		}
		v := int32(*req.StrategyVersion)
		version = &v
	}
	sv, err := s.q.TaskStrategyVersion(ctx, s.db.Pool, store.TaskStrategyVersionParams{ID: *req.StrategyID, Version: version})
	if errors.Is(err, store.ErrNotFound) && version != nil {
		// Tell a missing version from a missing strategy.
		if _, err := s.q.TaskStrategyVersion(ctx, s.db.Pool, store.TaskStrategyVersionParams{ID: *req.StrategyID}); err == nil {
			return Resolved{}, apperr.NotFound("Strategy %s has no version %d", *req.StrategyID, *version)
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Resolved{}, apperr.NotFound("Strategy not found: %s", *req.StrategyID)
		}
		return Resolved{}, fmt.Errorf("load strategy %s: %w", *req.StrategyID, err)
	}
	start, err := parseDate("start_date", *req.StartDate)
	if err != nil {
		return Resolved{}, err
	}
	end, err := parseDate("end_date", *req.EndDate)
	if err != nil {
		return Resolved{}, err
	}
	if end.Before(start) {
		return Resolved{}, apperr.Invalid("start_date %s is after end_date %s", start.Format(time.DateOnly), end.Format(time.DateOnly))
	}
	cash := float64(DefaultCash)
	if req.InitialCash != nil {
		cash = *req.InitialCash
	}
	if err := checkCash(cash); err != nil {
		return Resolved{}, err
	}
	comm := DefaultCommission
	if req.Commission != nil {
		comm = *req.Commission
	}
	if err := checkCommission(comm); err != nil {
		return Resolved{}, err
	}
	tf := marketdata.DefaultTimeframe
	if req.Timeframe != nil && strings.TrimSpace(*req.Timeframe) != "" {
		tf = strings.TrimSpace(*req.Timeframe)
	}
	if err := marketdata.CheckTimeframe(tf); err != nil {
		return Resolved{}, err
	}
	source, symbols, err := s.resolveData(ctx, req)
	if err != nil {
		return Resolved{}, err
	}
	bench, err := s.resolveBenchmark(ctx, source, symbols, req.Benchmark)
	if err != nil {
		return Resolved{}, err
	}
	var empty []string
	for _, sym := range withBenchmark(symbols, bench) {
		has, err := s.feeds.AnyAt(ctx, source, sym, tf, start, end)
		if err != nil {
			return Resolved{}, err
		}
		if !has {
			empty = append(empty, sym)
		}
	}
	if len(empty) > 0 {
		return Resolved{}, apperr.Invalid("No data for %s in data source %s between %s and %s",
			strings.Join(empty, ", "), source, start.Format(time.DateOnly), end.Format(time.DateOnly))
	}
	zone, err := s.feeds.Zone(ctx, source, symbols[0])
	if err != nil {
		return Resolved{}, err
	}
	params, err := validateParams(sv.Params, sv.ParamValues, req.StrategyParams)
	if err != nil {
		return Resolved{}, err
	}
	session := ""
	if req.SessionID != nil {
		session = strings.TrimSpace(*req.SessionID)
		if len(session) > 200 {
			return Resolved{}, apperr.Invalid("session_id is too long: at most 200 characters")
		}
	}
	r := Resolved{CreateTaskParams: store.CreateTaskParams{
		StrategyID: sv.ID, StrategyVersion: sv.Version, DataSource: source, Symbol: symbols[0],
		Symbols: symbols, Timeframe: tf, Benchmark: bench, Timezone: zone.String(),
		StartDate: start, EndDate: end, InitialCash: cash, Commission: comm,
		StrategyParams: params, SessionID: session, CreatedBy: req.By,
	}}
	if len(sv.Params) > 0 {
		if err := json.Unmarshal(sv.Params, &r.Strategy.Params); err != nil {
			return Resolved{}, fmt.Errorf("stored strategy params: %w", err)
		}
	}
	return r, nil
}

// enqueue inserts the job of t's current attempt and records it, inside tx.
func (s *Service) enqueue(ctx context.Context, tx pgx.Tx, t *store.Task) error {
	if s.queue == nil {
		return errors.New("tasks: no job queue configured")
	}
	res, err := s.queue.InsertTx(ctx, tx, jobs.RunArgs{TaskID: t.ID, Attempt: int(t.Attempt)}, nil)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", t.ID, err)
	}
	id := res.Job.ID
	t.JobID = &id
	if err := s.q.SetTaskJob(ctx, tx, store.SetTaskJobParams{ID: t.ID, JobID: &id}); err != nil {
		return fmt.Errorf("record job of %s: %w", t.ID, err)
	}
	if err := s.q.InsertTaskAttempt(ctx, tx, store.InsertTaskAttemptParams{TaskID: t.ID, Attempt: t.Attempt, JobID: &id}); err != nil {
		return fmt.Errorf("record attempt of %s: %w", t.ID, err)
	}
	return nil
}

// resolveData applies the defaults (the built-in source and its default symbol) and checks
// the request's feeds: symbol or symbols (not both, unless symbol is the first of them), at
// most MaxFeeds, none twice, all in the source (an error names every unknown one).
func (s *Service) resolveData(ctx context.Context, req Request) (source string, symbols []string, err error) {
	if req.Symbols == nil {
		source, symbol, err := s.resolveSource(ctx, req.DataSource, req.Symbol)
		return source, []string{symbol}, err
	}
	if len(req.Symbols) == 0 {
		return "", nil, apperr.Invalid("symbols is empty: give at least one symbol")
	}
	if len(req.Symbols) > MaxFeeds {
		return "", nil, apperr.Invalid("symbols has %d entries: at most %d feeds per backtest", len(req.Symbols), MaxFeeds)
	}
	seen := map[string]bool{}
	for _, sym := range req.Symbols {
		sym = strings.TrimSpace(sym)
		if sym == "" {
			return "", nil, apperr.Invalid("symbols contains an empty symbol")
		}
		if seen[sym] {
			return "", nil, apperr.Invalid("symbols names %s twice: each feed once", sym)
		}
		seen[sym] = true
		symbols = append(symbols, sym)
	}
	if req.Symbol != nil && strings.TrimSpace(*req.Symbol) != "" && strings.TrimSpace(*req.Symbol) != symbols[0] {
		return "", nil, apperr.Invalid("Give symbol or symbols, not both (symbol %s is not the first of symbols)", strings.TrimSpace(*req.Symbol))
	}
	if source, _, err = s.source(ctx, req.DataSource); err != nil {
		return "", nil, err
	}
	var unknown []string
	for _, sym := range symbols {
		ok, err := s.symbolExists(ctx, source, sym)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			unknown = append(unknown, sym)
		}
	}
	if len(unknown) > 0 {
		return "", nil, apperr.Invalid("Unknown symbol %s in data source %s", strings.Join(unknown, ", "), source)
	}
	return source, symbols, nil
}

// resolveBenchmark returns the request's benchmark: a symbol of source, by default the
// first feed.
func (s *Service) resolveBenchmark(ctx context.Context, source string, feeds []string, req *string) (string, error) {
	if req == nil || strings.TrimSpace(*req) == "" {
		return feeds[0], nil
	}
	bench := strings.TrimSpace(*req)
	if slices.Contains(feeds, bench) {
		return bench, nil
	}
	ok, err := s.symbolExists(ctx, source, bench)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apperr.Invalid("Unknown benchmark %s in data source %s", bench, source)
	}
	return bench, nil
}

// symbolExists tells whether source has symbol.
func (s *Service) symbolExists(ctx context.Context, source, symbol string) (bool, error) {
	ok, err := s.q.TaskSymbolExists(ctx, s.db.Pool, store.TaskSymbolExistsParams{Source: source, Symbol: symbol})
	if err != nil {
		return false, fmt.Errorf("look up symbol %s: %w", symbol, err)
	}
	return ok, nil
}

// withBenchmark is the symbols whose bars a task needs: its feeds, then its benchmark when
// that is not one of them.
func withBenchmark(feeds []string, bench string) []string {
	if slices.Contains(feeds, bench) {
		return feeds
	}
	return append(slices.Clip(feeds), bench)
}

// resolveSource is resolveData for one symbol.
func (s *Service) resolveSource(ctx context.Context, reqSource, reqSymbol *string) (source, symbol string, err error) {
	source, symbol, err = s.source(ctx, reqSource)
	if err != nil {
		return "", "", err
	}
	if reqSymbol != nil && strings.TrimSpace(*reqSymbol) != "" {
		symbol = strings.TrimSpace(*reqSymbol)
	}
	if symbol == "" {
		return "", "", apperr.Invalid("Data source %s has no symbols: give symbol", source)
	}
	ok, err := s.symbolExists(ctx, source, symbol)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", apperr.Invalid("Unknown symbol %s in data source %s", symbol, source)
	}
	return source, symbol, nil
}

// source returns the request's data source (the built-in one when none is given) and its
// default symbol ("" when it has none).
func (s *Service) source(ctx context.Context, reqSource *string) (source, defSymbol string, err error) {
	if reqSource == nil || strings.TrimSpace(*reqSource) == "" {
		def, err := s.q.TaskDefaultSource(ctx, s.db.Pool)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", "", apperr.Invalid("No built-in data source is configured: give data_source")
			}
			return "", "", fmt.Errorf("default data source: %w", err)
		}
		return def.Name, def.DefaultSymbol, nil
	}
	source = strings.TrimSpace(*reqSource)
	ok, err := s.q.TaskSourceExists(ctx, s.db.Pool, source)
	if err != nil {
		return "", "", fmt.Errorf("look up data source: %w", err)
	}
	if !ok {
		return "", "", apperr.Invalid("Unsupported data source: %s", source)
	}
	if defSymbol, err = s.q.TaskSourceDefaultSymbol(ctx, s.db.Pool, source); err != nil {
		return "", "", fmt.Errorf("default symbol: %w", err)
	}
	return source, defSymbol, nil
}

// validateParams checks the request's parameters against the version's declared ones with
// the spec's texts, over the strategy's saved parameter values, and returns the coerced
// overrides as JSON.
func validateParams(declared, saved json.RawMessage, in map[string]any) (json.RawMessage, error) {
	var info jsrt.StrategyInfo
	if len(declared) > 0 {
		if err := json.Unmarshal(declared, &info.Params); err != nil {
			return nil, fmt.Errorf("stored strategy params: %w", err)
		}
	}
	merged := map[string]any{}
	if len(saved) > 0 {
		var sv map[string]any
		if err := json.Unmarshal(saved, &sv); err == nil {
			// Saved values whose parameter no longer fits are ignored, not fatal.
			if ok, err := jsrt.ValidateParams(&info, sv); err == nil {
				for k, v := range ok {
					merged[k] = v
				}
			}
		}
	}
	out, err := jsrt.ValidateParams(&info, in)
	if err != nil {
		var pe *jsrt.ParamError
		if errors.As(err, &pe) {
			return nil, apperr.Invalid("%s", pe.Message)
		}
		return nil, apperr.Invalid("%s", err.Error())
	}
	for k, v := range out {
		merged[k] = v
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return nil, apperr.Invalid("strategy_params cannot be stored: %v", err)
	}
	return b, nil
}

// ListFilter selects and orders tasks for List.
type ListFilter struct {
	Status     string
	StrategyID string
	Symbol     string // any of the task's feeds
	Sort       string // one of ListSorts; empty is created_at
	Ascending  bool   // the default is descending: newest, highest first
	Count      bool   // count the matches too (up to CountCap)
	Skip       int
	Limit      int
}

// ListSorts are what the runs list sorts by: creation time or a key figure of the result.
var ListSorts = []string{"created_at", "total_return", "max_drawdown", "sharpe_ratio", "total_trades"}

// Figures are a finished run's key figures, as the runs list shows them.
type Figures struct {
	TotalReturn    float64  `json:"total_return"`     // percent
	MaxDrawdownPct float64  `json:"max_drawdown_pct"` // percent
	SharpeRatio    *float64 `json:"sharpe_ratio"`     // nil when undefined
	TotalTrades    int      `json:"total_trades"`
	FinalValue     float64  `json:"final_value"`
}

// CountCap is the most tasks List counts: past it the list says "more than CountCap".
const CountCap = 10000

// List returns a page of tasks, each completed one with its key figures, and, when f.Count,
// how many tasks the filter matches in all, up to CountCap (-1 when not counted).
func (s *Service) List(ctx context.Context, f ListFilter) ([]Task, int, error) {
	p := store.ListTasksParams{Skip: int32(f.Skip), Lim: int32(f.Limit)}
	if f.Status != "" {
		p.Status = &f.Status
	}
	if f.StrategyID != "" {
		p.StrategyID = &f.StrategyID
	}
	if f.Symbol != "" {
		p.Symbol = &f.Symbol
	}
	// By creation time the rows come in the index's order; a figure has to sort them.
	var rows []store.ListTasksRow
	var err error
	switch {
	case f.Sort != "" && f.Sort != "created_at":
		var byFigure []store.ListTasksByFigureRow
		byFigure, err = s.q.ListTasksByFigure(ctx, s.db.Pool, store.ListTasksByFigureParams{Status: p.Status, StrategyID: p.StrategyID,
			Symbol: p.Symbol, Descending: !f.Ascending, Sort: f.Sort, Skip: p.Skip, Lim: p.Lim})
		rows = convertRows(byFigure)
	case f.Ascending:
		var oldest []store.ListTasksOldestRow
		oldest, err = s.q.ListTasksOldest(ctx, s.db.Pool, store.ListTasksOldestParams(p))
		rows = convertRows(oldest)
	default:
		rows, err = s.q.ListTasks(ctx, s.db.Pool, p)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	total := int64(-1)
	if f.Count {
		if total, err = s.q.CountTasks(ctx, s.db.Pool, store.CountTasksParams{Status: p.Status, StrategyID: p.StrategyID, Symbol: p.Symbol, Cap: CountCap}); err != nil {
			return nil, 0, fmt.Errorf("count tasks: %w", err)
		}
	}
	out := make([]Task, len(rows))
	for i, r := range rows {
		out[i] = FromRow(r.Task)
		if r.TotalReturn != nil {
			out[i].Figures = &Figures{TotalReturn: *r.TotalReturn, MaxDrawdownPct: deref(r.MaxDrawdownPct),
				SharpeRatio: r.SharpeRatio, TotalTrades: int(deref(r.TotalTrades)), FinalValue: deref(r.FinalValue)}
		}
	}
	return out, int(total), nil
}

// convertRows turns the rows of the other list queries, which have ListTasks' columns, into
// its rows.
func convertRows[R store.ListTasksByFigureRow | store.ListTasksOldestRow](rs []R) []store.ListTasksRow {
	out := make([]store.ListTasksRow, len(rs))
	for i, r := range rs {
		out[i] = store.ListTasksRow(r)
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Delete removes a task that has ended, with its attempts, result and logs. A pending or
// running task is a conflict: it must be cancelled first.
func (s *Service) Delete(ctx context.Context, id string) error {
	if _, err := s.q.DeleteFinishedTask(ctx, s.db.Pool, id); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	t, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return TaskNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("get task %s: %w", id, err)
	}
	return apperr.Conflict("Task %s is %s: cancel it before deleting it", id, t.Status)
}

// Get returns a task with its attempt history.
func (s *Service) Get(ctx context.Context, id string) (Task, error) {
	row, err := s.q.GetTaskWithAttempts(ctx, s.db.Pool, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Task{}, TaskNotFound(id)
		}
		return Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	t := FromRow(row.Task)
	var atts []store.TaskAttempt
	if err := json.Unmarshal(row.Attempts, &atts); err != nil {
		return Task{}, fmt.Errorf("attempts of %s: %w", id, err)
	}
	t.Attempts = make([]Attempt, len(atts))
	for i, a := range atts {
		// Times in JSON carry the database session's offset; pgx gives the task's own in
		// this process's zone, and both are shown alike.
		t.Attempts[i] = Attempt{Attempt: int(a.Attempt), Status: a.Status, Error: a.Error,
			CreatedAt: a.CreatedAt.Local(), StartedAt: localTime(a.StartedAt), CompletedAt: localTime(a.CompletedAt),
			Runs: int(a.Runs), Worker: a.Worker, Interruptions: []Interruption{}}
		if err := json.Unmarshal(a.Interruptions, &t.Attempts[i].Interruptions); err != nil {
			return Task{}, fmt.Errorf("interruptions of %s attempt %d: %w", id, a.Attempt, err)
		}
	}
	return t, nil
}

func localTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	l := t.Local()
	return &l
}

// Owner is who submitted task id (nil: nobody); a 404 for an unknown id.
func (s *Service) Owner(ctx context.Context, id string) (*string, error) {
	owner, err := s.q.TaskOwner(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, TaskNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("owner of %s: %w", id, err)
	}
	return owner, nil
}

// Progress returns the progress record of a task.
func (s *Service) Progress(ctx context.Context, id string) (ProgressInfo, error) {
	row, err := s.q.GetTask(ctx, s.db.Pool, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ProgressInfo{}, TaskNotFound(id)
		}
		return ProgressInfo{}, fmt.Errorf("get task %s: %w", id, err)
	}
	return ProgressInfo{TaskID: row.ID, Status: row.Status, Progress: row.Progress,
		CurrentBar: int(row.CurrentBar), TotalBars: int(row.TotalBars)}, nil
}

// Cancel cancels a pending or running task: the status becomes cancelled and its job is
// removed (pending) or cancelled (running: River tells the process running it, whose job
// context ends and interrupts the engine). Completed, failed and cancelled tasks are left
// as they are; changed reports which case it was.
func (s *Service) Cancel(ctx context.Context, id string) (t Task, changed bool, err error) {
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.q.GetTaskForUpdate(ctx, tx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return TaskNotFound(id)
			}
			return fmt.Errorf("get task %s: %w", id, err)
		}
		if cur.Status != StatusPending && cur.Status != StatusRunning {
			row = cur
			return nil
		}
		if row, err = s.q.CancelTask(ctx, tx, id); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		changed = true
		if err := s.q.FinishTaskAttempt(ctx, tx, store.FinishTaskAttemptParams{
			Status: StatusCancelled, TaskID: id, Attempt: cur.Attempt,
		}); err != nil {
			return fmt.Errorf("cancel attempt of %s: %w", id, err)
		}
		if cur.JobID == nil || s.queue == nil {
			return nil
		}
		if cur.Status == StatusPending {
			_, err = s.queue.JobDeleteTx(ctx, tx, *cur.JobID)
			if err == nil || errors.Is(err, rivertype.ErrNotFound) {
				return nil
			}
			if !errors.Is(err, rivertype.ErrJobRunning) {
				return fmt.Errorf("remove job of %s: %w", id, err)
			}
			// A worker has just picked it up: cancel it like a running one.
		}
		if _, err := s.queue.JobCancelTx(ctx, tx, *cur.JobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("cancel job of %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Task{}, false, err
	}
	if changed {
		s.publishDone(ctx, row.ID, row.SessionID, int(row.Attempt), StatusCancelled, nil, nil)
	}
	return FromRow(row), changed, nil
}

// Retry runs a failed or cancelled task again as a new attempt: it goes back to pending
// with attempt+1 and a new job, in one transaction. Other states give 409.
func (s *Service) Retry(ctx context.Context, id string) (Task, error) {
	var row store.Task
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = s.q.RetryTask(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			cur, err := s.q.GetTask(ctx, tx, id)
			if errors.Is(err, store.ErrNotFound) {
				return TaskNotFound(id)
			}
			if err != nil {
				return fmt.Errorf("get task %s: %w", id, err)
			}
			return apperr.Conflict("Task %s is %s: only failed or cancelled tasks can be retried", id, cur.Status)
		}
		if err != nil {
			return fmt.Errorf("retry %s: %w", id, err)
		}
		return s.enqueue(ctx, tx, &row)
	})
	if err != nil {
		return Task{}, err
	}
	return FromRow(row), nil
}

// LogFilter selects log lines.
type LogFilter struct {
	Levels  []string // empty: all
	Attempt int      // 0: all attempts
	Skip    int
	Limit   int
}

// LogEntry is one stored log line as the logs route returns it.
type LogEntry struct {
	ID        int64      `json:"id"`
	TaskID    string     `json:"task_id"`
	Attempt   int        `json:"attempt"`
	Level     string     `json:"level"`
	Message   string     `json:"message"`
	Source    string     `json:"source"`
	Timestamp float64    `json:"timestamp"` // epoch seconds, as in the log event
	Time      time.Time  `json:"time"`
	BarTime   *time.Time `json:"bar_time"`
}

// Logs returns a page of a task's stored log lines, oldest first. Unknown ids give an
// empty list (the spec does not check them).
func (s *Service) Logs(ctx context.Context, id string, f LogFilter) ([]LogEntry, error) {
	p := store.ListTaskLogsParams{TaskID: id, Skip: int32(f.Skip), Lim: int32(f.Limit)}
	if len(f.Levels) > 0 {
		p.Levels = f.Levels
	}
	if f.Attempt > 0 {
		a := int32(f.Attempt)
		p.Attempt = &a
	}
	rows, err := s.q.ListTaskLogs(ctx, s.db.Pool, p)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", id, err)
	}
	out := make([]LogEntry, len(rows))
	for i, r := range rows {
		out[i] = LogEntry{ID: r.ID, TaskID: r.TaskID, Attempt: int(r.Attempt), Level: r.Level,
			Message: r.Message, Source: r.Source, Timestamp: events.EpochSeconds(r.Ts), Time: r.Ts}
		if r.HasBar {
			out[i].BarTime = &r.BarTime
		}
	}
	return out, nil
}

// FinalState returns the frames a subscriber joining now should see after `connected`:
// the complete event of a finished task, or the current progress of a running one. An
// unknown task gives none.
func (s *Service) FinalState(ctx context.Context, id string) (complete bool, attempt int, frame []byte, err error) {
	row, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, 0, nil, nil
	}
	if err != nil {
		return false, 0, nil, err
	}
	switch row.Status {
	case StatusRunning:
		return false, int(row.Attempt), events.ProgressFrame(events.Progress{TaskID: id, Progress: row.Progress,
			CurrentBar: int(row.CurrentBar), TotalBars: int(row.TotalBars)}), nil
	case StatusCompleted, StatusFailed, StatusCancelled:
		c := events.Complete{TaskID: id, Attempt: int(row.Attempt), Status: row.Status, Error: row.Error}
		if row.Status == StatusCompleted {
			if sum, err := s.storedSummary(ctx, id); err == nil {
				c.Result = sum
			}
		}
		return true, int(row.Attempt), events.CompleteFrame(c), nil
	}
	return false, 0, nil, nil
}

// Result returns a task and, once it completed, its stored summary (null before).
func (s *Service) Result(ctx context.Context, id string) (Task, json.RawMessage, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return Task{}, nil, err
	}
	if t.Status != StatusCompleted {
		return t, nil, nil
	}
	sum, err := s.storedSummary(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return t, nil, nil
	}
	if err != nil {
		return Task{}, nil, fmt.Errorf("summary of %s: %w", id, err)
	}
	return t, sum, nil
}
