package studies_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tasks"
)

func TestMain(m *testing.M) { runnertest.Main(m) }

// spin burns spin loop turns per bar: a combination takes some milliseconds.
const spin = `
class Spin extends Strategy {
  static params = { spin: 300, fast: 10 };
  init() { this.sma = ind.SMA(this.data.close, this.p.fast); }
  next() {
    let x = 0; for (let i = 0; i < this.p.spin; i++) x += i;
    if (this.position.size === 0 && this.data.close[0] > this.sma[0]) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.data.close[0] < this.sma[0]) this.close();
  }
}`

// TestBatchesYieldTheirSlice: with a slice shorter than a batch, each batch job goes back
// to the queue many times with its remaining combinations (River snoozes, which spend no
// attempt), and the study completes with every combination stored once: nothing is lost
// or run twice by the yielding.
func TestBatchesYieldTheirSlice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("fixture %q: %v", sql, err)
		}
	}
	exec(`INSERT INTO data_sources (name, description, is_default) VALUES ('testsrc', 'test', true)`)
	exec(`INSERT INTO symbols (source, symbol, name, is_default) VALUES ('testsrc', 'AAA', 'A', true)`)
	bars := engine.RandomWalk(600, 3)
	rows := make([][]any, len(bars))
	for i, x := range bars {
		rows[i] = []any{"testsrc", "AAA", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
	}
	if _, err := st.Pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	info, err := jsrt.Inspect(ctx, spin)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(info.Params)
	exec(`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'Spin', 1)`)
	exec(`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 1, 'Spin', $1, 'Spin', $2, 'api', 'h')`, spin, params)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool := runnertest.Pool(t)
	svc := tasks.New(tasks.Config{RunTimeout: 30 * time.Second, Runner: pool}, st, log)
	stud := studies.New(studies.Config{Runner: pool, RunTimeout: 30 * time.Second, BatchSize: 20, Slice: 20 * time.Millisecond}, st, svc, log)
	client, err := jobs.NewClient(st.Pool, jobs.Config{Workers: 2, RunTimeout: 30 * time.Second, Logger: log, Register: stud.AddWorker}, svc)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetQueue(client)
	stud.SetQueue(client)
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(c)
	})

	id, from, to := "str_1", "1970-01-01", "1971-08-01"
	s, err := stud.Create(ctx, studies.Request{
		Request: tasks.Request{StrategyID: &id, StartDate: &from, EndDate: &to},
		Space:   map[string]json.RawMessage{"fast": json.RawMessage(`{"start": 2, "stop": 41, "step": 1}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 40 {
		t.Fatalf("study of %d combinations, want 40", s.Total)
	}
	for deadline := time.Now().Add(3 * time.Minute); s.Status != studies.StatusCompleted; time.Sleep(20 * time.Millisecond) {
		if s, err = stud.Get(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if s.Status == studies.StatusFailed || s.Status == studies.StatusCancelled || time.Now().After(deadline) {
			t.Fatalf("study %+v", s)
		}
	}
	if s.Done != 40 || s.Failed != 0 {
		t.Fatalf("study completed with %d done and %d failed, want 40 done", s.Done, s.Failed)
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := st.Pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM study_trials WHERE study_id = $1 AND status = 'completed' AND final_value > 0`, s.ID); n != 40 {
		t.Fatalf("%d combinations stored, want 40", n)
	}
	// The two batch jobs: each yielded (snoozed) several times, none spent a second attempt.
	var jobsDone, snoozes, maxAttempt int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := st.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'completed'), COALESCE(min((metadata->>'snoozes')::int), 0), max(attempt)
			FROM river_job WHERE kind = 'study_batch'`).Scan(&jobsDone, &snoozes, &maxAttempt); err != nil {
			t.Fatal(err)
		}
		if jobsDone == 2 || time.Now().After(deadline) {
			break
		}
	}
	if jobsDone != 2 || snoozes < 2 || maxAttempt != 1 {
		t.Fatalf("batch jobs: %d completed (want 2), fewest yields %d (want several), most attempts %d (want 1)", jobsDone, snoozes, maxAttempt)
	}
	t.Logf("each batch of 20 yielded at least %d times", snoozes)
}
