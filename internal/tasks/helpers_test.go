package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

func TestMain(m *testing.M) { runnertest.Main(m) }

// Strategies used by the tests.
const (
	smaCross = `
/**
 * Moving-average crossover.
 * fast: fast period
 * slow: slow period
 */
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10 };
  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
  }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) { this.buy({ size: this.p.size }); this.log('buy signal', 'INFO'); }
    else if (this.position.size > 0 && this.cross[0] < 0) { this.close(); this.log('sell signal', 'DEBUG'); }
  }
}`
	// spin burns about spin loop turns per bar, for runs that take a while.
	slow = `
class Slow extends Strategy {
  static params = { spin: 20000 };
  next() { let x = 0; for (let i = 0; i < this.p.spin; i++) x += i; if (x < 0) this.log('never'); }
}`
	throws = `
class Throws extends Strategy {
  next() { if (this.data.close.length > 5) throw new Error('boom at bar ' + this.data.close.length); }
}`
	forever = `
class Forever extends Strategy {
  next() { for (;;) {} }
}`
)

type bundle struct {
	ctx      context.Context
	url      string
	store    *store.Store
	svc      *tasks.Service
	client   *jobs.Client
	hub      *events.Hub
	strat    map[string]string // code → strategy id
	mu       sync.Mutex
	patience time.Duration // how long wait waits: longer than a run may take
}

type opts struct {
	workers    int
	runTimeout time.Duration
	logDir     string
	cpuSlots   int
	userMax    int            // Config.UserMaxRunning
	counter    *store.Counter // sees every statement of the bundle's pool
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// setup gives a fresh database with a default data source "testsrc", symbol "AAA" with
// 5,000 daily bars from 1970-01-01, and a task service with o.workers River workers.
func setup(t *testing.T, o opts) *bundle {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	var tracers []pgx.QueryTracer
	if o.counter != nil {
		tracers = append(tracers, o.counter)
	}
	st, err := store.Open(ctx, url, 20, tracers...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	b := &bundle{ctx: ctx, url: url, store: st, strat: map[string]string{}}
	b.exec(t, `INSERT INTO data_sources (name, description, is_default) VALUES ('testsrc', 'test data', true)`)
	b.exec(t, `INSERT INTO data_sources (name, description) VALUES ('empty', 'no symbols')`)
	b.exec(t, `INSERT INTO symbols (source, symbol, name, is_default) VALUES ('testsrc', 'AAA', 'A', true), ('testsrc', 'BBB', 'B', false)`)
	bars := engine.RandomWalk(5000, 7)
	rows := make([][]any, len(bars))
	for i, x := range bars {
		rows[i] = []any{"testsrc", "AAA", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
	}
	if _, err := st.Pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	if o.runTimeout == 0 {
		o.runTimeout = 30 * time.Second
	}
	b.patience = max(60*time.Second, o.runTimeout+30*time.Second)
	b.svc = tasks.New(tasks.Config{RunTimeout: o.runTimeout, LogDir: o.logDir, Runner: runnertest.PoolSlots(t, o.cpuSlots), UserMaxRunning: o.userMax}, st, quietLog())
	b.client, err = jobs.NewClient(st.Pool, jobs.Config{Workers: o.workers, RunTimeout: o.runTimeout, Logger: quietLog()}, b.svc)
	if err != nil {
		t.Fatal(err)
	}
	b.svc.SetQueue(b.client)
	if o.workers > 0 {
		if err := b.client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.client.StopAndCancel(c)
		})
	}
	b.hub = events.NewHub()
	lctx, cancel := context.WithCancel(ctx)
	l := events.NewListener(url, b.hub, quietLog())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(lctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-l.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("listener not ready")
	}
	return b
}

// startWorkers starts a second River client with n workers on the bundle's database (for
// bundles set up without workers).
func (b *bundle) startWorkers(t *testing.T, n int) {
	t.Helper()
	c, err := jobs.NewClient(b.store.Pool, jobs.Config{Workers: n, RunTimeout: 30 * time.Second, Logger: quietLog()}, b.svc)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.StopAndCancel(ctx)
	})
}

func (b *bundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := b.store.Pool.Exec(b.ctx, sql, args...); err != nil {
		t.Fatalf("fixture %q: %v", sql, err)
	}
}

// strategy stores code as a strategy (once) and returns its id.
func (b *bundle) strategy(t testing.TB, code string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.strat[code]; ok {
		return id
	}
	info, err := jsrt.Inspect(b.ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(info.Params)
	id := fmt.Sprintf("str_%d", len(b.strat)+1)
	b.exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ($1, $2, 1)`, id, info.ClassName)
	b.exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ($1, 1, $2, $3, $2, $4, 'api', 'h')`, id, info.ClassName, code, params)
	b.strat[code] = id
	return id
}

func sp(s string) *string   { return &s }
func fp(f float64) *float64 { return &f }
func req(id string) tasks.Request {
	return tasks.Request{StrategyID: &id, StartDate: sp("1970-01-01"), EndDate: sp("1983-12-31")}
}

// create submits r and fails the test on error.
func (b *bundle) create(t testing.TB, r tasks.Request) tasks.Task {
	t.Helper()
	task, err := b.svc.Create(b.ctx, r)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return task
}

// wait polls until the task reaches one of the states.
func (b *bundle) wait(t testing.TB, id string, states ...tasks.Status) tasks.Task {
	t.Helper()
	deadline := time.Now().Add(b.patience)
	for {
		task, err := b.svc.Get(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if task.Status == s {
				return task
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want one of %v", id, task.Status, states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jobState returns the River state of a job, or "" when the job row is gone.
func (b *bundle) jobState(t testing.TB, id int64) (state string, attempt int) {
	t.Helper()
	err := b.store.Pool.QueryRow(b.ctx, `SELECT state::text, attempt FROM river_job WHERE id = $1`, id).Scan(&state, &attempt)
	if errors.Is(err, store.ErrNotFound) {
		return "", 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return state, attempt
}

// waitJob polls until the job reaches state.
func (b *bundle) waitJob(t testing.TB, id int64, state string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, a := b.jobState(t, id)
		if s == state {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %q, want %q", id, s, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *bundle) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.store.Pool.QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *bundle) jobID(t testing.TB, taskID string) int64 {
	t.Helper()
	var id *int64
	if err := b.store.Pool.QueryRow(b.ctx, `SELECT job_id FROM tasks WHERE id = $1`, taskID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id == nil {
		t.Fatalf("task %s has no job", taskID)
	}
	return *id
}

// apiErr asserts err is an apperr of kind with detail.
func apiErr(t testing.TB, err error, kind apperr.Kind, detail string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("error %v is not an apperr", err)
	}
	if e.Kind != kind || e.Detail != detail {
		t.Fatalf("error = (%v, %q), want (%v, %q)", e.Kind, e.Detail, kind, detail)
	}
}
