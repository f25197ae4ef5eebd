package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backtestd/backtestd/web"
)

// TestDataAndFormsInBrowser: the data view shows each symbol's stored range, a backtest on a
// symbol starts on its own dates, a CSV import names every bad line, a parameter field marks
// and explains bad input without throwing, and a failed run ends its log with the error.
func TestDataAndFormsInBrowser(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		requireOrSkip(t, "no Chromium found (install Debian's chromium or set CHROMIUM)")
	}
	if web.App() == nil {
		requireOrSkip(t, "the web page is not built (web/dist/app is missing: run web/build.sh, which needs Node)")
	}
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
		chromedp.SetValue(`#import-symbol`, "BADLINES"),
		chromedp.SetUploadFiles(`#import-file`, []string{bad}),
		chromedp.Click(`form.import-form button[type="submit"]`),
		chromedp.WaitVisible(`#import-report .error-box`),
		chromedp.Evaluate(`[...document.querySelectorAll('#import-report tr[data-line]')].map(r => r.dataset.line)`, &lines),
	))
	if strings.Join(lines, ",") != "3,5,6" {
		t.Errorf("import report lists lines %v, want 3,5,6", lines)
	}

	// A run that fails: its log ends with the ERROR line; no "bar 0 of N".
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Thrower", "code": "class T extends Strategy {\n  next() { throw new Error('boom here'); }\n}\n"}, &strat))
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
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
	}
}
