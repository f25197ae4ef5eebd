package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestReproduceAndDiffInBrowser: a run's page shows its provenance, its Reproduce button
// shows the verdict (identical: nothing changed), and the diff of two runs that differ in fast
// shows the parameter as the cause, the trades coloured by kind as the API splits them, and
// is reached from the comparison of the two.
func TestReproduceAndDiffInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Reproduced crossover", "code": strategyCode}, &strat))
	var ids []string
	for _, fast := range []int{5, 8} {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": fast, "slow": 20, "size": 10},
			"start_date": "2018-01-01", "end_date": "2019-12-31"}, &task))
		ids = append(ids, task.TaskID)
	}
	for _, id := range ids {
		waitTask(t, srv.url, id)
	}
	var diff struct {
		Causes []string `json:"causes"`
		Trades struct {
			OnlyA   []any `json:"only_a"`
			OnlyB   []any `json:"only_b"`
			Changed []any `json:"changed"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+ids[0]+"/diff?against="+ids[1], &diff))

	ctx, errs := newBrowser(t, chromium, 1440, 900, 3*time.Minute)
	var outcome, symbols string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+ids[0]),
		waitJS(`document.querySelector('#provenance-data tbody tr') !== null`, 30*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#provenance-data tbody tr')].map(r => r.dataset.symbol).join(',')`, &symbols),
		chromedp.Click(`[data-reproduce]`, chromedp.ByQuery),
		waitJS(`(document.querySelector('#reproduction')?.dataset.outcome ?? 'pending') !== 'pending'`, 90*time.Second),
		chromedp.Evaluate(`document.querySelector('#reproduction').dataset.outcome`, &outcome),
	))
	if symbols == "" || outcome != "identical" {
		t.Errorf("provenance symbols %q, reproduction %q (want identical)", symbols, outcome)
	}

	var causes string
	var kinds map[string]int
	var link string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/compare?ids="+strings.Join(ids, ",")),
		waitJS(`document.querySelector('#compare-diff') !== null`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('#compare-diff').getAttribute('href')`, &link),
		chromedp.Click(`#compare-diff`, chromedp.ByQuery),
		waitJS(`document.querySelector('#diff-verdict') !== null`, 30*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#diff-causes li')].map(li => li.textContent).join('\n')`, &causes),
		chromedp.Evaluate(`[...document.querySelectorAll('#diff-trades tbody tr')].reduce((m, r) => (m[r.dataset.kind] = (m[r.dataset.kind] ?? 0) + 1, m), {})`, &kinds),
	))
	if !strings.HasSuffix(link, fmt.Sprintf("/ui/diff?a=%s&b=%s", ids[0], ids[1])) {
		t.Errorf("comparison's diff link %q", link)
	}
	if !strings.Contains(causes, "parameters: fast: 5 → 8") || strings.Join(diff.Causes, "\n") != causes {
		t.Errorf("causes shown %q, the API's %q", causes, diff.Causes)
	}
	if kinds["only-a"] != len(diff.Trades.OnlyA) || kinds["only-b"] != len(diff.Trades.OnlyB) || kinds["changed"] != 2*len(diff.Trades.Changed) {
		t.Errorf("trade rows by kind %v; the API: only_a %d, only_b %d, changed %d", kinds, len(diff.Trades.OnlyA), len(diff.Trades.OnlyB), len(diff.Trades.Changed))
	}
	if len(diff.Trades.OnlyA)+len(diff.Trades.OnlyB)+len(diff.Trades.Changed) == 0 {
		t.Error("fast 5 and 8 made the same trades: the test needs differing ones")
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors: %v", e)
	}
}
