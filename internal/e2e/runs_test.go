package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunsListInBrowser walks the runs list as someone with many runs uses it: each finished
// run's key figures (return, drawdown, Sharpe, trades, period), sorting by a figure in both
// directions, paging with the keyboard, filtering by symbol, and deleting a run after
// confirming; at 1440 and 375 px with no console errors. The results page's drawdown
// periods, rolling Sharpe ratio and returns histogram are checked by TestResultsInBrowser.
func TestRunsListInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Runs list", "code": strategyCode}, &strat))
	const runs = 23 // more than a page of 20
	for i := 0; i < runs; i++ {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": 3 + i, "slow": 30 + 2*i},
			"start_date": "2017-01-01", "end_date": "2019-12-31"}, &task))
	}
	deadline := time.Now().Add(3 * time.Minute)
	for total, _ := listRuns(t, srv.url, "status=completed"); total < runs; total, _ = listRuns(t, srv.url, "status=completed") {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs completed after 3 minutes", total, runs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))

	for _, size := range []struct{ w, h int }{{1440, 900}, {375, 812}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 3*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			total, _ := listRuns(t, srv.url, "")
			pages := (total + 19) / 20
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/runs"),
				waitJS(`document.querySelectorAll('#task-list .task').length === 20`, 30*time.Second),
				waitJS(fmt.Sprintf(`document.querySelector('#runs-page').textContent === 'Page 1 of %d · %d runs'`, pages, total), 10*time.Second),
			))
			// Every finished run shows its key figures as a person reads them: the API's
			// figures written in the page's convention (format_test.go), not by the page's code.
			_, page := listRuns(t, srv.url, "limit=20")
			var shown map[string]string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#task-list .task')].map(e => [e.dataset.task, e.querySelector('.figures') ? e.querySelector('.figures').innerText.replace(/\s+/g, ' ') : '']))`, &shown)))
			for _, r := range page {
				f := r.Figures
				if f == nil {
					t.Fatalf("completed %s listed without figures", r.TaskID)
				}
				for _, want := range []string{"Return " + fmtPctOf(f.TotalReturn), "Max DD " + fmtPctIn(f.MaxDrawdown),
					"Sharpe " + fmtFixed(f.Sharpe, 2), "Trades " + fmtFixed(float64(f.Trades), 0), "Period 2017-01-01 → 2019-12-31"} {
					if !strings.Contains(shown[r.TaskID], want) {
						t.Errorf("figures of %s read %q, lack %q", r.TaskID, shown[r.TaskID], want)
					}
				}
			}

			// Sorted by return, highest first, then lowest first: the order is the API's.
			_, best := listRuns(t, srv.url, "sort=total_return&limit=1")
			_, worst := listRuns(t, srv.url, "sort=total_return&order=asc&limit=1")
			if best[0].TaskID == worst[0].TaskID {
				t.Fatalf("every run returned the same: nothing to sort")
			}
			must(t, chromedp.Run(ctx,
				chromedp.SetValue(`#runs-sort`, "total_return"),
				chromedp.Evaluate(`document.querySelector('#runs-sort').dispatchEvent(new Event('change'))`, nil),
				waitJS(`document.querySelector('#task-list .task').dataset.task === '`+best[0].TaskID+`'`, 10*time.Second),
				chromedp.Click(`#runs-order`),
				waitJS(`document.querySelector('#task-list .task').dataset.task === '`+worst[0].TaskID+`'`, 10*time.Second),
			))
			screenshot(t, ctx, shots, fmt.Sprintf("runs-list-%d", size.w))

			// Paging with the keyboard keeps the focus in the pager.
			var focusInPager bool
			must(t, chromedp.Run(ctx,
				chromedp.Focus(`#runs-next`),
				chromedp.KeyEvent("\r"),
				waitJS(fmt.Sprintf(`document.querySelector('#runs-page').textContent.startsWith('Page 2 of %d')`, pages), 10*time.Second),
				waitJS(fmt.Sprintf(`document.querySelectorAll('#task-list .task').length === %d`, min(20, total-20)), 10*time.Second),
				chromedp.Evaluate(`!!document.activeElement.closest('#runs-pager')`, &focusInPager),
			))
			if !focusInPager {
				t.Error("after paging with the keyboard the focus left the pager")
			}

			// A symbol filter that matches nothing says so; cleared, the runs are back.
			must(t, chromedp.Run(ctx,
				typeValue(`#runs-symbol`, "NOSUCH"),
				waitJS(`document.querySelector('#task-list .task') === null && /No backtest matches/.test(document.querySelector('#task-list').textContent)`, 10*time.Second),
				typeValue(`#runs-symbol`, ""),
				waitJS(`document.querySelectorAll('#task-list .task').length === 20`, 10*time.Second),
			))

			// Delete the worst run after confirming: it leaves the list and the API.
			victim := worst[0].TaskID
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('#task-list .task').dataset.task === '`+victim+`'`, 10*time.Second),
				chromedp.Click(`button[aria-label="Delete `+victim+`"]`),
				chromedp.WaitVisible(`dialog[open] button.btn.danger`),
				chromedp.Click(`dialog[open] button.btn.danger`),
				waitJS(`document.querySelector('[data-task="`+victim+`"]') === null`, 10*time.Second),
				waitJS(fmt.Sprintf(`/· %d runs$/.test(document.querySelector('#runs-page').textContent)`, total-1), 10*time.Second),
			))
			if res, err := http.Get(srv.url + "/api/backtests/" + victim); err != nil || res.StatusCode != 404 {
				t.Errorf("deleted run %s: %v %v", victim, res.Status, err)
			} else {
				res.Body.Close()
			}

			var overflow bool
			must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.documentElement.scrollWidth > %d`, size.w+1), &overflow)))
			if overflow {
				t.Errorf("runs page wider than %d px", size.w)
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

// listedRun is a task as the runs list reads it.
type listedRun struct {
	TaskID  string `json:"task_id"`
	Figures *struct {
		TotalReturn float64 `json:"total_return"`
		MaxDrawdown float64 `json:"max_drawdown_pct"`
		Sharpe      float64 `json:"sharpe_ratio"`
		Trades      int     `json:"total_trades"`
	} `json:"figures"`
}

// listRuns reads GET /api/backtests?count=true&query: the number matching and the page.
func listRuns(t *testing.T, base, query string) (int, []listedRun) {
	t.Helper()
	res, err := http.Get(base + "/api/backtests?count=true&" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []listedRun
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("list ?%s: %s %v", query, res.Status, err)
	}
	total, err := strconv.Atoi(res.Header.Get("X-Total-Count"))
	if err != nil {
		t.Fatalf("list ?%s: X-Total-Count %q", query, res.Header.Get("X-Total-Count"))
	}
	return total, out
}
