package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJoinedFeedInBrowser imports the five futures contracts of the rollover fixtures, runs
// rollover_volume.js on them through the service and reads its results page: the price
// chart shows the joined feed ES (backtrader's dates, the API's bars, not a contract's own)
// with every fill marked, no contract picker, and the By symbol table says what ES joined.
func TestJoinedFeedInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	root := filepath.Join(repoRoot(t), "testdata", "backtrader")
	contracts := []string{"ESH1", "ESM1", "ESU1", "ESZ1", "ESH2"}
	for _, s := range contracts {
		f, err := os.Open(filepath.Join(root, "data", s+".csv"))
		must(t, err)
		resp, err := http.Post(srv.url+"/api/data/builtin/"+s+"/bars?timeframe=1d", "text/csv", f)
		f.Close()
		must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("import of %s: %s", s, resp.Status)
		}
	}
	code, err := os.ReadFile(filepath.Join(root, "strategies", "rollover_volume.js"))
	must(t, err)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Rolled ES", "code": string(code)}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "symbols": contracts, "start_date": "2000-01-01", "end_date": "2002-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)

	// What backtrader's strategy saw: the joined feed's dates.
	raw, err := os.ReadFile(filepath.Join(root, "expected", "rollover_volume__"+strings.Join(contracts, "_")+".json"))
	must(t, err)
	var bt struct {
		Equity [][2]any `json:"equity"`
	}
	must(t, json.Unmarshal(raw, &bt))
	// The API's chart of the joined feed (TestJoinedFeedCharts holds it to backtrader's bars).
	var chart struct {
		Series []struct {
			Data json.RawMessage `json:"data"`
		} `json:"series"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/chart?chart_type=candlestick", &chart))
	var candles [][]any // the K-line series: [date, open, close, low, high, volume]
	must(t, json.Unmarshal(chart.Series[0].Data, &candles))
	if len(candles) != len(bt.Equity) {
		t.Fatalf("the API's price chart has %d bars, backtrader's joined feed %d", len(candles), len(bt.Equity))
	}
	var fills struct {
		Total int `json:"total"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?kind=executions&limit=1", &fills))

	ctx, errs := newBrowser(t, chromium, 1440, 900, 2*time.Minute)
	var page struct {
		Symbol, Joined string
		Picker         bool
		Rows           [][]any
		Marks          int
	}
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+task.TaskID),
		waitJS(`document.querySelector('[data-chart-type="candlestick"]')?.dataset.ready === 'true' && !!document.querySelector('#symbols tbody tr')`, 30*time.Second),
		chromedp.Evaluate(`(() => {
			const p = document.querySelector('[data-chart-type="candlestick"]'), o = p.chartOption();
			const k = o.series.find(s => s.type === 'candlestick');
			const buy = o.series.find(s => s.name === '▲ Buy'), sell = o.series.find(s => s.name === '▼ Sell');
			const label = document.querySelector('#chart-symbol')?.closest('label');
			return {Symbol: p.dataset.symbol ?? '', Joined: document.querySelector('#symbols tr[data-symbol="ES"] .joined')?.textContent ?? '',
				Picker: !!label && !label.hidden, Rows: k.data.map(r => [r[0], r[1], r[2], r[3], r[4]]), Marks: buy.data.length + sell.data.length};
		})()`, &page),
	))
	if page.Symbol != "ES" || page.Picker {
		t.Errorf("the price chart shows %q (picker shown: %v), want the joined feed ES and no picker", page.Symbol, page.Picker)
	}
	if page.Joined != "joined from "+strings.Join(contracts, " → ") {
		t.Errorf("By symbol's ES row reads %q", page.Joined)
	}
	if len(page.Rows) != len(candles) {
		t.Fatalf("the page's price chart has %d bars, the joined feed %d", len(page.Rows), len(candles))
	}
	for i, r := range page.Rows {
		if r[0] != bt.Equity[i][0] || r[1] != candles[i][1] || r[2] != candles[i][2] || r[3] != candles[i][3] || r[4] != candles[i][4] {
			t.Fatalf("bar %d on the page %v, backtrader's date %v, the API's %v", i, r, bt.Equity[i][0], candles[i])
		}
	}
	if page.Marks != fills.Total || fills.Total == 0 {
		t.Errorf("%d fills marked on the price chart, the run made %d", page.Marks, fills.Total)
	}
	// For review by eye and the docs (DOCS_SCREENSHOTS=1): the joined feed's chart and the
	// By symbol table, wide and on a phone.
	docShot(t, ctx, "results-joined-feed-1440", `[data-chart-type="candlestick"]`)
	docShot(t, ctx, "results-joined-symbols-1440", `#symbols`)
	phone, phoneErrs := newBrowser(t, chromium, 390, 844, 2*time.Minute)
	must(t, chromedp.Run(phone,
		chromedp.Navigate(srv.url+"/ui/results/"+task.TaskID),
		waitJS(`document.querySelector('[data-chart-type="candlestick"]')?.dataset.ready === 'true' && !!document.querySelector('#symbols tbody tr')`, 30*time.Second),
	))
	docShot(t, phone, "results-joined-feed-390", `[data-chart-type="candlestick"]`)
	docShot(t, phone, "results-joined-symbols-390", `#symbols`)
	if e := append(errs.list(), phoneErrs.list()...); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}
}
