package service

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pricepaths"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/internal/runner"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tasks"
)

// newRunners is the pool of runner processes strategy code runs in, with the configured
// limits and the CPU places that backtests and studies share. Automatic CPU places are one
// per CPU, one fewer when the process also serves the API, so requests stay fast however
// many backtests run.
func newRunners(cfg config.Config, log *slog.Logger, serving bool) (*runner.Pool, error) {
	warm := cfg.RunnersWarm
	if warm == 0 {
		warm = -1 // none kept waiting
	}
	slots := cfg.CPUSlots
	if slots < 0 { // automatic
		slots = runtime.NumCPU()
		if serving {
			slots = max(1, slots-1)
		}
	}
	return runner.New(runner.Config{
		MemoryLimit: uint64(cfg.RunMemoryMB) << 20, TimeLimit: cfg.RunTimeout, Warm: warm,
		MaxLogLines: cfg.RunLogLines, MaxLogBytes: cfg.RunLogMB << 20, Logger: log,
		CPUSlots: slots,
	})
}

// taskRuntime is the task service with its River client and the pool they use, sized for
// the worker concurrency (each running backtest holds at most one connection at a time).
type taskRuntime struct {
	svc     *tasks.Service
	studies *studies.Service
	paths   *pricepaths.Service
	client  *jobs.Client
	store   *store.Store
	started bool
	log     *slog.Logger
	grace   time.Duration // for running backtests to finish on stop

	stopSweep context.CancelFunc
}

// startTaskRuntime builds the task service and its River client over a pool of its own and,
// when cfg.Workers > 0, starts working jobs.
func startTaskRuntime(ctx context.Context, cfg config.Config, url string, runners *runner.Pool, log *slog.Logger) (*taskRuntime, error) {
	// A running backtest holds a connection only for short queries (the engine holds none),
	// so the pool stays well under PostgreSQL's default limit of 100 even with many workers.
	st, err := store.Open(ctx, url, int32(min(cfg.Workers+10, 60)))
	if err != nil {
		return nil, err
	}
	svc := tasks.New(tasks.Config{RunTimeout: cfg.RunTimeout, MemoryLimit: uint64(cfg.RunMemoryMB) << 20,
		LogDir: cfg.LogDir, Runner: runners, Lease: cfg.LeaseTimeout,
		UserMaxRunning: cfg.UserMaxRunning}, st, log)
	stud := studies.New(studies.Config{Runner: runners, RunTimeout: cfg.RunTimeout, MemoryLimit: uint64(cfg.RunMemoryMB) << 20,
		Lease: cfg.LeaseTimeout, UserMaxRunning: cfg.UserMaxRunning}, st, svc, log)
	paths := pricepaths.New(pricepaths.Config{Runner: runners, RunTimeout: cfg.RunTimeout, MemoryLimit: uint64(cfg.RunMemoryMB) << 20,
		UserMaxRunning: cfg.UserMaxRunning, Logger: log}, st, svc)
	// River reports routine work at info level; keep its warnings and errors.
	riverLog := slog.New(levelFloor{h: log.Handler(), min: slog.LevelWarn}).With("component", "river")
	client, err := jobs.NewClient(st.Pool, jobs.Config{
		Workers: cfg.Workers, RunTimeout: cfg.RunTimeout, RescueAfter: cfg.RescueAfter, Logger: riverLog,
		Register: func(w *river.Workers) {
			registerJobWorkers(cfg, st, log)(w)
			stud.AddWorker(w)
			paths.AddWorker(w)
		},
	}, svc)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc.SetQueue(client)
	stud.SetQueue(client)
	paths.SetQueue(client)
	rt := &taskRuntime{svc: svc, studies: stud, paths: paths, client: client, store: st, log: log, grace: cfg.ShutdownGrace}
	if cfg.Workers > 0 {
		// River gets a context that outlives ctx: stopWorkers stops it softly first.
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			st.Close()
			return nil, fmt.Errorf("start workers: %w", err)
		}
		rt.started = true
		sweepCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		rt.stopSweep = cancel
		// Every worker process runs both; their updates are guarded, so running them in
		// several processes at once is harmless.
		go every(sweepCtx, time.Minute, rt.sweep)
		go every(sweepCtx, cfg.LeaseTimeout/3, rt.reap)
		if cfg.Retention > 0 {
			go retention.New(st, log).Schedule(sweepCtx, cfg.Retention, 24*time.Hour)
		}
	}
	return rt, nil
}

// every calls fn every period until ctx ends.
func every(ctx context.Context, period time.Duration, fn func(context.Context)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// reap queues again running tasks whose worker stopped renewing its lease (see
// tasks.Service.Reap): run every third of the lease timeout, a dead worker's task runs
// elsewhere within about the timeout plus that.
func (rt *taskRuntime) reap(ctx context.Context) {
	if _, err := rt.svc.Reap(ctx); err != nil && ctx.Err() == nil {
		rt.log.Warn("queue again tasks whose worker is lost", "err", err)
	}
	if _, err := rt.studies.Reap(ctx); err != nil && ctx.Err() == nil {
		rt.log.Warn("queue again study batches whose worker is lost", "err", err)
	}
}

// sweep fails tasks whose job ended without finishing them (see tasks.Service.Sweep).
func (rt *taskRuntime) sweep(ctx context.Context) {
	if n, err := rt.svc.Sweep(ctx, time.Minute); err != nil && ctx.Err() == nil {
		rt.log.Warn("sweep unfinished tasks", "err", err)
	} else if n > 0 {
		rt.log.Warn("failed tasks whose job ended without finishing them", "tasks", n)
	}
}

// registerJobWorkers adds the River workers besides the backtest worker: the market-data
// update job (POST /api/data/{source}/update), refreshing symbols from the import folder
// (-import-dir, or IMPORT_DIR). They run on River's default queue in every process with
// workers.
func registerJobWorkers(cfg config.Config, st *store.Store, log *slog.Logger) func(*river.Workers) {
	return func(w *river.Workers) {
		marketdata.AddWorkers(w, marketdata.Deps{Store: st, ImportDir: cfg.ImportDir, Logger: log})
	}
}

// stopWorkers stops River: no new jobs are fetched, running backtests may finish within
// the grace period, and the rest are cancelled and handed back to the queue unchanged
// (pending, no attempt spent) for another worker to run.
func (rt *taskRuntime) stopWorkers() {
	if !rt.started {
		return
	}
	rt.stopSweep()
	rt.svc.Stopping()
	if err := jobs.Stop(context.Background(), rt.client, rt.grace); err != nil {
		rt.log.Warn("stop workers", "err", err)
	}
	rt.started = false
}

func (rt *taskRuntime) close() { rt.store.Close() }

// startListener runs the process's one LISTEN connection feeding hub until the returned
// stop function is called.
func startListener(url string, hub *events.Hub, svc *tasks.Service, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	l := events.NewListener(url, hub, log)
	// Events published while the connection was down are gone: give every watched task's
	// subscribers its current state from the tables instead.
	l.OnReconnect = func(ctx context.Context) {
		for _, id := range hub.TaskIDs() {
			complete, attempt, frame, err := svc.FinalState(ctx, id)
			if err != nil {
				log.Warn("resend task state", "task", id, "err", err)
				continue
			}
			if frame != nil {
				hub.SendTaskState(id, complete, attempt, frame)
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = l.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// levelFloor drops records below min.
type levelFloor struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f levelFloor) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{h: f.h.WithAttrs(a), min: f.min}
}
func (f levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{h: f.h.WithGroup(n), min: f.min}
}
