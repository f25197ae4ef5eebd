package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// cspWatch records the page's Content-Security-Policy violations in window.__csp, from
// before its first script runs.
const cspWatch = `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`

// TestBrowserDefences, with Chromium as the victim: the page (editor, result charts with a
// tooltip, a run's live log) and the API docs work under their Content-Security-Policy
// with no violation and no console error; a page on another site can neither frame the
// page, nor read the API, nor delete a strategy, pin or delete a run or start one through
// it, not even with requests that need no preflight (a form POST, a text/plain fetch); and a name rebound to the
// service's address (DNS rebinding) gets 421 instead of the page.
func TestBrowserDefences(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "CSP walk", "code": strategyCode}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	u, err := url.Parse(srv.url)
	must(t, err)
	// The attacker's site, on another port of this machine, reached as evil.example; the
	// browser resolves evil.example to 127.0.0.1, as a rebinding DNS server would.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><iframe id="f" src="%[1]s/ui/"></iframe>
<iframe name="sink"></iframe><form id="del" method="POST" target="sink" action="%[1]s/api/backtests/%[3]s/delete"></form><script>
window.__result = (async () => {
  const out = {};
  // Requests a page may send without a preflight, not reading the answer (the red team's):
  // a pin, a backtest as text/plain naming JSON, and a form POST deleting the run.
  await fetch(%[1]q + '/api/backtests/%[3]s/pin', {method: 'POST', mode: 'no-cors'}).catch(() => {});
  await fetch(%[1]q + '/api/backtests', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain; charset=application/json'},
    body: JSON.stringify({strategy_id: '%[2]s', start_date: '2015-01-01', end_date: '2019-12-31'})}).catch(() => {});
  await new Promise(done => { document.querySelector('iframe[name=sink]').onload = done; document.getElementById('del').submit(); setTimeout(done, 10000); });
  try { const r = await fetch(%[1]q + '/api/strategies'); out.read = 'read ' + r.status + ' ' + (await r.text()).length; } catch (e) { out.read = 'blocked'; }
  try { const r = await fetch(%[1]q + '/api/strategies/%[2]s', {method: 'DELETE'}); out.del = 'sent ' + r.status; } catch (e) { out.del = 'blocked'; }
  try { const r = await fetch(%[1]q + '/api/strategies/%[2]s', {method: 'DELETE', headers: {'Content-Type': 'application/json'}}); out.delJSON = 'sent ' + r.status; } catch (e) { out.delJSON = 'blocked'; }
  return out;
})();
</script>`, srv.url, strat.ID, task.TaskID)
	}))
	defer evil.Close()
	eu, err := url.Parse(evil.URL)
	must(t, err)

	ctx, errs := newBrowser(t, chromium, 1440, 900, 4*time.Minute, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1"))
	must(t, chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(cspWatch).Do(ctx)
		return err
	})))
	ui := srv.url + "/ui"
	for _, step := range []struct {
		name    string
		actions chromedp.Tasks
	}{
		{"strategy editor", chromedp.Tasks{chromedp.Navigate(ui + "/strategies/new"), chromedp.WaitVisible(`#code-editor .cm-content`)}},
		{"result charts and a tooltip", chromedp.Tasks{
			chromedp.Navigate(ui + "/results/" + task.TaskID),
			waitJS(`[...document.querySelectorAll('#charts .chart-panel')].length > 0 && [...document.querySelectorAll('#charts .chart-panel')].every(p => p.dataset.ready === 'true')`, 60*time.Second),
			hoverFirstChart(),
		}},
		{"a run's log, live over the WebSocket", chromedp.Tasks{chromedp.Navigate(ui + "/runs/" + task.TaskID), waitJS(`document.body.innerText.includes('bar 25 close')`, 30*time.Second)}},
		{"API docs", chromedp.Tasks{chromedp.Navigate(srv.url + "/docs"), waitJS(`document.querySelector('.swagger-ui .info .title') !== null`, 30*time.Second)}},
	} {
		must(t, chromedp.Run(ctx, step.actions))
		var violations []string
		must(t, chromedp.Run(ctx, chromedp.Evaluate(`window.__csp || ['no watcher']`, &violations)))
		if len(violations) > 0 {
			t.Errorf("%s: Content-Security-Policy violations: %v", step.name, violations)
		}
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("console errors on the page and the docs: %v", e)
	}

	// The attacker's page: framing refused, the API neither read nor written.
	var result map[string]string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate("http://evil.example:"+eu.Port()+"/"),
		chromedp.Evaluate(`window.__result`, &result, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	))
	if result["read"] != "blocked" || result["del"] != "blocked" || result["delJSON"] != "blocked" {
		t.Errorf("a page elsewhere called the API: %v, want every call blocked", result)
	}
	framed := false
	deadline := time.Now().Add(10 * time.Second)
	for !framed && time.Now().Before(deadline) {
		for _, e := range errs.list() {
			framed = framed || strings.Contains(e, "frame-ancestors")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !framed {
		t.Errorf("no frame-ancestors refusal when another site framed the page; console: %v", errs.list())
	}
	var left struct {
		ID string `json:"id"`
	}
	if err := getJSON(srv.url+"/api/strategies/"+strat.ID, &left); err != nil || left.ID != strat.ID {
		t.Errorf("the strategy after the attacker's page: %+v %v", left, err)
	}
	var run struct {
		Status   string  `json:"status"`
		PinnedAt *string `json:"pinned_at"`
	}
	if err := getJSON(srv.url+"/api/backtests/"+task.TaskID, &run); err != nil || run.Status != "completed" || run.PinnedAt != nil {
		t.Errorf("the run after the attacker's page: %+v %v, want it completed, not deleted, not pinned", run, err)
	}
	var runs []map[string]any
	if err := getJSON(srv.url+"/api/backtests", &runs); err != nil || len(runs) != 1 {
		t.Errorf("runs after the attacker's page: %d %v, want the one run", len(runs), err)
	}

	// DNS rebinding: the service's own port under the attacker's name.
	var body string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate("http://evil.example:"+u.Port()+"/ui/"),
		chromedp.Text(`body`, &body),
	))
	if !strings.Contains(body, "Misdirected Request") {
		t.Errorf("the page under a rebound name: %q, want the 421 refusal", body)
	}
}

// hoverFirstChart moves the mouse over the first chart, so ECharts draws its tooltip (HTML
// with style attributes, which the policy must allow).
func hoverFirstChart() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var box []float64
		if err := chromedp.Evaluate(`(() => { const c = document.querySelector('#charts .chart-panel canvas'); c.scrollIntoView({block: 'center'}); const r = c.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, &box).Do(ctx); err != nil {
			return err
		}
		for dx := -20.0; dx <= 20; dx += 10 {
			if err := input.DispatchMouseEvent(input.MouseMoved, box[0]+dx, box[1]).Do(ctx); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return waitJS(`[...document.querySelectorAll('#charts .chart-panel div')].some(d => d.style.pointerEvents === 'none' && d.style.display !== 'none' && d.innerHTML.includes('style='))`, 5*time.Second).Do(ctx)
	})
}
