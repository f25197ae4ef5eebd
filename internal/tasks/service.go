// Package tasks is the backtest task lifecycle: create (validated, stored as pending and
// enqueued in one transaction), list, read, cancel, retry, progress and logs, and the run
// step a River worker executes (load bars and the recorded strategy version, run the engine,
// store the result and the completion in one transaction, publish events).
//
// States: pending → running → completed, failed or cancelled; cancelling a pending
// task cancels it and removes its job; a failed or cancelled task can be retried as a new
// attempt. Every worker-side status change is guarded by the task's status and attempt, so
// a cancel, a retry or a rescued duplicate job can never overwrite a newer state.
package tasks

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

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

// Defaults of a backtest request (api/openapi.yaml's BacktestRequest).
const (
	DefaultCash       = 10000
	DefaultCommission = 0.001
)

// Bounds of a backtest request, documented in api/openapi.yaml: initial_cash is finite,
// greater than 0 and at most MaxCash; commission is a fraction of the traded value, from 0
// up to but not including 1; start_date and end_date are from marketdata.MinDay to
// marketdata.MaxDay.
const MaxCash = 1e12

// Config configures a Service.
type Config struct {
	RunTimeout  time.Duration // wall-time limit of one run; 0: jsrt's default
	MemoryLimit uint64        // bytes; 0: jsrt's default
	LogDir      string        // when set, log lines are appended to <LogDir>/<session_id>.log
	// Runner runs the strategy code, which is untrusted: in the service, a pool of runner
	// processes (internal/runner), whose CPU places the run step waits for. Required for
	// Execute.
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
// other errors are infrastructure failures and are retried. Slot is the run's CPU place in
// this process, shared with the studies' runs (runner.Pool.Slot).
type Runner interface {
	Slot(ctx context.Context, owner string, kind fairshare.Kind) (release func(), ok bool)
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

// Request is the body of POST /api/backtests (api/openapi.yaml's BacktestRequest) plus session_id.
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
	// AsOf (RFC 3339) runs on each symbol's bar version current at that time; nil on the
	// latest bars.
	AsOf *string `json:"as_of"`
	// Versions, when AsOf is nil, are the bar versions to run on by symbol (not read from
	// JSON): a study's combination promoted to a backtest runs on the study's.
	Versions map[string]int `json:"-"`
	// By is the user submitting it, the task's owner (not read from JSON); nil for nobody.
	By *string `json:"-"`
}

// Task is api/openapi.yaml's Task: status plus what the task records (strategy version, attempt,
// request). Attempts is filled by Get.
type Task struct {
	TaskID string `json:"task_id"`
	Status Status `json:"status"`
	// What the state allows the owner to do (Machine): the page offers these actions.
	CanCancel       bool            `json:"can_cancel"`
	CanRetry        bool            `json:"can_retry"`
	CanDelete       bool            `json:"can_delete"`
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
	PinnedAt        *time.Time      `json:"pinned_at"`  // when a user pinned it (kept by retention); nil: not pinned
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

// fromRow converts a stored task.
func fromRow(t store.Task) Task {
	params := t.StrategyParams
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	st := Status(t.Status)
	return Task{
		TaskID: t.ID, Status: st, CanCancel: st.Can(ActCancel), CanRetry: st.Can(ActRetry), CanDelete: st.Can(ActDelete), Progress: t.Progress, CurrentBar: int(t.CurrentBar),
		TotalBars: int(t.TotalBars), Error: t.Error, CreatedAt: t.CreatedAt, StartedAt: t.StartedAt,
		CompletedAt: t.CompletedAt, StrategyID: t.StrategyID, StrategyVersion: int(t.StrategyVersion),
		Attempt: int(t.Attempt), DataSource: t.DataSource, Symbol: t.Symbol, Symbols: t.Symbols, Timeframe: t.Timeframe, Benchmark: t.Benchmark, Timezone: t.Timezone,
		StartDate: t.StartDate.Format(time.DateOnly), EndDate: t.EndDate.Format(time.DateOnly),
		InitialCash: t.InitialCash, Commission: t.Commission, StrategyParams: params, SessionID: t.SessionID,
		CreatedBy: t.CreatedBy, PinnedAt: t.PinnedAt,
	}
}

// TaskNotFound is the 404 of the task routes.
func TaskNotFound(id string) error { return apperr.NotFound("Task not found: %s", id) }

// parseDate parses a request date (YYYY-MM-DD) from marketdata.MinDay to
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
