package report_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// partialRun stores as task_1 a run whose orders fill 7 units a bar (a FixedSize volume
// filler), so each 30-unit order fills in parts over five bars.
func partialRun(t *testing.T) (*resultstest.Bundle, *engine.Result) {
	t.Helper()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(120, 5)
	b.Bars(t, "RW", bars)
	code := `class Partial extends Strategy {
  init() { this.broker.setFiller({ type: 'fixedsize', size: 7 }); this.wait = 0; }
  notifyOrder(o) { if (o.status === 'Completed') this.wait = -3; }
  next() {
    if (this.wait++ !== 0) return;
    if (this.position.size === 0) this.buy({ size: 30 }); else this.close();
  }
}`
	res, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "RW", Bars: bars}}, Cash: 10000})
	if err != nil {
		t.Fatal(err)
	}
	b.Task(t, "task_1", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "{}")
	if err := results.Save(b.Ctx, b.Store.Pool, "task_1", 1, res, nil); err != nil {
		t.Fatal(err)
	}
	return b, res
}

// TestExportsMarkPartialFills checks that every execution but an order's last is Partial
// in the engine's result, the stored trade list, the JSON, CSV and HTML exports.
func TestExportsMarkPartialFills(t *testing.T) {
	t.Parallel()
	b, res := partialRun(t)
	want := make([]string, len(res.Executions))
	left := map[int]float64{}
	for i, x := range res.Executions {
		left[x.Ref] += x.Size
		want[i] = "Completed"
		if left[x.Ref] != 30 && left[x.Ref] != 0 && left[x.Ref] != -30 {
			want[i] = "Partial"
		}
	}
	partial := strings.Count(strings.Join(want, ","), "Partial")
	if partial < 8 {
		t.Fatalf("only %d partial executions of %d: the filler did not split the orders", partial, len(want))
	}
	for i, x := range res.Executions {
		if x.Status != want[i] {
			t.Fatalf("engine execution %d (order %d, %g): %q, want %q", i, x.Ref, x.Size, x.Status, want[i])
		}
	}

	pg, err := b.Results().Trades(b.Ctx, "task_1", "executions", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := pg.Trades.([]results.TradeRow)
	doc, err := service(b).ExportJSON(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) || len(doc.Trades) != len(want) {
		t.Fatalf("%d stored rows, %d exported, want %d", len(rows), len(doc.Trades), len(want))
	}
	for i := range want {
		if rows[i].Status != want[i] || doc.Trades[i].Status != want[i] || rows[i].OrderRef != int32(res.Executions[i].Ref) {
			t.Fatalf("row %d: stored %+v, exported %+v, want %s", i, rows[i], doc.Trades[i], want[i])
		}
	}
	js, _ := json.Marshal(doc.Trades[0])
	if !strings.Contains(string(js), `"status":"`) {
		t.Errorf("the JSON export's trade has no status: %s", js)
	}

	text, err := service(b).ExportCSV(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if lines[15] != "date,type,price,size,pnl,status" {
		t.Fatalf("trades header %q", lines[15])
	}
	for i := range want {
		if row := lines[16+i]; !strings.HasSuffix(row, ","+want[i]) {
			t.Fatalf("csv row %d %q, want it to end with %s", i, row, want[i])
		}
	}

	page2, err := service(b).ExportHTML(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page2, ">partial</span>"); n != partial {
		t.Errorf("the HTML export marks %d executions partial, want %d", n, partial)
	}
}
