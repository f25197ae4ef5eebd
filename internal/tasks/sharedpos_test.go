package tasks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestSharedPositionTasksMatchBacktrader runs the fixtures of several strategies on one
// feed whose trades open on fills that close the other strategy's holding or flip sign
// (multi_copy, backtrader's samples/multi-copy on one feed, and multi_flip) through the
// task queue, and compares every stored round trip of each strategy (dates, largest size,
// entry and exit price, pnl) and every fill with what backtrader did
// (testdata/backtrader/expected/<fixture>.json, its `strategies`).
func TestSharedPositionTasksMatchBacktrader(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 2})
	md := marketdata.NewService(b.store, nil)
	for _, f := range []struct{ symbol, file string }{{"ORCL", "orcl.csv"}, {"YHOO", "yhoo.csv"}} {
		if _, err := md.Import(b.ctx, "testsrc", f.symbol, "", "1d", time.UTC, readRef(t, f.file)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, symbol, fixture string }{
		{"multi_copy", "YHOO", "multi_copy__yhoo.json"},
		{"multi_copy", "ORCL", "multi_copy__orcl.json"},
		{"multi_flip", "ORCL", "multi_flip__orcl.json"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", c.name+".js"))
			if err != nil {
				t.Fatal(err)
			}
			r := req(b.strategy(t, string(code)))
			r.StartDate, r.EndDate = sp("1995-01-01"), sp("2014-12-31")
			r.Symbol = sp(c.symbol)
			task := b.create(t, r)
			if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
				t.Fatalf("task %s: %s", got.Status, deref(got.Error))
			}
			stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.All)
			if err != nil {
				t.Fatal(err)
			}
			checkStrategiesFixture(t, stored, c.fixture)
		})
	}
}

// TestCompensateTaskMatchesBacktrader runs the compensate fixture's twin (orders on
// ORCL_FUT moving ORCL's position, data.compensate) through the task queue on the two
// imported feeds and compares every stored fill, round trip's length, equity point and
// the final value with what backtrader did.
func TestCompensateTaskMatchesBacktrader(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	md := marketdata.NewService(b.store, nil)
	for _, f := range []struct{ symbol, file string }{{"ORCL", "orcl.csv"}, {"ORCL_FUT", "orcl_fut.csv"}} {
		bars := ownData(t, f.file)
		if bars == nil {
			bars = readRef(t, f.file)
		}
		if _, err := md.Import(b.ctx, "testsrc", f.symbol, "", "1d", time.UTC, bars); err != nil {
			t.Fatal(err)
		}
	}
	code, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", "compensate.js"))
	if err != nil {
		t.Fatal(err)
	}
	r := req(b.strategy(t, string(code)))
	r.StartDate, r.EndDate = sp("2000-01-01"), sp("2014-12-31")
	r.Symbols = []string{"ORCL", "ORCL_FUT"}
	task := b.create(t, r)
	if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
		t.Fatalf("task %s: %s", got.Status, deref(got.Error))
	}
	stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.All)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range stored.Trades {
		if tr.Symbol != "ORCL" {
			t.Fatalf("round trip on %s: a compensating feed's fills book the compensated feed's trades", tr.Symbol)
		}
	}
	checkFixture(t, stored, "compensate__orcl_orcl_fut.json")
}

// checkStrategiesFixture compares a stored run of several strategies with a fixture's
// `strategies`: each strategy's fills and closed round trips, in order.
func checkStrategiesFixture(t *testing.T, stored *results.Stored, file string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "expected", file))
	if err != nil {
		t.Fatal(err)
	}
	var bt struct {
		Strategies []struct {
			Class      string `json:"strategy_class"`
			Executions []struct {
				Date, Side  string
				Price, Size float64
			} `json:"executions"`
			Trades []struct {
				OpenDate   string  `json:"open_date"`
				CloseDate  string  `json:"close_date"`
				Size       float64 `json:"size"`
				EntryPrice float64 `json:"entry_price"`
				ExitPrice  float64 `json:"exit_price"`
				PnLNet     float64 `json:"pnl_net"`
			} `json:"trades"`
		} `json:"strategies"`
		FinalValue float64 `json:"final_value"`
	}
	if err := json.Unmarshal(raw, &bt); err != nil {
		t.Fatal(err)
	}
	if len(bt.Strategies) < 2 || len(stored.Strategies) != len(bt.Strategies) {
		t.Fatalf("%d strategies stored, the fixture has %d", len(stored.Strategies), len(bt.Strategies))
	}
	for i, w := range bt.Strategies {
		if stored.Strategies[i].Name != w.Class {
			t.Errorf("strategy %d stored as %s, backtrader %s", i, stored.Strategies[i].Name, w.Class)
		}
		var n int
		for _, g := range stored.Executions {
			if g.Strategy != i {
				continue
			}
			if n >= len(w.Executions) {
				t.Fatalf("%s: more than backtrader's %d fills stored", w.Class, len(w.Executions))
			}
			x := w.Executions[n]
			if g.Time.Format(time.DateOnly) != x.Date || g.Side != x.Side || !near(g.Price, x.Price) || !near(g.Size, x.Size) {
				t.Fatalf("%s fill %d: stored %+v, backtrader %+v", w.Class, n, g, x)
			}
			n++
		}
		if n != len(w.Executions) || n == 0 {
			t.Fatalf("%s: %d fills stored, backtrader %d", w.Class, n, len(w.Executions))
		}
		n = 0
		for _, g := range stored.Trades {
			if g.Strategy != i || g.IsOpen {
				continue
			}
			if n >= len(w.Trades) {
				t.Fatalf("%s: more than backtrader's %d round trips stored", w.Class, len(w.Trades))
			}
			x := w.Trades[n]
			if g.OpenTime.Format(time.DateOnly) != x.OpenDate || g.CloseTime == nil || g.CloseTime.Format(time.DateOnly) != x.CloseDate ||
				g.Size != x.Size || g.EntryPrice != x.EntryPrice || !near(g.ExitPrice, x.ExitPrice) || !near(g.PnLNet, x.PnLNet) {
				t.Fatalf("%s round trip %d: stored %+v, backtrader %+v", w.Class, n, g, x)
			}
			n++
		}
		if n != len(w.Trades) || n == 0 {
			t.Fatalf("%s: %d round trips stored, backtrader %d", w.Class, n, len(w.Trades))
		}
	}
	if !near(stored.Summary.FinalValue, bt.FinalValue) {
		t.Fatalf("final value %v, backtrader %v", stored.Summary.FinalValue, bt.FinalValue)
	}
}
