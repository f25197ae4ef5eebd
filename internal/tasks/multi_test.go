package tasks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestSeveralStrategiesTask runs a file with a strategies array (three strategies on one
// broker, the multi_strategies fixture's twin) through the task queue: the stored fills and
// round trips name the strategy whose orders made them as the local run does, the result
// keeps each strategy's part, and the CSV export shows the strategy of each fill.
func TestSeveralStrategiesTask(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	md := marketdata.NewService(b.store, nil)
	bars := readRef(t, "orcl.csv")
	if _, err := md.Import(b.ctx, "testsrc", "ORCL", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", "multi_strategies.js"))
	if err != nil {
		t.Fatal(err)
	}
	code := string(raw)
	r := req(b.strategy(t, code))
	r.StartDate, r.EndDate = sp("2000-01-01"), sp("2009-12-31")
	r.Symbols = []string{"ORCL"}
	task := b.create(t, r)
	if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
		t.Fatalf("task %s: %v", got.Status, got.Error)
	}
	rs := results.NewService(b.store.Pool)
	stored, err := rs.Load(b.ctx, task.TaskID, results.All)
	if err != nil {
		t.Fatal(err)
	}
	feeds := []engine.Feed{{Symbol: "ORCL", Bars: inRange(bars, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC))}}
	local, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: feeds, Cash: 10000, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Executions) != len(local.Executions) || len(stored.Trades) != len(local.Trades) {
		t.Fatalf("stored %d fills and %d round trips, the local run %d and %d", len(stored.Executions), len(stored.Trades), len(local.Executions), len(local.Trades))
	}
	per := map[int]int{}
	for i, want := range local.Executions {
		if got := stored.Executions[i]; got.Strategy != want.Strategy || got.Ref != want.Ref || !near(got.Price, want.Price) {
			t.Fatalf("fill %d: stored strategy %d ref %d, local %d ref %d", i, got.Strategy, got.Ref, want.Strategy, want.Ref)
		}
		per[want.Strategy]++
	}
	if len(per) != 3 {
		t.Fatalf("fills per strategy %v: want fills of all three", per)
	}
	for i, want := range local.Trades {
		if got := stored.Trades[i]; got.Strategy != want.Strategy || !near(got.PnLNet, want.PnLNet) {
			t.Fatalf("round trip %d: stored strategy %d pnl %v, local %d %v", i, got.Strategy, got.PnLNet, want.Strategy, want.PnLNet)
		}
	}
	// The BI views name the strategy of each fill and round trip as the result does.
	for _, view := range []string{"bi_executions", "bi_trades"} {
		rows, err := b.store.Pool.Query(b.ctx, "SELECT strategy, count(*) FROM "+view+" WHERE task_id = $1 GROUP BY strategy", task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		bi := map[int]int{}
		for rows.Next() {
			var s, n int
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			bi[s] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := map[int]int{}
		if view == "bi_executions" {
			want = per
		} else {
			for _, tr := range local.Trades {
				want[tr.Strategy]++
			}
		}
		if fmt.Sprint(bi) != fmt.Sprint(want) {
			t.Errorf("%s: rows per strategy %v, want %v", view, bi, want)
		}
	}
	list, err := rs.Strategies(b.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for i, s := range list {
		names = append(names, s.Name)
		if s.Executions != per[i] || s.TradeAnalyzer.Total == 0 {
			t.Errorf("strategy %d (%s): %d fills, trade analyzer total %d; the run has %d fills of it", i, s.Name, s.Executions, s.TradeAnalyzer.Total, per[i])
		}
	}
	if strings.Join(names, ",") != "MultiCross,MultiCross,MultiHold" {
		t.Fatalf("strategies %v", names)
	}
	csv, err := report.New(rs, md.Bars).ExportCSV(b.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv, "date,type,price,size,pnl,strategy\n") || !strings.Contains(csv, ",MultiHold\n") {
		t.Fatalf("CSV export without the strategy column:\n%.600s", csv)
	}
}
