package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// apiStats is GET /api/results/{id}/statistics as the tests read it.
type apiStats struct {
	Groups []struct {
		Name    string `json:"name"`
		Metrics []struct {
			Key   string   `json:"key"`
			Value *float64 `json:"value"`
		} `json:"metrics"`
	} `json:"groups"`
}

// TestPageAndReportAgreeWithAPI runs a daily and a weekly backtest and reads every figure
// the page and the HTML report show of them against the API's /summary and /statistics,
// written in the page's one convention (format_test.go): the results page's cards and
// Statistics, the runs list's row (return, max drawdown, Sharpe, trades), and the report's
// headline cards and Statistics. Whatever the figures are, the three places say the same.
func TestPageAndReportAgreeWithAPI(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Agree", "code": strategyCode}, &strat))
	runs := []struct {
		name string
		body map[string]any
		id   string
	}{
		{name: "daily", body: map[string]any{"strategy_params": map[string]any{"fast": 3, "slow": 12}, "start_date": "2015-01-01", "end_date": "2019-12-31"}},
		{name: "weekly", body: map[string]any{"strategy_params": map[string]any{"fast": 4, "slow": 10}, "timeframe": "1w", "start_date": "2015-01-01", "end_date": "2024-12-31"}},
	}
	for i := range runs {
		runs[i].body["strategy_id"] = strat.ID
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", runs[i].body, &task))
		runs[i].id = task.TaskID
	}
	ctx, errs := newBrowser(t, chromium, 1440, 900, 4*time.Minute)
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			waitTask(t, srv.url, run.id)
			var summary map[string]*float64
			must(t, getEnvelope(srv.url+"/api/results/"+run.id+"/summary", &summary))
			var stats apiStats
			must(t, getEnvelope(srv.url+"/api/results/"+run.id+"/statistics", &stats))
			if n := summary["total_trades"]; n == nil || *n < 3 {
				t.Fatalf("the %s run made %v trades: too few to compare figures", run.name, deref(n))
			}
			statWant := map[string]string{}
			for _, g := range stats.Groups {
				for _, m := range g.Metrics {
					unit, ok := statUnits[m.Key]
					if !ok {
						t.Errorf("statistic %s has no unit in this test", m.Key)
						continue
					}
					statWant[m.Key] = readAs(unit, m.Value)
				}
			}
			summaryWant := map[string]string{}
			for key, unit := range summaryUnits {
				summaryWant[key] = readAs(unit, summary[key])
			}

			// The results page.
			var cards, statTexts map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/results/"+run.id),
				waitJS(`document.querySelectorAll('#statistics li[data-key]').length > 20 && document.querySelectorAll('#summary-cards [data-key]').length > 5`, 30*time.Second),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#summary-cards [data-key]')].map(e => [e.dataset.key, e.querySelector('.value').textContent]))`, &cards),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#statistics li[data-key]')].map(e => [e.dataset.key, e.querySelector('.value').textContent]))`, &statTexts),
			))
			compareTexts(t, "results page card", cards, summaryWant, len(summaryUnits))
			compareTexts(t, "results page statistic", statTexts, statWant, 24)

			// The runs list's row of this run.
			var row map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/runs"),
				waitJS(fmt.Sprintf(`[...document.querySelectorAll('#task-list .task')].some(e => e.querySelector('a.task-id')?.textContent === %q && e.querySelector('.figures'))`, run.id), 30*time.Second),
				chromedp.Evaluate(fmt.Sprintf(`(() => { const e = [...document.querySelectorAll('#task-list .task')].find(e => e.querySelector('a.task-id')?.textContent === %q);
					return Object.fromEntries([...e.querySelectorAll('.figures .fig')].map(f => [f.querySelector('dt').textContent, f.querySelector('dd').textContent])); })()`, run.id), &row),
			))
			compareTexts(t, "runs list", row, map[string]string{
				"Return": summaryWant["total_return"], "Max DD": summaryWant["max_drawdown_pct"],
				"Sharpe": summaryWant["sharpe_ratio"], "Trades": summaryWant["total_trades"],
			}, 4)

			// The HTML report: headline cards and Statistics, by the API's keys.
			var headline, reportStats map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/api/results/"+run.id+"/export?format=html"),
				waitJS(`document.querySelector('#headline [data-key]') !== null`, 30*time.Second),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#headline [data-key]')].map(e => [e.dataset.key, e.querySelector('.value').textContent]))`, &headline),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('table.stat-group td[data-key]')].map(e => [e.dataset.key, e.textContent]))`, &reportStats),
			))
			compareTexts(t, "report headline", headline, summaryWant, 8)
			compareTexts(t, "report statistic", reportStats, statWant, 24)
		})
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
	}
}

// compareTexts checks each figure shown against the API's, formatted: got holds what a
// place shows by key, want what the API's figure reads as; at least atLeast are compared.
func compareTexts(t *testing.T, where string, got, want map[string]string, atLeast int) {
	t.Helper()
	n := 0
	for key, shown := range got {
		w, ok := want[key]
		if !ok {
			continue // a figure the API route does not carry (the report's analyzers, say)
		}
		n++
		if shown != w {
			t.Errorf("%s %s reads %q, the API's figure reads %q", where, key, shown, w)
		}
	}
	if n < atLeast {
		t.Errorf("%s: only %d figures compared (shown: %v), want at least %d", where, n, got, atLeast)
	}
}
