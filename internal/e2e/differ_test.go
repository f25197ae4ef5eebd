package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunsDifferInBrowser: three runs of one strategy that differ in fast and slow. The runs
// list and the comparison show those two parameters with the API's values (and not the ones
// every run shares), and name the strategy by its name, never by its id; at 1440 and 390 px.
func TestRunsDifferInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	const name = "Differing crossover"
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": name, "code": strategyCode}, &strat))
	var ids []string
	for _, p := range []map[string]any{{"fast": 5, "slow": 20, "size": 10}, {"fast": 8, "slow": 20, "size": 10}, {"fast": 5, "slow": 30, "size": 10}} {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": p, "start_date": "2018-01-01", "end_date": "2019-12-31"}, &task))
		ids = append(ids, task.TaskID)
	}
	params := map[string]map[string]any{}
	for _, id := range ids {
		waitTask(t, srv.url, id)
		var task struct {
			StrategyParams map[string]any `json:"strategy_params"`
		}
		must(t, getJSON(srv.url+"/api/backtests/"+id, &task))
		params[id] = task.StrategyParams
	}

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 2*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			var shown map[string]map[string]string
			var lines map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/runs"),
				waitJS(`document.querySelectorAll('#task-list .task .figures').length === 3`, 30*time.Second),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#task-list .task')].map(e => [e.dataset.task, Object.fromEntries([...e.querySelectorAll('.task-params [data-param]')].map(f => [f.dataset.param, f.querySelector('dd').textContent]))]))`, &shown),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#task-list .task')].map(e => [e.dataset.task, e.querySelector('.task-main').innerText]))`, &lines),
			))
			for _, id := range ids {
				if got := keys(shown[id]); got != "fast,slow" {
					t.Errorf("%s shows parameters %s, want fast,slow (size is the same in every run)", id, got)
				}
				for _, k := range []string{"fast", "slow"} {
					if want := fmt.Sprint(params[id][k]); shown[id][k] != want {
						t.Errorf("%s %s reads %q, the API's is %q", id, k, shown[id][k], want)
					}
				}
				if !strings.Contains(lines[id], name) || strings.Contains(lines[id], strat.ID) {
					t.Errorf("run %s reads %q: want the strategy's name %q, not its id %s", id, lines[id], name, strat.ID)
				}
			}

			var rows map[string][]string
			var heads, picks []string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/compare?ids="+strings.Join(ids, ",")),
				waitJS(`document.querySelector('#compare-table') !== null && document.querySelectorAll('.pick-list li').length === 3`, 30*time.Second),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#compare-table tr.param-row.differs')].map(r => [r.dataset.param, [...r.cells].slice(1).map(c => c.textContent)]))`, &rows),
				chromedp.Evaluate(`[...document.querySelectorAll('#compare-table thead th')].slice(1).map(th => th.innerText)`, &heads),
				chromedp.Evaluate(`[...document.querySelectorAll('.pick-list li')].map(li => li.innerText)`, &picks),
			))
			if got := keys(rows); got != "fast,slow" {
				t.Errorf("comparison rows for parameters %s, want fast,slow", got)
			}
			for k, cells := range rows {
				for i, id := range ids {
					if i < len(cells) && cells[i] != fmt.Sprint(params[id][k]) {
						t.Errorf("comparison %s of %s reads %q, the API's is %v", k, id, cells[i], params[id][k])
					}
				}
			}
			for _, s := range append(heads, picks...) {
				if !strings.Contains(s, name) || strings.Contains(s, strat.ID) {
					t.Errorf("comparison reads %q: want the strategy's name, not its id %s", s, strat.ID)
				}
			}
			if bad := hyphenSigns(t, ctx); len(bad) > 0 {
				t.Errorf("comparison writes numbers with a hyphen for minus: %q", bad)
			}
			var same string
			must(t, chromedp.Run(ctx, chromedp.Text(`#compare-same-params`, &same)))
			if !strings.Contains(same, "size=10") {
				t.Errorf("the parameters every run shares read %q", same)
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

func keys[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
