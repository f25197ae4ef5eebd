// Package pricepaths is Monte Carlo on price paths in the service: a result's strategy
// version is rerun, in runner child processes like every run, on price paths made by a
// block bootstrap of its bars' returns (montecarlo.PricePath), and the reruns' equity
// curves give the same figures, percentiles and fan as every Monte Carlo method
// (montecarlo.Paths). The first request for a result, runs, seed and block stores a row
// and enqueues a River job in one transaction; the job records its progress and, at the
// end, the answer, which every later request with the same parameters reads. The job is
// held to the run time limit as a whole, as a look-ahead check is.
package pricepaths

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/montecarlo"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

// Runner runs strategy code in confined children (runner.Pool) and hands out CPU places.
type Runner interface {
	Run(ctx context.Context, cfg jsrt.RunConfig) (*engine.Result, error)
	Slot(ctx context.Context, owner string, kind fairshare.Kind) (release func(), ok bool)
}

// Config sets the runner and the limits: RunTimeout is the wall time of a job's reruns
// together (0: jsrt.DefaultWallTimeLimit), MemoryLimit each rerun's budget, UserMaxRunning
// the fair share (fairshare.Admit; 0: none): a job is one unit of work of the user who asked
// for it, as a study job is.
type Config struct {
	Runner         Runner
	RunTimeout     time.Duration
	MemoryLimit    uint64
	UserMaxRunning int
	Logger         *slog.Logger
}

// Status of a request's row.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// progressEvery is how often a job stores how many reruns it has done.
const progressEvery = 250 * time.Millisecond

// Service answers price_paths requests and works their jobs. Give it the River client with
// SetQueue.
type Service struct {
	cfg     Config
	db      *store.Store
	results *results.Service
	tasks   *tasks.Service
	queue   *jobs.Client
	log     *slog.Logger
}

// New returns the service; t loads a result's run to rerun it (tasks.Service.Replay).
func New(cfg Config, db *store.Store, t *tasks.Service) *Service {
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = jsrt.DefaultWallTimeLimit
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, db: db, results: results.NewService(db.Pool), tasks: t, log: log}
}

// SetQueue gives the service the River client it enqueues jobs with.
func (s *Service) SetQueue(c *jobs.Client) { s.queue = c }

