package tasks_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestSignalTasksMatchBacktrader runs strategies that trade by signals (static signals,
// signalAdd) through the task queue on the imported ORCL reference data and compares what
// was stored with backtrader's SignalStrategy (testdata/backtrader/expected): a task runs
// the signals as `backtestd run` does.
func TestSignalTasksMatchBacktrader(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 2, runTimeout: 3 * time.Minute})
	md := marketdata.NewService(b.store, nil)
	if _, err := md.Import(b.ctx, "testsrc", "ORCL", "", "1d", time.UTC, readRef(t, "orcl.csv")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, file string }{
		{"signals", filepath.Join("..", "..", "examples", "signals.js")},
		{"signals_short_exit", filepath.Join("..", "..", "testdata", "backtrader", "strategies", "signals_short_exit.js")},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			r := req(b.strategy(t, string(code)))
			r.StartDate, r.EndDate = sp("1995-01-01"), sp("2014-12-31") // the whole file
			r.Symbol = sp("ORCL")
			task := b.create(t, r)
			if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
				t.Fatalf("task %s: %s", got.Status, deref(got.Error))
			}
			stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.All)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, stored, c.name+"__orcl.json")
		})
	}
}
