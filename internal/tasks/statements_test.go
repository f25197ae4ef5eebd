package tasks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestStatementsPerTask pins what one task costs the database from submission to
// completion, River's share included: round trips and commits per task (issue 35: the
// service's cost per run). A change that adds statements to every run fails it.
func TestStatementsPerTask(t *testing.T) {
	var c store.Counter
	b := setup(t, opts{workers: 4, counter: &c})
	id := b.strategy(t, smaCross)
	// One run first: prepared statements and River's start-up are not the per-task cost.
	b.wait(t, b.create(t, req(id)).TaskID, tasks.StatusCompleted)
	// The test watches through a pool of its own, which the counter does not see.
	watch, err := pgxpool.New(b.ctx, b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	const n = 20
	before := c.Snapshot()
	for range n {
		b.create(t, req(id))
	}
	deadline := time.Now().Add(b.patience)
	for {
		var done int
		if err := watch.QueryRow(b.ctx, `SELECT count(*) FROM tasks WHERE status = 'completed'`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done == n+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d tasks completed", done-1, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := c.Snapshot().Since(before)
	t.Logf("%d tasks: %s", n, got)

	// What every task costs whatever its timing: submission, start, reads, completion.
	// Left out: what a run sends while it goes on (progress rows and events, log lines,
	// lease renewals), which depends on how long it takes on this machine, River's own
	// (fetches, completions batched over the jobs ready together, maintenance) and lone
	// begins and commits (the submission's, and River's maintenance transactions').
	perTask := 0
	for trip, k := range got.ByTrip {
		switch {
		case trip == "select pg_notify($1, $2)", strings.Contains(trip, "SetTaskProgress"),
			trip == "begin+CommitWithoutWaiting+InsertTaskLogChunk+commit", trip == "RenewLease",
			trip == "begin", trip == "commit":
		case strings.HasPrefix(trip, "Job") || strings.HasPrefix(trip, "PGNotify") ||
			strings.HasPrefix(trip, "Leader") || strings.HasPrefix(trip, "Queue"),
			// River's listener asks who sent each notification it gets (internal/jobs:
			// only the service's role is trusted): one per notification, batched over the
			// jobs inserted together, like PGNotifyMany.
			strings.HasPrefix(trip, "select r.rolname"):
		default:
			perTask += k
		}
	}
	// 16 now (before issue 35's round: 27, and its start, completion and last log lines
	// had a transaction each, begin and commit alone, and its 0%, 100% and completion a
	// NOTIFY each: 44 round trips per task in all, River's included): 4
	// checks of the request and a time zone read; the task, then its job id and attempt;
	// the start; the run's data source and strategy version, and the bars' version twice;
	// 5 for the completion (begin with the last log lines and the task, attempt and
	// provenance; the result's summary rows; two COPYs; the equity, the events and the
	// commit).
	if perTask > 16*n {
		t.Errorf("%.1f round trips per task, want at most 16", float64(perTask)/n)
	}
	for _, name := range []string{"StartTaskRun", "CompleteTaskRun", "CreateTask", "JobInsertFastMany"} {
		if got.ByName[name] != n {
			t.Errorf("%s ran %d times for %d tasks", name, got.ByName[name], n)
		}
	}
}
