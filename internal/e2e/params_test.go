package e2e

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunParametersIncludeDefaults: a run given only fast ran with the strategy's slow (20),
// size and delay at their defaults, and every place that shows its parameters says so: the
// task, the comparison (JSON, CSV and page, where slow reads 20, not —), the task page, and
// the price chart, whose moving averages are the strategy's own periods (MA3 and MA20).
func TestRunParametersIncludeDefaults(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Defaults", "code": strategyCode}, &strat))
	submit := func(params map[string]any) string {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": params,
			"start_date": "2016-01-01", "end_date": "2018-12-31"}, &task))
		return task.TaskID
	}
	given, other := submit(map[string]any{"fast": 3}), submit(map[string]any{"fast": 5, "slow": 30})
	waitTask(t, srv.url, given)
	waitTask(t, srv.url, other)

	want := map[string]float64{"fast": 3, "slow": 20, "size": 10, "delay": 0}
	var task struct {
		StrategyParams map[string]float64 `json:"strategy_params"`
	}
	must(t, getJSON(srv.url+"/api/backtests/"+given, &task))
	for k, v := range want {
		if got, ok := task.StrategyParams[k]; !ok || got != v {
			t.Errorf("task strategy_params %s = %v (present %v), want %v: %v", k, got, ok, v, task.StrategyParams)
		}
	}
	var cmp struct {
		Tasks []struct {
			TaskID string             `json:"task_id"`
			Params map[string]float64 `json:"params"`
		} `json:"tasks"`
	}
	must(t, getEnvelope(srv.url+"/api/results/compare?task_ids="+given+","+other, &cmp))
	if len(cmp.Tasks) != 2 || cmp.Tasks[0].Params["slow"] != 20 || cmp.Tasks[0].Params["size"] != 10 || cmp.Tasks[1].Params["slow"] != 30 {
		t.Errorf("comparison params: %+v", cmp.Tasks)
	}
	res, err := http.Get(srv.url + "/api/results/compare?format=csv&task_ids=" + given + "," + other)
	must(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "params,delay=0 fast=3 size=10 slow=20,delay=0 fast=5 size=10 slow=30") {
		t.Errorf("comparison CSV params row:\n%s", body)
	}

	ctx, errs := newBrowser(t, chromium, 1440, 900, 2*time.Minute)
	var slowCells []string
	var meta string
	var mas []string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/compare?ids="+given+","+other),
		waitJS(`document.querySelector('tr[data-param="slow"]') !== null`, 30*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('tr[data-param="slow"] td')].map(td => td.textContent)`, &slowCells),
		chromedp.Navigate(srv.url+"/ui/runs/"+given),
		waitJS(`document.querySelector('main').innerText.includes('slow=')`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('main').innerText`, &meta),
		chromedp.Navigate(srv.url+"/ui/results/"+given),
		waitJS(`document.querySelector('[data-chart-type="candlestick"]')?.dataset.ready === 'true'`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('[data-chart-type="candlestick"]').chartOption().series.map(s => s.name).filter(n => /^MA\d+$/.test(n))`, &mas),
	))
	if !slices.Equal(slowCells, []string{"20", "30"}) {
		t.Errorf("comparison page's slow row reads %q, want 20 (the default it ran with) and 30", slowCells)
	}
	if !strings.Contains(meta, "fast=3") || !strings.Contains(meta, "slow=20") || !strings.Contains(meta, "size=10") {
		t.Errorf("task page's parameters lack the defaults: %q", meta)
	}
	if !slices.Equal(mas, []string{"MA3", "MA20"}) {
		t.Errorf("price chart's moving averages %q, want the strategy's own MA3 and MA20", mas)
	}

	// Pruned by retention, the run is gone with its result: its results page says so, not
	// that the result exists once the run has completed.
	var pruned struct {
		Tasks int `json:"tasks"`
	}
	must(t, postJSON(srv.url+"/api/admin/prune", map[string]any{"older_than": "1ns", "force": true}, &pruned))
	var why, text string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/results/"+given),
		waitJS(`document.querySelector('#result-missing') !== null`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('#result-missing').dataset.why`, &why),
		chromedp.Evaluate(`document.querySelector('main').innerText`, &text),
	))
	if why != "gone" || !strings.Contains(text, "pruned by retention") || strings.Contains(text, "once the run has completed") {
		t.Errorf("a pruned run's page (%d runs pruned) reads (%s): %q", pruned.Tasks, why, text)
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
	}
}
