package tasks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestRolloverTaskMatchesBacktrader runs a strategy that rolls five futures contracts
// into one feed (a static rollover with checkdate and checkcondition) through the queue,
// with the contracts as the task's symbols, and compares the stored result with what
// backtrader's cerebro.rolloverdata did (testdata/backtrader/expected/rollover_volume__…).
func TestRolloverTaskMatchesBacktrader(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	md := marketdata.NewService(b.store, nil)
	root := filepath.Join("..", "..", "testdata", "backtrader")
	symbols := []string{"ESH1", "ESM1", "ESU1", "ESZ1", "ESH2"}
	for _, s := range symbols {
		bars := reftest.Bars(t, filepath.Join(root, "data", s+".csv"))
		if _, err := md.Import(b.ctx, "testsrc", s, "", "1d", time.UTC, bars); err != nil {
			t.Fatal(err)
		}
	}
	code, err := os.ReadFile(filepath.Join(root, "strategies", "rollover_volume.js"))
	if err != nil {
		t.Fatal(err)
	}
	r := req(b.strategy(t, string(code)))
	r.StartDate, r.EndDate = sp("2000-01-01"), sp("2002-12-31")
	r.Symbols = symbols
	task := b.create(t, r)
	if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
		t.Fatalf("task %s: %v", got.Status, got.Error)
	}
	stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.All)
	if err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join(root, "expected", "rollover_volume__ESH1_ESM1_ESU1_ESZ1_ESH2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bt struct {
		Executions []struct {
			Date, Side  string
			Price, Size float64
			Comm        float64 `json:"commission"`
		} `json:"executions"`
		Equity     [][2]any `json:"equity"`
		FinalValue float64  `json:"final_value"`
	}
	if err := json.Unmarshal(raw, &bt); err != nil {
		t.Fatal(err)
	}
	if len(stored.Executions) != len(bt.Executions) || len(bt.Executions) == 0 {
		t.Fatalf("%d executions stored, backtrader %d", len(stored.Executions), len(bt.Executions))
	}
	for i, w := range bt.Executions {
		g := stored.Executions[i]
		if g.Time.Format(time.DateOnly) != w.Date || g.Side != w.Side || g.Symbol != "ES" ||
			!near(g.Price, w.Price) || !near(g.Size, w.Size) || !near(g.Commission, w.Comm) {
			t.Fatalf("execution %d: stored %+v, backtrader %+v", i, g, w)
		}
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
