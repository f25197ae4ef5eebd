package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestLiveLogOrderInBrowser opens a running task's page with the first read of its stored log
// held back two seconds (as a slow network would), so the socket's newer lines arrive before
// the older stored ones: the log must still read in the order the lines were logged, the
// API's order, at 1440 and 390 px.
func TestLiveLogOrderInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Live log order", "code": strategyCode}, &strat))

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			var task struct {
				TaskID string `json:"task_id"`
			}
			// 4 ms a bar over three years: a few seconds of lines every 25 bars.
			must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": 5, "slow": 20, "delay": 4},
				"start_date": "2017-01-01", "end_date": "2019-12-31"}, &task))
			// Open the page once some lines are stored, so the held-back read has lines to give.
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				var logs []map[string]any
				must(t, getEnvelope(srv.url+"/api/backtests/"+task.TaskID+"/logs?limit=10", &logs))
				if len(logs) >= 3 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s stored %d log lines in a minute", task.TaskID, len(logs))
				}
			}
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 2*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			must(t, chromedp.Run(ctx,
				chromedp.ActionFunc(func(ctx context.Context) error {
					_, err := page.AddScriptToEvaluateOnNewDocument(`(() => {
						const orig = window.fetch; let held = false;
						window.fetch = async (...a) => {
							const url = String(a[0] && a[0].url || a[0]);
							if (!held && /\/logs\b/.test(url)) { held = true; await new Promise(r => setTimeout(r, 2000)); }
							return orig(...a);
						};
					})()`).Do(ctx)
					return err
				}),
				chromedp.Navigate(srv.url+"/ui/runs/"+task.TaskID),
				waitJS(`document.querySelector('.status')?.dataset.status === 'completed'`, 90*time.Second),
			))
			var stored []struct {
				Message string `json:"message"`
			}
			must(t, getEnvelope(srv.url+"/api/backtests/"+task.TaskID+"/logs?limit=10000", &stored))
			want := make([]string, len(stored))
			for i, l := range stored {
				want[i] = l.Message
			}
			var shown []string
			must(t, chromedp.Run(ctx,
				waitJS(fmt.Sprintf(`document.querySelectorAll('#log .ll').length >= %d`, len(want)), 20*time.Second),
				chromedp.Evaluate(`[...document.querySelectorAll('#log .ll .msg')].map(e => e.textContent)`, &shown),
			))
			if strings.Join(shown, "\n") != strings.Join(want, "\n") {
				n := min(len(shown), len(want), 6)
				t.Errorf("the log reads %d lines starting %q; the API's %d lines start %q", len(shown), shown[:n], len(want), want[:n])
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}
