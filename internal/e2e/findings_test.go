package e2e

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestFindingsInBrowser runs a buy-and-hold of three parameters (too few trades, an open
// position carrying the result) and checks that the results page shows, above the summary,
// the findings the API gives, warnings first, and that the HTML report lists the same ones.
func TestFindingsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	code := `class Hold extends Strategy {
  static params = { size: 10, wait: 5, unused: 1 };
  next() { if (this.position.size === 0 && this.data.length > this.p.wait) this.buy({ size: this.p.size }); }
}`
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Hold", "code": code}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "start_date": "2019-01-01", "end_date": "2019-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	var fs []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/findings", &fs))
	var want, serious []string
	for _, f := range fs {
		if f.Severity != "info" {
			serious = append(serious, f.ID)
		}
	}
	for _, f := range fs {
		if f.Severity == "info" {
			want = append(want, f.ID)
		}
	}
	want = append(serious, want...)
	if !slices.Contains(want, "trades_per_parameter") || !slices.Contains(want, "open_position_at_end") {
		t.Fatalf("findings of a buy-and-hold: %v", fs)
	}

	ctx, errs := newBrowser(t, chromium, 1440, 900, 4*time.Minute)
	var got []string
	var above bool
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+task.TaskID),
		waitJS(`document.querySelectorAll('#findings [data-finding]').length > 0`, 90*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#findings [data-finding]')].map(e => e.dataset.finding)`, &got),
		chromedp.Evaluate(`!!(document.querySelector('#findings').compareDocumentPosition(document.querySelector('#summary-cards')) & Node.DOCUMENT_POSITION_FOLLOWING)`, &above),
	))
	if !slices.Equal(got, want) {
		t.Errorf("the page shows findings %v, the API (warnings first) %v", got, want)
	}
	if !above {
		t.Error("the findings are not above the summary")
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}

	resp, err := http.Get(srv.url + "/api/results/" + task.TaskID + "/export?format=html")
	must(t, err)
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	must(t, err)
	for _, id := range want {
		if !strings.Contains(string(page), `data-finding="`+id+`"`) {
			t.Errorf("the HTML report lacks finding %s", id)
		}
	}
}
