package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// newBrowser starts headless Chromium at width×height with a profile folder of its own and
// collects the page's console errors and uncaught exceptions.
func newBrowser(t *testing.T, chromium string, width, height int, within time.Duration, extra ...chromedp.ExecAllocatorOption) (context.Context, *browserErrors) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profileDir(t)), chromedp.WindowSize(width, height),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-background-networking", true),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, within)
	// Cancelling the allocator waits for Chromium to exit: before profileDir removes its folder.
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	errs := &browserErrors{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs.add("exception: " + ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				errs.add("console.error: " + strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			// Failed requests the page expects (a 400 for broken code, a 400 for a bad CSV)
			// are reported by the browser as network errors; those are not page errors.
			if ev.Entry.Level == cdplog.LevelError && ev.Entry.Source != cdplog.SourceNetwork {
				errs.add("log: " + ev.Entry.Text)
			}
		}
	})
	must(t, chromedp.Run(ctx, cdplog.Enable()))
	return ctx, errs
}

// getJSON reads a bare JSON answer (the study and task routes answer without an envelope).
func getJSON(url string, into any) error {
	res, err := http.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(into)
}

// typeValue sets an input's value as typing would: with an input event.
func typeValue(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel, value), nil)
}

// TestStudyInBrowser: a two-parameter study from the form (the count of combinations follows
// the ranges as they are typed), its live progress to the end, the leaderboard, the heatmap
// with another metric, the overfitting cards, and the best combination opened as a backtest
// that runs with its parameters; then a walk-forward study from the form, its fold table
// and stitched out-of-sample curve; at 1440 and at 375 px, with no console errors.
func TestStudyInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct{ ID string }
	must(t, postJSON(srv.url+"/api/strategies", map[string]string{"name": "E2E study cross", "code": strategyCode}, &strat))
	shots := filepath.Join(repoRoot(t), "screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ui := srv.url + "/ui"

	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", 1440, 900}, {"phone", 375, 812}} {
		t.Run(size.name, func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.width, size.height, 150*time.Second)
			t.Log("the form counts the combinations as the ranges are typed")
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/studies?strategy="+strat.ID),
				chromedp.WaitVisible(`#study-submit`),
				waitJS(`document.querySelector('input[data-param="fast"][data-part="start"]') !== null && document.querySelector('input[name="symbol"]').value !== ''`, 20*time.Second),
				typeValue(`input[data-param="fast"][data-part="start"]`, "5"),
				typeValue(`input[data-param="fast"][data-part="stop"]`, "15"),
				typeValue(`input[data-param="fast"][data-part="step"]`, "5"),
				typeValue(`input[data-param="slow"][data-part="start"]`, "20"),
				typeValue(`input[data-param="slow"][data-part="stop"]`, "40"),
				waitJS(`document.querySelector('#study-count').dataset.count === '63'`, 5*time.Second),
				typeValue(`input[data-param="slow"][data-part="step"]`, "10"),
				waitJS(`document.querySelector('#study-count').dataset.count === '9'`, 5*time.Second),
				typeValue(`input[data-param="slow"][data-part="step"]`, "-1"),
				waitJS(`document.querySelector('#study-submit').disabled && document.querySelector('input[data-param="slow"][data-part="step"]').getAttribute('aria-invalid') === 'true'`, 5*time.Second),
				typeValue(`input[data-param="slow"][data-part="step"]`, "10"),
				chromedp.SetValue(`input[name="start_date"]`, "2020-01-01"),
				chromedp.SetValue(`input[name="end_date"]`, "2022-12-31"),
				chromedp.SetValue(`#study-objective`, "total_return"),
				waitJS(`!document.querySelector('#study-submit').disabled`, 5*time.Second),
				chromedp.Click(`#study-submit`),
				waitJS(`/\/ui\/studies\/study_\d+$/.test(location.pathname)`, 15*time.Second),
			))
			var sid string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`location.pathname.split('/').pop()`, &sid)))

			t.Log("progress to the end, then the leaderboard, heatmap and overfitting cards")
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('#study-status [data-status]')?.dataset.status === 'completed'`, 90*time.Second),
				waitJS(`document.querySelector('#study-counts').textContent.startsWith('9 of 9 done')`, 10*time.Second),
				waitJS(`document.querySelectorAll('#study-board-table tbody tr').length === 9`, 15*time.Second),
				waitJS(`Number(document.querySelector('#study-heatmap [data-points]')?.dataset.points) === 9`, 15*time.Second),
				waitJS(`document.querySelectorAll('#overfit-cards .over-card').length >= 1`, 15*time.Second),
			))
			var st struct {
				Best struct {
					Idx    int            `json:"idx"`
					Params map[string]any `json:"params"`
				} `json:"best"`
				Total int `json:"total"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+sid, &st))
			// The leaderboard lists every combination from the start (pending ones last) and is
			// read again when the study completes: on a busy machine that last read may still be
			// on its way when the status already says completed, so wait for it.
			var firstIdx string
			err := chromedp.Run(ctx, waitJS(fmt.Sprintf(`document.querySelector('#study-board-table tbody tr')?.dataset.idx === '%d'`, st.Best.Idx), 15*time.Second))
			must(t, chromedp.Run(ctx, chromedp.AttributeValue(`#study-board-table tbody tr`, "data-idx", &firstIdx, nil)))
			if err != nil {
				t.Errorf("the leaderboard's first row is combination %s, the study's best is %d", firstIdx, st.Best.Idx)
			}

			t.Log("another metric on the heatmap, the same cells")
			must(t, chromedp.Run(ctx,
				chromedp.SetValue(`#heat-metric`, "sharpe_ratio"),
				chromedp.Evaluate(`document.querySelector('#heat-metric').dispatchEvent(new Event('change'))`, nil),
				waitJS(`document.querySelector('#study-heatmap [data-chart]').dataset.metric === 'sharpe_ratio' && document.querySelector('#study-heatmap [data-chart]').dataset.points === '9'`, 15*time.Second),
			))
			screenshot(t, ctx, shots, "study-"+size.name)

			t.Log("the best combination opened as a backtest runs with its parameters")
			must(t, chromedp.Run(ctx,
				chromedp.Click(`#study-board-table tbody tr:first-child button[data-action="promote"]`),
				waitJS(`/\/ui\/runs\/task_\d+$/.test(location.pathname)`, 15*time.Second),
			))
			var tid string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`location.pathname.split('/').pop()`, &tid)))
			waitTask(t, srv.url, tid)
			var task struct {
				Status         string         `json:"status"`
				StrategyParams map[string]any `json:"strategy_params"`
			}
			must(t, getJSON(srv.url+"/api/backtests/"+tid, &task))
			for k, v := range st.Best.Params {
				if fmt.Sprint(task.StrategyParams[k]) != fmt.Sprint(v) {
					t.Errorf("the promoted task runs %s=%v, the best combination has %v", k, task.StrategyParams[k], v)
				}
			}

			t.Log("a walk-forward study: its folds and the stitched out-of-sample curve")
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/studies?strategy="+strat.ID),
				chromedp.WaitVisible(`#study-submit`),
				waitJS(`document.querySelector('input[data-param="fast"][data-part="start"]') !== null && document.querySelector('input[name="symbol"]').value !== ''`, 20*time.Second),
				typeValue(`input[data-param="fast"][data-part="start"]`, "5"),
				typeValue(`input[data-param="fast"][data-part="stop"]`, "10"),
				typeValue(`input[data-param="fast"][data-part="step"]`, "5"),
				chromedp.SetValue(`input[name="start_date"]`, "2020-01-01"),
				chromedp.SetValue(`input[name="end_date"]`, "2022-12-31"),
				chromedp.Click(`#study-wf`),
				chromedp.WaitVisible(`#study-wf-train`),
				chromedp.SetValue(`#study-wf-train`, "1y"),
				chromedp.SetValue(`#study-wf-test`, "6M"),
				waitJS(`document.querySelector('#study-count').textContent.includes('run on each fold') && !document.querySelector('#study-submit').disabled`, 5*time.Second),
				chromedp.Click(`#study-submit`),
				waitJS(`/\/ui\/studies\/study_\d+$/.test(location.pathname) && location.pathname.split('/').pop() !== '`+sid+`'`, 15*time.Second),
			))
			var wid string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`location.pathname.split('/').pop()`, &wid)))
			var wst struct{ Folds int }
			must(t, getJSON(srv.url+"/api/studies/"+wid, &wst))
			if wst.Folds < 2 {
				t.Fatalf("the walk-forward study has %d folds", wst.Folds)
			}
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('#study-status [data-status]')?.dataset.status === 'completed'`, 90*time.Second),
				waitJS(fmt.Sprintf(`document.querySelectorAll('#wf-folds tbody tr[data-status="completed"]').length === %d`, wst.Folds), 15*time.Second),
				waitJS(`Number(document.querySelector('#study-wf [data-chart]')?.dataset.points) > 0`, 15*time.Second),
				waitJS(`document.querySelector('#wf-cards [data-key="efficiency"] .value').textContent !== ''`, 5*time.Second),
			))
			screenshot(t, ctx, shots, "study-walk-forward-"+size.name)
			if e := errs.list(); len(e) > 0 {
				b, _ := json.MarshalIndent(e, "", "  ")
				t.Errorf("browser errors:\n%s", b)
			}
		})
	}
}
