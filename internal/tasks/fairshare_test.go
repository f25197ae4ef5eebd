package tasks_test

import (
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/tasks"
)

// TestFairShare: with one running task per user allowed, alice's three tasks run one at a
// time on four workers, while bob's, submitted after hers, does not wait behind them all;
// nobody's task fails or spends an attempt waiting.
func TestFairShare(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 4, userMax: 1})
	b.exec(t, `INSERT INTO users (name, role, password_hash) VALUES ('alice', 'researcher', 'x'), ('bob', 'researcher', 'x')`)
	id := b.strategy(t, slow)
	submit := func(owner string) string {
		r := req(id)
		r.By = &owner
		r.StrategyParams = map[string]any{"spin": 200}
		r.EndDate = sp("1974-12-31") // about 1,800 bars: a few seconds a run
		return b.create(t, r).TaskID
	}
	var alices []string
	for range 3 {
		alices = append(alices, submit("alice"))
	}
	bob := submit("bob")

	maxAlice, aliceDoneWhenBobDone := 0, -1
	deadline := time.Now().Add(3 * time.Minute)
	for {
		running := b.count(t, `SELECT count(*) FROM tasks WHERE created_by = 'alice' AND status = 'running'`)
		maxAlice = max(maxAlice, running)
		done := b.count(t, `SELECT count(*) FROM tasks WHERE created_by = 'alice' AND status = 'completed'`)
		if aliceDoneWhenBobDone < 0 && b.count(t, `SELECT count(*) FROM tasks WHERE id = $1 AND status = 'completed'`, bob) == 1 {
			aliceDoneWhenBobDone = done
		}
		if done == 3 && aliceDoneWhenBobDone >= 0 {
			break
		}
		if b.count(t, `SELECT count(*) FROM tasks WHERE status IN ('failed', 'cancelled')`) > 0 || time.Now().After(deadline) {
			for _, id := range append(alices, bob) {
				task, _ := b.svc.Get(b.ctx, id)
				t.Logf("%s: %s %v", id, task.Status, deref(task.Error))
			}
			t.Fatalf("alice done %d, bob done when alice had %d; a task failed or time ran out", done, aliceDoneWhenBobDone)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if maxAlice != 1 {
		t.Errorf("alice ran %d tasks at once, want 1", maxAlice)
	}
	if aliceDoneWhenBobDone == 3 {
		t.Error("bob's task waited behind all of alice's")
	}
	for _, id := range append(alices, bob) {
		task := b.wait(t, id, tasks.StatusCompleted)
		if task.Attempt != 1 || len(task.Attempts) != 1 || task.Attempts[0].Runs != 1 {
			t.Errorf("%s: attempt %d, attempts %+v: waiting must not spend an attempt or a run", id, task.Attempt, task.Attempts)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
