package jobs_test

// Faults of the parts around the workers, with real processes: PostgreSQL restarted
// mid-run, the API's LISTEN connection cut. In every case each task reaches its final
// state once and the WebSocket clients hear about it.

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/pgcluster"
	"github.com/backtestd/backtestd/internal/store"
)

type event struct {
	name string
	at   time.Time // when it was read
}

// watch connects a WebSocket client to the API for task id and collects its events.
func watch(t *testing.T, base, id string) <-chan event {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	out := make(chan event, 10000)
	go func() {
		defer close(out)
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var f struct{ Event string }
			_ = json.Unmarshal(msg, &f)
			out <- event{f.Event, time.Now()}
		}
	}()
	return out
}

// waitEvent waits for an event named want read after since, and returns when it came.
func waitEvent(t *testing.T, events <-chan event, want string, since time.Time, within time.Duration) time.Time {
	t.Helper()
	deadline := time.After(within)
	n := 0
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the WebSocket closed before a %s event (%d events)", want, n)
			}
			if ev.name == want && !ev.at.Before(since) {
				return ev.at
			}
			n++
		case <-deadline:
			t.Fatalf("no %s event within %s (%d events)", want, within, n)
		}
	}
}

// PostgreSQL restarted (fast shutdown: every connection cut) while two backtests run: both
// complete once, and a WebSocket client of the API hears of the completion.
func TestPostgresRestartMidRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A cluster of the test's own: the shared test cluster must not restart under others.
	dir, err := os.MkdirTemp("", "pgrestart")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgcluster.New(dir)
	if err != nil {
		t.Skip(err) // no server binaries: pgtest uses TEST_DATABASE_URL then
	}
	c.Fast = true
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Stop(context.Background())
		_ = os.RemoveAll(dir)
	})
	url := c.URL("postgres")
	if err := store.Migrate(ctx, url, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	e := newProcEnvAt(t, url)
	env := []string{"RUN_TIMEOUT=120s"}
	base := e.start(t, env, "serve", "-workers", "0", "-listen", "127.0.0.1:0").URL(t)
	e.start(t, env, "worker", "-workers", "2")
	events := watch(t, base, "task_1")
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)
	e.waitMidRun(t, "task_1")

	e.pool.Reset() // the test's own connections die with the server too
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	for _, id := range []string{"task_1", "task_2"} {
		e.waitStatus(t, id, 4*time.Minute, "completed")
		var results, equity, attempts int
		e.scalar(t, &results, `SELECT count(*) FROM results WHERE task_id = $1`, id)
		e.scalar(t, &equity, `SELECT count(*) FROM result_equity WHERE task_id = $1`, id)
		e.scalar(t, &attempts, `SELECT count(*) FROM task_attempts WHERE task_id = $1`, id)
		if results != 1 || equity != nBars || attempts != 1 {
			t.Fatalf("%s: %d results, %d equity rows (want %d), %d attempts", id, results, equity, nBars, attempts)
		}
	}
	t.Logf("both tasks completed %s after PostgreSQL came back", time.Since(restarted).Round(time.Millisecond))
	waitEvent(t, events, "complete", restarted, time.Minute)
}

// The API's LISTEN connection is terminated (pg_terminate_backend) during a run: the
// listener reconnects, resends the task's state, and the WebSocket client goes on getting
// the run's events to its completion.
func TestListenConnectionTerminated(t *testing.T) {
	t.Parallel()
	e := newProcEnv(t)
	e.explainOnFailure(t, "task_1")
	base := e.start(t, nil, "serve", "-workers", "0", "-listen", "127.0.0.1:0").URL(t)
	e.start(t, nil, "worker", "-workers", "1")
	events := watch(t, base, "task_1")
	waitEvent(t, events, "connected", time.Time{}, time.Minute)
	post(t, base+"/api/backtests", body+`,"strategy_params":{"spin":3000}}`)
	e.waitMidRun(t, "task_1")
	waitEvent(t, events, "progress", time.Time{}, time.Minute)

	var cut int
	e.scalar(t, &cut, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
	if cut == 0 {
		t.Fatal("no LISTEN connection found to terminate")
	}
	terminated := time.Now()
	var st string
	e.scalar(t, &st, `SELECT status FROM tasks WHERE id = 'task_1'`)
	if st != "running" {
		t.Fatalf("task_1 is %s when its listener was cut; the run is too short for this test", st)
	}
	again := waitEvent(t, events, "progress", terminated, time.Minute)
	t.Logf("%d LISTEN connections cut; progress events again %s later", cut, again.Sub(terminated).Round(time.Millisecond))
	waitEvent(t, events, "complete", terminated, 4*time.Minute)
	e.waitStatus(t, "task_1", time.Minute, "completed")
}