// Args are a job's arguments: the result and the request, its defaults resolved.
type Args struct {
	TaskID string `json:"task_id"`
	Runs   int    `json:"runs"`
	Seed   uint64 `json:"seed"`
	Block  int    `json:"block"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return "montecarlo_paths" }

// InsertOpts implements river.JobArgsWithInsertOpts: the jobs share the backtests' queue
// and attempt policy.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.Queue, MaxAttempts: jobs.MaxAttempts}
}

func (a Args) key() (string, int32, int64, int32) {
	return a.TaskID, int32(a.Runs), int64(a.Seed), int32(a.Block)
}

// Progress is a request's state until its answer is ready (api/openapi.yaml's
// MonteCarloProgress): pending until a worker takes it, then running, with the reruns done.
type Progress struct {
	Method   montecarlo.Method `json:"method"`
	Status   string            `json:"status"`
	Runs     int               `json:"runs"`
	Seed     uint64            `json:"seed"`
	Block    int               `json:"block"`
	Done     int               `json:"done"`
	Progress float64           `json:"progress"` // percent of the runs done
}

// Get answers opts (method price_paths) for taskID's result: its answer once the reruns
// completed, their Progress until then. The first request with these parameters starts
// the reruns. Options the result cannot take are an invalid apperr; a task without a
// result is the not-found one; reruns that failed (the strategy failed on a path, the
// data are gone, the time limit passed) are an unprocessable one with the reason.
//
// mayStart is nil when the caller may start reruns (they run the strategy: the role that
// may run backtests), else the error to answer where none were started yet; a caller
// who may not start them reads those another started.
func (s *Service) Get(ctx context.Context, taskID string, by *string, mayStart error, opts montecarlo.Options) (*montecarlo.Answer, *Progress, error) {
	size, err := s.results.Size(ctx, taskID, false)
	if err != nil {
		return nil, nil, err
	}
	if err := montecarlo.CheckPaths(size.Bars, &opts); err != nil {
		return nil, nil, apperr.Invalid("%s", err.Error())
	}
	args := Args{TaskID: taskID, Runs: opts.Runs, Seed: opts.Seed, Block: opts.Block}
	row, err := s.row(ctx, args)
	if err == nil && row.Status == StatusRunning {
		// A job that stopped touching its row died with its worker: its reruns start again,
		// for the user who asked for them, rather than the request answering 202 forever.
		if row, err = s.restartDead(ctx, args, row); err != nil {
			return nil, nil, err
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		if mayStart != nil {
			return nil, nil, mayStart
		}
		if row, err = s.start(ctx, args, by); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	switch row.Status {
	case StatusCompleted:
		var a montecarlo.Answer
		if err := json.Unmarshal(row.Answer, &a); err != nil {
			return nil, nil, fmt.Errorf("stored price paths answer of %s: %w", taskID, err)
		}
		return &a, nil, nil
	case StatusFailed:
		msg := "failed"
		if row.Error != nil {
			msg = *row.Error
		}
		return nil, nil, apperr.Unprocessable("Monte Carlo on price paths failed: %s", msg)
	}
	return nil, &Progress{Method: montecarlo.PricePaths, Status: row.Status, Runs: args.Runs, Seed: args.Seed, Block: args.Block,
		Done: int(row.Done), Progress: 100 * float64(row.Done) / float64(args.Runs)}, nil
}

// restartDead starts row's request again, for the user who asked for it, when its job gave
// no sign of life for fairshare.PathsStale, and returns the row as it now is. The dead row
// is removed first, on its own: if the start then fails, the next request starts it, as
// after a job that gave up.
func (s *Service) restartDead(ctx context.Context, a Args, row store.MontecarloPath) (store.MontecarloPath, error) {
	if time.Since(row.UpdatedAt) < fairshare.PathsStale/2 { // alive without a doubt: no write
		return row, nil
	}
	id, runs, seed, block := a.key()
	n, err := s.db.Queries.DeleteDeadMonteCarloPaths(ctx, s.db.Pool, store.DeleteDeadMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block,
		StaleSecs: fairshare.PathsStale.Seconds()})
	if err != nil {
		return row, fmt.Errorf("remove dead price paths request of %s: %w", id, err)
	}
	if n == 0 { // alive after all, or finished meanwhile
		return s.row(ctx, a)
	}
	s.log.Warn("price paths job gave no sign of life: started again", "task", id, "runs", runs, "seed", seed, "block", block)
	return s.start(ctx, a, row.CreatedBy)
}

func (s *Service) row(ctx context.Context, a Args) (store.MontecarloPath, error) {
	id, runs, seed, block := a.key()
	return s.db.Queries.GetMonteCarloPaths(ctx, s.db.Pool, store.GetMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block})
}

// start stores a's row and enqueues its job in one transaction (a concurrent request that
// stored it first enqueued it), and returns the row.
func (s *Service) start(ctx context.Context, a Args, by *string) (store.MontecarloPath, error) {
	if s.queue == nil {
		return store.MontecarloPath{}, errors.New("pricepaths: no job queue configured")
	}
	id, runs, seed, block := a.key()
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		n, err := s.db.Queries.CreateMonteCarloPaths(ctx, tx, store.CreateMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block, CreatedBy: by})
		if err != nil {
			return fmt.Errorf("store price paths request of %s: %w", id, err)
		}
		if n == 0 {
			return nil
		}
		opts := &river.InsertOpts{Priority: fairshare.Priority(fairshare.Study, by, s.cfg.UserMaxRunning)}
		if _, err := s.queue.InsertTx(ctx, tx, a, opts); err != nil {
			return fmt.Errorf("enqueue price paths of %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return store.MontecarloPath{}, err
	}
	row, err := s.row(ctx, a)
	if errors.Is(err, store.ErrNotFound) { // the result was deleted meanwhile
		return row, apperr.NotFound("Result not found: %s", id)
	}
	return row, err
}

type worker struct {
	river.WorkerDefaults[Args]
	s *Service
}

// Timeout: the reruns' limit (the job holds itself to it) plus time to load and store.
func (w *worker) Timeout(*river.Job[Args]) time.Duration { return jobs.JobTimeout(w.s.cfg.RunTimeout) }

func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error { return w.s.Execute(ctx, job) }

// AddWorker registers the job's worker with River.
func (s *Service) AddWorker(w *river.Workers) { river.AddWorker(w, &worker{s: s}) }

// failure is an end that no retry changes: the row is failed with msg.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func fail(format string, a ...any) error { return &failure{msg: fmt.Sprintf(format, a...)} }

// Execute works one request: it reruns the result's strategy on each price path in turn,
// storing the count done as it goes, then the answer. A failure no retry can change (the
// strategy fails on a path, the data are gone, the time limit passes) fails the row; any
// other error is retried by River, from the first path, and a request whose last attempt
// fails is removed so that the next request starts it again.
func (s *Service) Execute(ctx context.Context, job *river.Job[Args]) error {
	a := job.Args
	id, runs, seed, block := a.key()
	row, err := s.row(ctx, a)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the result was deleted
	}
	if err != nil {
		return fmt.Errorf("load price paths request of %s: %w", id, err)
	}
	if row.Status == StatusCompleted || row.Status == StatusFailed {
		return nil
	}
	// Admitted under the requester's fair share and marked running in one transaction: the
	// running row is what counts the job (fairshare.PathsBeat keeps it counted).
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if err := fairshare.Admit(ctx, tx, s.db.Queries, s.cfg.UserMaxRunning, row.CreatedBy, fairshare.Unit{Kind: fairshare.Study, Job: job.ID}); err != nil {
			return err
		}
		_, err := s.db.Queries.StartMonteCarloPaths(ctx, tx, store.StartMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block, JobID: &job.ID})
		return err
	})
	if errors.Is(err, fairshare.ErrBusy) {
		return river.JobSnooze(fairshare.Wait())
	}
	if err != nil {
		return fmt.Errorf("start price paths of %s: %w", id, err)
	}
	beat, stopBeat := context.WithCancel(ctx)
	go s.beat(beat, a, job.ID)
	answer, err := s.compute(ctx, a, row.CreatedBy)
	stopBeat()
	var f *failure
	switch {
	case errors.As(err, &f):
		return s.finish(ctx, a, StatusFailed, nil, &f.msg)
	case err != nil:
		if job.Attempt >= job.MaxAttempts {
			s.log.Warn("price paths gave up", "task", id, "err", err)
			if derr := s.db.Queries.DeleteMonteCarloPaths(context.WithoutCancel(ctx), s.db.Pool,
				store.DeleteMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block}); derr != nil {
				s.log.Warn("remove price paths request", "task", id, "err", derr)
			}
		}
		return err
	}
	body, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("encode price paths answer of %s: %w", id, err)
	}
	return s.finish(ctx, a, StatusCompleted, body, nil)
}

// beat touches the running row of job every fairshare.PathsBeat until ctx ends, so that it
// keeps counting as one of its requester's running units.
func (s *Service) beat(ctx context.Context, a Args, job int64) {
	id, runs, seed, block := a.key()
	t := time.NewTicker(fairshare.PathsBeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.db.Queries.TouchMonteCarloPaths(ctx, s.db.Pool, store.TouchMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block, JobID: &job}); err != nil && ctx.Err() == nil {
				s.log.Warn("touch price paths", "task", id, "err", err)
			}
		}
	}
}

func (s *Service) finish(ctx context.Context, a Args, status string, answer json.RawMessage, msg *string) error {
	id, runs, seed, block := a.key()
	err := s.db.Queries.FinishMonteCarloPaths(ctx, s.db.Pool, store.FinishMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block,
		Status: status, Done: runs, Answer: answer, Error: msg})
	if err != nil {
		return fmt.Errorf("store price paths of %s: %w", id, err)
	}
	return nil
}

// compute reruns the strategy on every path and returns the answer, a *failure, or an
// error worth a retry. The CPU places go by the requester's share (the result's owner's
// when nobody is named).
func (s *Service) compute(ctx context.Context, a Args, by *string) (*montecarlo.Answer, error) {
	cfg, err := s.tasks.Replay(ctx, a.TaskID)
	if ae, ok := apperr.As(err); ok {
		return nil, fail("%s", ae.Detail)
	}
	if err != nil {
		return nil, err
	}
	if err := montecarlo.CheckFeeds(cfg.Feeds); err != nil {
		return nil, fail("%s", err.Error())
	}
	stored, err := s.results.Load(ctx, a.TaskID, results.EquityValues)
	if err != nil {
		return nil, fmt.Errorf("load result of %s: %w", a.TaskID, err)
	}
	paths, err := montecarlo.NewPaths(report.MonteCarloInput(stored), montecarlo.Options{Method: montecarlo.PricePaths, Runs: a.Runs, Seed: a.Seed, Block: a.Block})
	if err != nil {
		return nil, fail("%s", err.Error())
	}
	owner := cfg.Owner
	if by != nil {
		owner = *by
	}
	release, ok := s.cfg.Runner.Slot(ctx, owner, fairshare.Study)
	if !ok {
		return nil, fmt.Errorf("wait for a CPU place: %w", context.Cause(ctx))
	}
	defer release()
	deadline := time.Now().Add(s.cfg.RunTimeout)
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	overtime := fail("the %d reruns took longer than the run time limit (%s); ask for fewer runs", a.Runs, s.cfg.RunTimeout)
	base := cfg.Feeds
	cfg.MemoryLimit = s.cfg.MemoryLimit
	cfg.OnLog = func(engine.LogEntry) {} // the reruns' logs are not kept
	lastProgress := time.Now()
	for run := range a.Runs {
		if cfg.Feeds, err = montecarlo.PricePath(base, a.Block, a.Seed, run); err != nil {
			return nil, fail("%s", err.Error())
		}
		if cfg.WallTimeLimit = time.Until(deadline); cfg.WallTimeLimit <= 0 {
			return nil, overtime
		}
		res, err := s.cfg.Runner.Run(runCtx, cfg)
		var re *jsrt.RunError
		if errors.As(err, &re) {
			switch {
			case re.Kind == jsrt.KindTimeout, re.Kind == jsrt.KindCancelled && ctx.Err() == nil:
				return nil, overtime
			case re.Kind == jsrt.KindCancelled:
				return nil, fmt.Errorf("rerun on price path %d: %w", run+1, context.Cause(ctx))
			}
			return nil, fail("the strategy failed on price path %d: %s", run+1, re.Message)
		}
		if err != nil {
			return nil, fmt.Errorf("rerun on price path %d: %w", run+1, err)
		}
		if err := paths.Add(engine.BarReturns(cfg.Cash, res.Equity)); err != nil {
			return nil, fail("the rerun on price path %d ran %d bars, the result %d", run+1, len(res.Equity), len(stored.Equity))
		}
		if time.Since(lastProgress) >= progressEvery {
			lastProgress = time.Now()
			id, runs, seed, block := a.key()
			if err := s.db.Queries.ProgressMonteCarloPaths(ctx, s.db.Pool, store.ProgressMonteCarloPathsParams{TaskID: id, Runs: runs, Seed: seed, Block: block,
				Done: int32(run + 1)}); err != nil {
				return nil, fmt.Errorf("store price paths progress of %s: %w", id, err)
			}
		}
	}
	answer, err := paths.Answer()
	if err != nil {
		return nil, fmt.Errorf("answer price paths of %s: %w", a.TaskID, err)
	}
	return answer, nil
}
