package tasks_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestFilterAndReplayTasksMatchBacktrader runs the examples that declare a data filter
// (static filters) or a replay (static replay), and the CalendarDays and BarReplayer_Open
// fixtures' twins,
// through the task queue on the imported
// ORCL reference data, and compares every stored execution, equity point, round trip's
// length and the final value with what backtrader did
// (testdata/backtrader/expected/<example>__orcl.json): a task runs what `backtestd run`
// runs, the filtered or replayed feed included.
func TestFilterAndReplayTasksMatchBacktrader(t *testing.T) {
	t.Parallel()
	// A replayed feed's indicators are computed again at every bar (docs/strategy-api.md),
	// a fraction of a second each here but many times that under the race detector on a
	// loaded machine: room beyond the 30 s other tests give a run.
	b := setup(t, opts{workers: 2, runTimeout: 3 * time.Minute})
	md := marketdata.NewService(b.store, nil)
	if _, err := md.Import(b.ctx, "testsrc", "ORCL", "", "1d", time.UTC, readRef(t, "orcl.csv")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"heikin_ashi", "renko", "replay_weekly", "calendar_days", "day_steps_open"} {
		t.Run(name, func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join("..", "..", "examples", name+".js"))
			if errors.Is(err, fs.ErrNotExist) { // a fixture's twin
				code, err = os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", name+".js"))
			}
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
			checkFixture(t, stored, name+"__orcl.json")
		})
	}
}

func checkFixture(t *testing.T, stored *results.Stored, file string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "expected", file))
	if err != nil {
		t.Fatal(err)
	}
	var bt struct {
		Executions []struct {
			Date, Side  string
			Price, Size float64
			Comm        float64 `json:"commission"`
		} `json:"executions"`
		Trades []struct {
			BarLen int `json:"barlen"`
		} `json:"trades"`
		Equity     [][2]any `json:"equity"`
		FinalValue float64  `json:"final_value"`
	}
	if err := json.Unmarshal(raw, &bt); err != nil {
		t.Fatal(err)
	}
	if len(stored.Executions) != len(bt.Executions) || len(bt.Executions) < 10 {
		t.Fatalf("%d executions stored, backtrader %d", len(stored.Executions), len(bt.Executions))
	}
	for i, w := range bt.Executions {
		g := stored.Executions[i]
		if g.Time.Format(time.DateOnly) != w.Date || g.Side != w.Side || !near(g.Price, w.Price) || !near(g.Size, w.Size) || !near(g.Commission, w.Comm) {
			t.Fatalf("execution %d: stored %+v, backtrader %+v", i, g, w)
		}
	}
	var closed int
	for _, tr := range stored.Trades {
		if tr.IsOpen {
			continue
		}
		if closed < len(bt.Trades) && tr.BarLen != bt.Trades[closed].BarLen {
			t.Fatalf("round trip %d: %d bars stored, backtrader %d", closed, tr.BarLen, bt.Trades[closed].BarLen)
		}
		closed++
	}
	if closed != len(bt.Trades) {
		t.Fatalf("%d round trips stored, backtrader %d", closed, len(bt.Trades))
	}
	if len(stored.Equity) != len(bt.Equity) {
		t.Fatalf("%d equity points stored, backtrader %d", len(stored.Equity), len(bt.Equity))
	}
	for i, w := range bt.Equity {
		if g := stored.Equity[i]; g.Time.Format(time.DateOnly) != w[0] || !near(g.Value, w[1].(float64)) {
			t.Fatalf("equity %d: stored %v %v, backtrader %v %v", i, g.Time, g.Value, w[0], w[1])
		}
	}
	if !near(stored.Summary.FinalValue, bt.FinalValue) {
		t.Fatalf("final value %v, backtrader %v", stored.Summary.FinalValue, bt.FinalValue)
	}
}
