package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPartialFillsInBrowser runs a strategy whose orders fill 7 units a bar (a FixedSize
// volume filler) and checks that the page's fills mark as Partial exactly the executions
// the API says left part of their order for later bars.
func TestPartialFillsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	code := `class PartialFills extends Strategy {
  init() { this.broker.setFiller({ type: 'fixedsize', size: 7 }); this.wait = 0; }
  notifyOrder(o) { if (o.status === 'Completed') this.wait = -3; }
  next() {
    if (this.wait++ !== 0) return;
    if (this.position.size === 0) this.buy({ size: 30 }); else this.close();
  }
}`
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Partial fills", "code": code}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "start_date": "2019-01-01", "end_date": "2019-03-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	var fills struct {
		Total  int `json:"total"`
		Trades []struct {
			Status string `json:"status"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?kind=executions&limit=20", &fills))
	var want []bool
	partial := 0
	for _, f := range fills.Trades {
		want = append(want, f.Status == "Partial")
		if f.Status == "Partial" {
			partial++
		} else if f.Status != "Completed" {
			t.Fatalf("fill status %q, want Partial or Completed", f.Status)
		}
	}
	if partial < 4 {
		t.Fatalf("%d of the first %d fills are partial: the filler did not split the orders", partial, len(fills.Trades))
	}

	ctx, errs := newBrowser(t, chromium, 1440, 900, 4*time.Minute)
	var got []bool
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+task.TaskID),
		waitJS(`document.querySelector('#trades-tab-executions') !== null`, 90*time.Second),
		chromedp.Click(`#trades-tab-executions`),
		waitJS(`document.querySelectorAll('#trades .fills tbody tr').length > 0`, 60*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#trades .fills tbody tr')].map(r => r.querySelector('.fill-partial')?.textContent === 'Partial')`, &got),
	))
	if len(got) != len(want) {
		t.Fatalf("the page shows %d fills, the API's first page %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fill %d: marked partial %v, the API says %v", i+1, got[i], want[i])
		}
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}
}
