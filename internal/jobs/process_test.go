package jobs_test

// Tests with real processes: the backtestd binary is built once, then run as an API process
// without workers (`serve -workers 0`) and as separate worker processes on one database.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/proctest"
)

const (
	logging = `
class Logging extends Strategy {
  static params = { spin: 0 };
  next() {
    let x = 0; for (let i = 0; i < this.p.spin; i++) x += i;
    if (this.data.close.length % 100 === 0) this.log('bar ' + this.data.close.length, 'INFO');
    if (this.position.size === 0 && this.data.close.length % 50 === 0) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.data.close.length % 50 === 25) this.close();
  }
}`
	nBars = 3000
)

func TestMain(m *testing.M) { proctest.Main(m) }

type procEnv struct {
	ctx  context.Context
	url  string
	pool *pgxpool.Pool
}

// newProcEnv creates a database with source "testsrc" (symbol AAA, 3,000 daily bars) and
// strategy str_1 (Logging).
func newProcEnv(t *testing.T) *procEnv {
	t.Helper()
	return newProcEnvAt(t, pgtest.NewDatabase(t))
}

// newProcEnvAt is newProcEnv on a migrated database of the caller's.
func newProcEnvAt(t *testing.T, url string) *procEnv {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e := &procEnv{ctx: ctx, url: url, pool: pool}
	e.exec(t, `INSERT INTO data_sources (name, description) VALUES ('testsrc', 'test')`)
	e.exec(t, `INSERT INTO symbols (source, symbol, name) VALUES ('testsrc', 'AAA', 'A')`)
	bars := engine.RandomWalk(nBars, 5)
	rows := make([][]any, len(bars))
	for i, x := range bars {
		rows[i] = []any{"testsrc", "AAA", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	info, err := jsrt.Inspect(ctx, logging)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(info.Params)
	e.exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'Logging', 1)`)
	e.exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 1, 'Logging', $1, 'Logging', $2, 'api', 'h')`, logging, params)
	return e
}

func (e *procEnv) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := e.pool.Exec(e.ctx, sql, args...); err != nil {
		t.Fatalf("fixture: %v", err)
	}
}

func (e *procEnv) scalar(t *testing.T, dst any, sql string, args ...any) {
	t.Helper()
	if err := e.pool.QueryRow(e.ctx, sql, args...).Scan(dst); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// explainOnFailure logs, if t fails, what the database holds of task id: its row, its
// attempts, its River jobs and its last log lines, so a run that never ended says where
// it stopped.
func (e *procEnv) explainOnFailure(t *testing.T, id string) {
	e.explain(t, id,
		`SELECT row_to_json(t)::text FROM tasks t WHERE id = $1`,
		`SELECT row_to_json(a)::text FROM task_attempts a WHERE task_id = $1 ORDER BY attempt`,
		`SELECT json_build_object('id', id, 'state', state, 'attempt', attempt, 'attempted_by', attempted_by, 'errors', errors)::text FROM river_job WHERE args->>'task_id' = $1 ORDER BY id`,
		`SELECT format('%s %s %s', ts, level, message) FROM (SELECT * FROM task_logs WHERE task_id = $1 ORDER BY id DESC LIMIT 10) l ORDER BY ts`)
}

// explainStudyOnFailure logs, if t fails, what the database holds of study id: its row,
// its trials by status, its leases and its River jobs.
func (e *procEnv) explainStudyOnFailure(t *testing.T, id string) {
	e.explain(t, id,
		`SELECT format('%s %s started %s', id, status, started_at) FROM studies WHERE id = $1`,
		`SELECT format('trials %s: %s', status, count(*)) FROM study_trials WHERE study_id = $1 GROUP BY status`,
		`SELECT row_to_json(b)::text FROM study_batches b WHERE study_id = $1`,
		`SELECT json_build_object('id', id, 'state', state, 'priority', priority, 'attempt', attempt, 'scheduled_at', scheduled_at, 'attempted_by', attempted_by, 'errors', errors, 'args', args, 'metadata', metadata)::text FROM river_job WHERE args->>'study_id' = $1 ORDER BY id`,
		`SELECT format('leader %s elected %s expires %s (now %s)', leader_id, elected_at, expires_at, now()) FROM river_leader WHERE $1 <> ''`)
}

// explain logs, if t fails, the rows of each query (one text column, argument id).
func (e *procEnv) explain(t *testing.T, id string, queries ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, q := range queries {
			rows, err := e.pool.Query(context.Background(), q, id)
			if err != nil {
				t.Logf("%s: %v", q, err)
				continue
			}
			for rows.Next() {
				var s string
				if rows.Scan(&s) == nil {
					t.Logf("%s", s)
				}
			}
			rows.Close()
		}
	})
}

