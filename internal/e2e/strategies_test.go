package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSeveralStrategiesInBrowser runs a file of three strategies on one broker through the
// service and reads its results page: the By strategy section lists each with its fills and
// trades as the API gives them, and the round trips and fills name the strategy of each; a
// run of one strategy shows neither.
func TestSeveralStrategiesInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	code, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "backtrader", "strategies", "multi_strategies.js"))
	must(t, err)
	run := func(name, code string) string {
		var strat struct {
			ID string `json:"id"`
		}
		must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": name, "code": code}, &strat))
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
		waitTask(t, srv.url, task.TaskID)
		return task.TaskID
	}
	multi, single := run("Three strategies", string(code)), run("One strategy", strategyCode)

	var rows []struct {
		Name       string `json:"name"`
		Executions int    `json:"executions"`
		Trades     int    `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+multi+"/strategies", &rows))
	if len(rows) != 3 || rows[0].Name != "MultiCross" || rows[2].Name != "MultiHold" || rows[2].Executions == 0 {
		t.Fatalf("strategies of %s: %+v, want MultiCross, MultiCross and MultiHold, all trading", multi, rows)
	}
	var fills struct {
		Trades []struct {
			Strategy int `json:"strategy"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+multi+"/trades?limit=1000", &fills))
	per := map[int]int{}
	for _, f := range fills.Trades {
		per[f.Strategy]++
	}
	for i, r := range rows {
		if per[i] != r.Executions {
			t.Errorf("the trades route has %d fills of strategy %d, its row %d", per[i], i, r.Executions)
		}
	}

	ctx, errs := newBrowser(t, chromium, 1440, 900, 2*time.Minute)
	var shown, head, cells []string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+multi),
		waitJS(`document.querySelectorAll('#strategies-section tbody tr').length === 3`, 30*time.Second),
		waitJS(`document.querySelectorAll('#trades .round-trips tbody tr').length > 0`, 30*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#strategies-section tbody tr')].map(r => r.querySelector('th').textContent + ' ' + r.children[3].textContent)`, &shown),
		chromedp.Evaluate(`[...document.querySelectorAll('#trades .round-trips thead th')].map(th => th.textContent)`, &head),
		chromedp.Evaluate(`[...document.querySelectorAll('#trades .round-trips tbody td.strategy')].map(td => td.textContent)`, &cells),
	))
	for i, r := range rows {
		if i >= len(shown) || shown[i] != r.Name+" "+strconv.Itoa(r.Executions) {
			t.Errorf("By strategy row %d %q, want %s with %d fills", i, shown, r.Name, r.Executions)
		}
	}
	// The two MultiCross are told apart by their number.
	labels := map[string]bool{"MultiCross #0": true, "MultiCross #1": true, "MultiHold": true}
	for _, c := range cells {
		if !labels[c] {
			t.Errorf("a round trip's strategy reads %q, want one of %v", c, labels)
		}
	}
	if !contains(head, "Strategy") || len(cells) == 0 {
		t.Errorf("round trips head %v, %d strategy cells", head, len(cells))
	}
	must(t, chromedp.Run(ctx,
		chromedp.Click(`#trades-tab-executions`),
		waitJS(`document.querySelectorAll('#trades .fills tbody td.strategy').length > 0`, 20*time.Second),
	))
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))
	screenshot(t, ctx, shots, "results-strategies-1440")
	docShot(t, ctx, "results-strategies-fills-1440", `#trades`)

	var hidden bool
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+single),
		waitJS(`document.querySelectorAll('#trades .round-trips tbody tr').length > 0`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('#strategies-section').hidden && ![...document.querySelectorAll('#trades thead th')].some(th => th.textContent === 'Strategy')`, &hidden),
	))
	if !hidden {
		t.Error("a run of one strategy shows a By strategy section or a Strategy column")
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
	}
}
