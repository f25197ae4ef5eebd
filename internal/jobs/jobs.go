// Package jobs runs backtests as durable River jobs: the job arguments, the worker, the
// timeout and attempt policy, and the River client (a full client with workers, or an
// insert-only one for API processes started with -workers 0). What a run does is the
// Executor's business (internal/tasks); this package only decides how jobs are scheduled,
// retried and rescued.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Queue is the River queue backtests run on.
const Queue = "backtests"

// MaxAttempts bounds how often an infrastructure failure (lost database connection, a
// worker killed mid-run) is retried. Strategy errors are never retried (river.JobCancel).
const MaxAttempts = 5

// RunArgs are the arguments of a backtest job: which task, and which of its attempts
// (a retried task gets a new attempt and a new job; a job for an older attempt does nothing).
type RunArgs struct {
	TaskID  string `json:"task_id"`
	Attempt int    `json:"attempt"`
}

// Kind implements river.JobArgs.
func (RunArgs) Kind() string { return "backtest" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
}

// Executor runs one backtest job. Its error decides the job's fate: nil completes it, a
// river.JobCancel error ends it without retries, any other error is retried by River.
type Executor interface {
	Execute(ctx context.Context, job *river.Job[RunArgs]) error
}

// Client is the River client type used throughout.
type Client = river.Client[pgx.Tx]

// Config configures the client.
type Config struct {
	// Workers is the number of backtests run at once in this process; 0 makes an insert-only
	// client that enqueues and cancels jobs but never works them.
	Workers int
	// RunTimeout is the wall-time limit of one backtest (the engine enforces it); the job's
	// timeout adds headroom for loading bars and storing the result.
	RunTimeout time.Duration
	// RescueAfter is how long a job may stay running before River considers its worker dead
	// and runs it again. 0 derives it from the job timeout.
	RescueAfter time.Duration
	// Register adds other packages' workers (they run on River's default queue).
	Register func(*river.Workers)
	Logger   *slog.Logger
}

// JobTimeout is the River timeout of a backtest job for a run time limit: the run's limit
// (which the runner enforces) plus time to load its bars, wait for a runner process on a
// busy machine and store the result. It is a backstop; a job that reaches it is retried.
func JobTimeout(runTimeout time.Duration) time.Duration {
	return runTimeout + 30*time.Second
}

// RescueAfter is the default time after which a running job is rescued: comfortably past
// its timeout, so a live job is never run twice.
func RescueAfter(runTimeout time.Duration) time.Duration {
	jt := JobTimeout(runTimeout)
	return jt + min(jt, time.Minute)
}

type worker struct {
	river.WorkerDefaults[RunArgs]
	exec    Executor
	timeout time.Duration
}

func (w *worker) Timeout(*river.Job[RunArgs]) time.Duration { return w.timeout }

func (w *worker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.exec.Execute(ctx, job)
}

// retryPolicy retries infrastructure failures quickly: 1s, 4s, 9s, 16s (± 10%).
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	n := max(len(job.Errors), 1)
	d := time.Duration(n*n) * time.Second
	d += time.Duration(rand.Int64N(int64(d / 10)))
	return time.Now().Add(d)
}

// NewClient builds the River client over pool. exec runs the jobs (it may be nil for an
// insert-only client). The client is not started.
func NewClient(pool *pgxpool.Pool, cfg Config, exec Executor) (*Client, error) {
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = 10 * time.Minute
	}
	jt := JobTimeout(cfg.RunTimeout)
	rescue := cfg.RescueAfter
	if rescue <= jt {
		rescue = RescueAfter(cfg.RunTimeout)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{exec: exec, timeout: jt}); err != nil {
		return nil, fmt.Errorf("register backtest worker: %w", err)
	}
	if cfg.Register != nil {
		cfg.Register(workers)
	}
	rc := &river.Config{
		Workers:              workers,
		JobTimeout:           jt,
		RescueStuckJobsAfter: rescue,
		RetryPolicy:          retryPolicy{},
		FetchCooldown:        5 * time.Millisecond,
		FetchPollInterval:    500 * time.Millisecond,
		Logger:               cfg.Logger,
	}
	if cfg.Workers > 0 {
		if exec == nil {
			return nil, fmt.Errorf("jobs: %d workers but no executor", cfg.Workers)
		}
		rc.Queues = map[string]river.QueueConfig{
			Queue:              {MaxWorkers: cfg.Workers},
			river.QueueDefault: {MaxWorkers: 2},
		}
	}
	// The driver's listener passes on only the service's own notifications (listener.go).
	client, err := river.NewClient[pgx.Tx](newDriver(pool, cfg.Logger), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

// Stop stops a started client: soft stop (running jobs finish) until ctx's deadline or
// soft, whichever is first, then a hard stop that cancels the jobs still running (River
// retries them later, in this or another process).
func Stop(ctx context.Context, c *Client, soft time.Duration) error {
	softCtx, cancel := context.WithTimeout(ctx, soft)
	defer cancel()
	if err := c.Stop(softCtx); err == nil {
		return nil
	}
	hardCtx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	return c.StopAndCancel(hardCtx)
}

// WorkerName names this process where a run records who ran it (attempt history, leases):
// host and process id.
func WorkerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}