// start runs the binary with args and env against the environment's database.
func (e *procEnv) start(t *testing.T, env []string, args ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, append([]string{"DATABASE_URL=" + e.url, "SAMPLE_DATA=false", "LOG_LEVEL=info"}, env...), args...)
}

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func del(t *testing.T, url string) {
	t.Helper()
	req, _ := http.NewRequest("DELETE", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("DELETE %s: %d", url, resp.StatusCode)
	}
}

// waitMidRun waits until task id runs and has stored some progress, and returns its bar.
func (e *procEnv) waitMidRun(t *testing.T, id string) int {
	t.Helper()
	e.waitStatus(t, id, 60*time.Second, "running")
	var bar int
	for deadline := time.Now().Add(30 * time.Second); bar == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		e.scalar(t, &bar, `SELECT current_bar FROM tasks WHERE id = $1`, id)
	}
	return bar
}

func (e *procEnv) waitStatus(t *testing.T, id string, within time.Duration, want string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var st string
		e.scalar(t, &st, `SELECT status FROM tasks WHERE id = $1`, id)
		if st == want {
			return
		}
		if st == "failed" || st == "completed" || st == "cancelled" {
			var msg *string
			e.scalar(t, &msg, `SELECT error FROM tasks WHERE id = $1`, id)
			if msg != nil {
				t.Fatalf("task %s is %s (%s), want %s", id, st, *msg, want)
			}
			t.Fatalf("task %s is %s, want %s", id, st, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s after %s, want %s", id, st, within, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const body = `{"strategy_id":"str_1","data_source":"testsrc","symbol":"AAA","start_date":"1970-01-01","end_date":"1990-01-01"`

func TestTwoProcesses(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	api := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0")
	base := api.URL(t)
	e.start(t, nil, "worker", "-workers", "2")

	// Events of a task the worker process runs reach a WebSocket client of the API process.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/task_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	seen := map[string]int{}
	read := func() string {
		_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read after %v: %v", seen, err)
		}
		var f struct{ Event string }
		_ = json.Unmarshal(msg, &f)
		seen[f.Event]++
		return f.Event
	}
	if ev := read(); ev != "connected" {
		t.Fatalf("first event %s", ev)
	}
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":200}}`)
	for read() != "complete" {
	}
	if seen["progress"] == 0 || seen["log"] == 0 {
		t.Fatalf("events: %v", seen)
	}

	// A cancel sent to the API stops the run in the worker process within a second.
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":100000000}}`)
	e.waitStatus(t, "task_2", 30*time.Second, "running")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	del(t, base+"/api/backtests/task_2")
	var jobID int64
	e.scalar(t, &jobID, `SELECT job_id FROM tasks WHERE id = 'task_2'`)
	for {
		var state string
		e.scalar(t, &state, `SELECT state::text FROM river_job WHERE id = $1`, jobID)
		if state == "cancelled" {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("job still %s 10s after the cancel", state)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The 1 s target is measured (docs/performance.md gives the figure), not asserted: on a machine
	// with every core busy the cancel's way through River and the kill took 1.5 s. The
	// loop above fails a cancel that does not stop the run within 10 s.
	t.Logf("cancel → run stopped in the worker process: %s", time.Since(start))
	var status string
	e.scalar(t, &status, `SELECT status FROM tasks WHERE id = 'task_2'`)
	if status != "cancelled" {
		t.Fatalf("task_2 is %s", status)
	}
}

// A worker killed mid-run (SIGKILL: no goodbye) stops renewing its lease; another worker
// notices within the lease timeout, queues the task again and runs it to completion. The
// result is stored once, the log holds one run's lines and a line saying what happened,
// and the attempt history names the lost worker.
func TestDeadWorkerRunsElsewhere(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	// River's own rescue (a margin past RUN_TIMEOUT) is minutes away: the lease does it.
	// 6 s, not less: on a machine with both cores busy a live worker's renewal has taken
	// over 2 s, and its run was (rightly, for that setting) taken away a second time.
	env := []string{"RUN_TIMEOUT=120s", "LEASE_TIMEOUT=6s"}
	first := e.start(t, env, "worker", "-workers", "1")
	// Enqueue through the API process so the job is inserted exactly as in production.
	api := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0")
	post(t, api.URL(t)+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)

	bar := e.waitMidRun(t, "task_1")
	e.start(t, env, "worker", "-workers", "1")
	var oldJob int64
	e.scalar(t, &oldJob, `SELECT job_id FROM tasks WHERE id = 'task_1'`)
	if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	host, _ := os.Hostname()
	dead := fmt.Sprintf("%s:%d", host, first.Cmd.Process.Pid)

	// Running again, on the other worker.
	for {
		var st string
		var worker *string
		if err := e.pool.QueryRow(e.ctx, `SELECT status, worker FROM tasks WHERE id = 'task_1'`).Scan(&st, &worker); err != nil {
			t.Fatal(err)
		}
		if st == "completed" || st == "running" && worker != nil && *worker != dead {
			break
		}
		if st != "running" && st != "pending" || time.Since(killed) > 2*time.Minute {
			t.Fatalf("task_1 is %s %v, %s after its worker was killed", st, worker, time.Since(killed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("killed at bar %d; running on another worker %s after the kill (LEASE_TIMEOUT=6s)", bar, time.Since(killed).Round(time.Millisecond))
	e.waitStatus(t, "task_1", 4*time.Minute, "completed")

	var results, equity, attempts, runs, newJobAttempt int
	var newJob int64
	var interruptions []map[string]any
	e.scalar(t, &results, `SELECT count(*) FROM results WHERE task_id = 'task_1'`)
	e.scalar(t, &equity, `SELECT count(*) FROM result_equity WHERE task_id = 'task_1'`)
	e.scalar(t, &attempts, `SELECT count(*) FROM task_attempts WHERE task_id = 'task_1'`)
	e.scalar(t, &runs, `SELECT runs FROM task_attempts WHERE task_id = 'task_1'`)
	e.scalar(t, &interruptions, `SELECT interruptions FROM task_attempts WHERE task_id = 'task_1'`)
	e.scalar(t, &newJob, `SELECT job_id FROM tasks WHERE id = 'task_1'`)
	e.scalar(t, &newJobAttempt, `SELECT attempt FROM river_job WHERE id = $1`, newJob)
	if results != 1 || equity != nBars || attempts != 1 || runs != 2 || newJob == oldJob || newJobAttempt != 1 {
		t.Fatalf("results %d, equity rows %d (want %d), task attempts %d, runs %d (want 2), job %d → %d (attempt %d)",
			results, equity, nBars, attempts, runs, oldJob, newJob, newJobAttempt)
	}
	if len(interruptions) != 1 || interruptions[0]["worker"] != dead {
		t.Fatalf("interruptions %v, want one of worker %s", interruptions, dead)
	}
	// Log lines are not duplicated: the run logs every 100th bar once; one line tells of
	// the lost worker.
	var logs, distinct, notice int
	e.scalar(t, &logs, `SELECT count(*) FROM task_logs WHERE task_id = 'task_1' AND source = 'strategy'`)
	e.scalar(t, &distinct, `SELECT count(DISTINCT message) FROM task_logs WHERE task_id = 'task_1' AND source = 'strategy'`)
	e.scalar(t, &notice, `SELECT count(*) FROM task_logs WHERE task_id = 'task_1' AND level = 'WARNING' AND message LIKE $1`,
		"worker "+dead+" stopped renewing its lease%")
	if logs != nBars/100 || distinct != logs || notice != 1 {
		t.Fatalf("%d strategy log lines (%d distinct), want %d; %d lines about the lost worker, want 1", logs, distinct, nBars/100, notice)
	}
}

// A worker frozen mid-run (SIGSTOP, as a paused VM or a long stall) loses its lease; the
// task completes on another worker; when the frozen worker resumes, its run stops and
// stores nothing: the result is stored exactly once.
func TestFrozenWorkerStoresNothing(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	env := []string{"RUN_TIMEOUT=120s", "LEASE_TIMEOUT=2s"}
	frozen := e.start(t, env, "worker", "-workers", "1")
	base := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0").URL(t)
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)
	e.waitMidRun(t, "task_1")
	var oldJob int64
	e.scalar(t, &oldJob, `SELECT job_id FROM tasks WHERE id = 'task_1'`)
	if err := frozen.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	e.start(t, env, "worker", "-workers", "1")
	e.waitStatus(t, "task_1", 4*time.Minute, "completed")
	var stored time.Time
	e.scalar(t, &stored, `SELECT created_at FROM results WHERE task_id = 'task_1'`)

	if err := frozen.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The resumed worker finds its lease gone at its next renewal (or its completion),
	// and ends the old job.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var state string
		e.scalar(t, &state, `SELECT state::text FROM river_job WHERE id = $1`, oldJob)
		if state == "cancelled" || state == "completed" || state == "discarded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the frozen worker's job is still %s two minutes after it resumed", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var results, runs int
	var after time.Time
	e.scalar(t, &results, `SELECT count(*) FROM results WHERE task_id = 'task_1'`)
	e.scalar(t, &after, `SELECT created_at FROM results WHERE task_id = 'task_1'`)
	e.scalar(t, &runs, `SELECT runs FROM task_attempts WHERE task_id = 'task_1'`)
	if results != 1 || !after.Equal(stored) || runs != 2 {
		t.Fatalf("%d results, stored at %s then %s (the resumed worker stored again), %d runs (want 2)", results, stored, after, runs)
	}
}

// A run much longer than the lease timeout, on a busy worker, keeps its lease: it is never
// taken away from a live worker.
func TestSlowRunKeepsItsLease(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	// A lease of a few seconds: on a machine busy enough, even one UPDATE can take two
	// (the dead-worker tests use 2s; a lease lost to that is taken over, correctly, but
	// this test is about the ordinary case).
	// The runs spin for about 27 s under the race detector on a quiet 2-core machine, and
	// over 120 s when CPU hogs take both cores from the runners (which run at a lower
	// priority): the time limit and the wait leave room for that.
	env := []string{"RUN_TIMEOUT=600s", "LEASE_TIMEOUT=5s"}
	e.start(t, env, "worker", "-workers", "2")
	e.start(t, env, "worker", "-workers", "2")
	base := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0").URL(t)
	for range 3 {
		post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":20000}}`)
	}
	var took time.Duration
	for _, id := range []string{"task_1", "task_2", "task_3"} {
		e.waitStatus(t, id, 10*time.Minute, "completed")
		var runs int
		var interruptions string
		var d float64
		e.scalar(t, &runs, `SELECT runs FROM task_attempts WHERE task_id = $1`, id)
		e.scalar(t, &interruptions, `SELECT interruptions::text FROM task_attempts WHERE task_id = $1`, id)
		e.scalar(t, &d, `SELECT extract(epoch FROM completed_at - started_at) FROM tasks WHERE id = $1`, id)
		if runs != 1 || interruptions != "[]" {
			t.Fatalf("%s: %d runs, interruptions %s; a live worker's run was taken away", id, runs, interruptions)
		}
		took = max(took, time.Duration(d*float64(time.Second)))
	}
	if took < 10*time.Second {
		t.Fatalf("the longest run took %s: too short to show a lease of 5s kept", took)
	}
	t.Logf("runs of up to %s kept a 5s lease", took.Round(time.Millisecond))
}

// A worker told to stop (SIGTERM) lets its run finish within the grace period; a run that
// does not is handed back to the queue unchanged (pending, no attempt spent, no partial
// log) and another worker runs it to completion once.
func TestStoppingWorkerHandsBackItsRun(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	env := []string{"RUN_TIMEOUT=120s", "SHUTDOWN_GRACE=500ms"}
	first := e.start(t, env, "worker", "-workers", "1")
	api := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0")
	post(t, api.URL(t)+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)

	e.waitMidRun(t, "task_1")
	if err := first.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, "task_1", 60*time.Second, "pending")
	var attempts, logs int
	var attemptStatus string
	e.scalar(t, &attempts, `SELECT count(*) FROM task_attempts WHERE task_id = 'task_1'`)
	e.scalar(t, &attemptStatus, `SELECT status FROM task_attempts WHERE task_id = 'task_1'`)
	e.scalar(t, &logs, `SELECT count(*) FROM task_logs WHERE task_id = 'task_1' AND source = 'strategy'`)
	if attempts != 1 || attemptStatus != "pending" || logs != 0 {
		t.Fatalf("handed back: %d attempts (%s), %d strategy log lines left", attempts, attemptStatus, logs)
	}

	e.start(t, env, "worker", "-workers", "1")
	e.waitStatus(t, "task_1", 120*time.Second, "completed")
	var results, jobAttempt int
	e.scalar(t, &results, `SELECT count(*) FROM results WHERE task_id = 'task_1'`)
	e.scalar(t, &attempts, `SELECT count(*) FROM task_attempts WHERE task_id = 'task_1' AND status = 'completed'`)
	e.scalar(t, &jobAttempt, `SELECT attempt FROM river_job WHERE id = (SELECT job_id FROM tasks WHERE id = 'task_1')`)
	e.scalar(t, &logs, `SELECT count(*) FROM task_logs WHERE task_id = 'task_1' AND source = 'strategy'`)
	if results != 1 || attempts != 1 || jobAttempt != 1 || logs != nBars/100 {
		t.Fatalf("results %d, completed attempts %d, job attempts %d (want 1: the hand-back is not one), strategy log lines %d (want %d)",
			results, attempts, jobAttempt, logs, nBars/100)
	}
}

// A worker killed mid-study (SIGKILL) stops renewing its batch's lease; another worker
// queues the batch's pending combinations again and the study completes with every
// combination stored once: the ones the dead worker stored stay, none is lost.
func TestDeadWorkerStudyLosesNothing(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	env := []string{"RUN_TIMEOUT=120s", "LEASE_TIMEOUT=6s"}
	first := e.start(t, env, "worker", "-workers", "1")
	api := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0")
	const total = 15 // three batches of five
	st := post(t, api.URL(t)+"/api/studies", body+`,"space":{"spin":{"start":800,"stop":814,"step":1}}}`)
	id, _ := st["id"].(string)
	if st["total"] != float64(total) {
		t.Fatalf("study %v", st)
	}
	e.explainStudyOnFailure(t, id)
	// Killed once it has stored some of its combinations and not all.
	var done int
	for deadline := time.Now().Add(2 * time.Minute); done == 0; time.Sleep(20 * time.Millisecond) {
		e.scalar(t, &done, `SELECT count(*) FROM study_trials WHERE study_id = $1 AND status = 'completed'`, id)
		if time.Now().After(deadline) {
			t.Fatalf("no combination of %s stored in 2 minutes:\n%s", id, proctest.Tail(first.Log(), 40))
		}
	}
	second := e.start(t, env, "worker", "-workers", "1")
	if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	e.scalar(t, &done, `SELECT count(*) FROM study_trials WHERE study_id = $1 AND status = 'completed'`, id)
	for {
		var status string
		e.scalar(t, &status, `SELECT status FROM studies WHERE id = $1`, id)
		if status == "completed" {
			break
		}
		if status != "running" && status != "pending" || time.Since(killed) > 4*time.Minute {
			t.Fatalf("%s is %s %s after its worker was killed:\n%s", id, status, time.Since(killed), proctest.Tail(second.Log(), 40))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("killed with %d of %d stored; study completed %s after the kill (LEASE_TIMEOUT=6s)", done, total, time.Since(killed).Round(time.Millisecond))
	var completed, failed, leases int
	e.scalar(t, &completed, `SELECT count(*) FROM study_trials WHERE study_id = $1 AND status = 'completed' AND final_value > 0`, id)
	e.scalar(t, &failed, `SELECT count(*) FROM study_trials WHERE study_id = $1 AND status <> 'completed'`, id)
	// The last batch releases its lease just after it stores the study's end.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		e.scalar(t, &leases, `SELECT count(*) FROM study_batches WHERE study_id = $1`, id)
		if leases == 0 || time.Now().After(deadline) {
			break
		}
	}
	if completed != total || failed != 0 || leases != 0 {
		t.Fatalf("%d of %d combinations completed, %d not; %d leases left", completed, total, failed, leases)
	}
	// The dead worker's batch still had pending combinations (it had stored one): only the
	// reaper could hand them on (River's own rescue is minutes away).
	if !strings.Contains(second.Log(), "study batch queued again") {
		t.Errorf("the second worker did not say it queued the dead worker's batch again:\n%s", proctest.Tail(second.Log(), 40))
	}
}
