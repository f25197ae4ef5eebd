package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestDataAndFormsInBrowser: the data view shows each symbol's stored range, a backtest on a
// symbol starts on its own dates, a CSV import names every bad line, a parameter field marks
// and explains bad input without throwing, and a failed run ends its log with the error.
func TestDataAndFormsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	ui := srv.url + "/ui"
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Forms", "code": strategyCode}, &strat))
	var syms []struct {
		Symbol string `json:"symbol"`
		Ranges []struct {
			Timeframe string `json:"timeframe"`
			First     string `json:"first"`
			Last      string `json:"last"`
			Bars      int    `json:"bars"`
		} `json:"ranges"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/symbols", &syms))
	if len(syms) == 0 || len(syms[0].Ranges) == 0 {
		t.Fatalf("sample symbols without ranges: %+v", syms)
	}
	sym, rng := syms[0].Symbol, syms[0].Ranges[0]
	first, last := rng.First[:10], rng.Last[:10]

	ctx, errs := newBrowser(t, chromium, 1440, 900, 3*time.Minute)
	var listed string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/data"),
		waitJS(`document.querySelector('#symbols .ranges') !== null`, 15*time.Second),
		chromedp.Text(`#symbols .symbol-list li:first-child .ranges`, &listed),
	))
	if !strings.Contains(listed, first+" → "+last) || !strings.Contains(listed, rng.Timeframe) {
		t.Errorf("data view shows %q for %s; stored %s %s → %s", listed, sym, rng.Timeframe, first, last)
	}

	// "Backtest on this symbol" opens the form on the symbol's own dates.
	var start, end, symbol string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/data/builtin/"+sym),
		chromedp.WaitVisible(`#backtest-symbol`),
		chromedp.Click(`#backtest-symbol`),
		waitJS(`document.querySelector('form.run-form input[name="start_date"]') !== null && document.querySelector('form.run-form input[name="symbol"]').value !== ''`, 15*time.Second),
		chromedp.Value(`form.run-form input[name="start_date"]`, &start),
		chromedp.Value(`form.run-form input[name="end_date"]`, &end),
		chromedp.Value(`form.run-form input[name="symbol"]`, &symbol),
	))
	if start != first || end != last || symbol != sym {
		t.Errorf("run form for %s: %s %s → %s; want its stored %s → %s", sym, symbol, start, end, first, last)
	}

	// A parameter field: 1.5 in an int field is explained, marked invalid, and nothing throws.
	var msg string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/runs?strategy="+strat.ID),
		chromedp.WaitVisible(`form.run-form input[name="fast"]`),
		chromedp.Evaluate(`(() => { const i = document.querySelector('form.run-form input[name="fast"]'); i.value = ''; return true })()`, nil),
		chromedp.SendKeys(`form.run-form input[name="fast"]`, "1.5"),
		waitJS(`document.querySelector('form.run-form input[name="fast"]').getAttribute('aria-invalid') === 'true'`, 5*time.Second),
		chromedp.Evaluate(`document.getElementById(document.querySelector('form.run-form input[name="fast"]').id + '-err').textContent`, &msg),
		chromedp.SendKeys(`form.run-form input[name="fast"]`, "\b\b"),
		waitJS(`document.querySelector('form.run-form input[name="fast"]').getAttribute('aria-invalid') === null`, 5*time.Second),
	))
	if !strings.Contains(msg, "expected int, got float (1.5)") {
		t.Errorf("int field with 1.5 says %q", msg)
	}

	// A CSV with three bad lines: all three reported, each with its line and reason.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	must(t, os.WriteFile(bad, []byte("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,1000\n2024-01-03,x,11,9,10,1\n2024-01-04,10,11,9,10.5,1000\n2024-01-05,10,8,9,10,1\n2024-01-08,10,11,9\n2024-01-09,10,11,9,10.5,1000\n"), 0o644))
	var lines []string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/data"),
		chromedp.WaitVisible(`#import-file`),
		waitJS(`document.querySelector('#symbols .symbol-list, #symbols .empty') !== null`, 30*time.Second), // the form moves down when the list comes
		chromedp.SetValue(`#import-symbol`, "BADLINES"),
		chromedp.SetUploadFiles(`#import-file`, []string{bad}),
		chromedp.Click(`form.import-form button[type="submit"]`),
		waitJS(`document.querySelector('#import-report .error-box') !== null`, 60*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#import-report tr[data-line]')].map(r => r.dataset.line)`, &lines),
	))
	if strings.Join(lines, ",") != "3,5,6" {
		t.Errorf("import report lists lines %v, want 3,5,6", lines)
	}

	// A run that fails: its log ends with the ERROR line; no "bar 0 of N".
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Thrower", "code": "class T extends Strategy {\n  static params = { gone: 3 };\n  next() { throw new Error('boom here'); }\n}\n"}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "start_date": first, "end_date": last}, &task))
	var bars string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/runs/"+task.TaskID),
		waitJS(`document.querySelector('.page-head .status')?.dataset.status === 'failed'`, 60*time.Second),
		waitJS(`[...document.querySelectorAll('#log .ll')].some(l => /ERROR/.test(l.textContent) && /boom here/.test(l.textContent))`, 15*time.Second),
		chromedp.Evaluate(`document.querySelector('#bars-text')?.textContent ?? ''`, &bars),
	))
	if strings.Contains(bars, "bar 0 of") {
		t.Errorf("failed run shows %q", bars)
	}

	// The log: searched, and downloaded whole.
	downloads := t.TempDir()
	var shown []string
	must(t, chromedp.Run(ctx,
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(downloads).WithEventsEnabled(true),
		chromedp.SendKeys(`#log-search`, "BOOM"),
		waitJS(`document.querySelectorAll('#log .ll').length === 1`, 5*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#log .ll .msg')].map(e => e.textContent)`, &shown),
		chromedp.Click(`#log-download`),
	))
	if len(shown) != 1 || !strings.Contains(shown[0], "boom here") {
		t.Errorf("log search for BOOM shows %q", shown)
	}
	if b := waitFile(t, filepath.Join(downloads, task.TaskID+".log")); !strings.Contains(string(b), "ERROR\t") || !strings.Contains(string(b), "boom here") {
		t.Errorf("downloaded log: %.300s", b)
	}

	// Run with the latest code: a new task of the strategy's current version, same settings.
	// The first run took gone at its default (3); the new code no longer declares it, so it
	// is left out rather than refused as an unknown parameter.
	fixed := "class T extends Strategy {\n  next() {}\n}\n"
	req, err := http.NewRequest(http.MethodPut, srv.url+"/api/strategies/"+strat.ID, strings.NewReader(fmt.Sprintf(`{"name":"Thrower","code":%q}`, fixed)))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	res.Body.Close()
	var again string
	must(t, chromedp.Run(ctx,
		chromedp.Click(`#rerun-latest`),
		waitJS(`!location.pathname.endsWith('/`+task.TaskID+`') && /\/runs\/task_\d+$/.test(location.pathname)`, 10*time.Second),
		chromedp.Evaluate(`location.pathname.split('/').pop()`, &again),
	))
	waitTask(t, srv.url, again)
	var rerun struct {
		Version   int    `json:"strategy_version"`
		StartDate string `json:"start_date"`
	}
	must(t, getJSON(srv.url+"/api/backtests/"+again, &rerun))
	if rerun.Version != 2 || rerun.StartDate != first {
		t.Errorf("run with the latest code: version %d from %s; want version 2 from %s", rerun.Version, rerun.StartDate, first)
	}

	// Restore the first version: it becomes version 3, with version 1's code.
	var code string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(ui+"/strategies/"+strat.ID),
		chromedp.Click(`#tab-versions`),
		chromedp.Click(`#panel-versions tr[data-version="1"] button`),
		chromedp.WaitVisible(`dialog[open] button.btn.danger`),
		chromedp.Click(`dialog[open] button.btn.danger`),
		waitJS(`document.querySelector('#panel-versions tr[data-version="3"]') !== null`, 10*time.Second),
	))
	var head struct {
		Version int    `json:"version"`
		Code    string `json:"code"`
	}
	must(t, getJSON(srv.url+"/api/strategies/"+strat.ID, &head))
	code = head.Code
	if head.Version != 3 || !strings.Contains(code, "boom here") {
		t.Errorf("after restoring v1 the strategy is v%d with code %.80q", head.Version, code)
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
	}
}
