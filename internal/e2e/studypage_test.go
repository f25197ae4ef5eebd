package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStudyPageInBrowser reads the study pages as a person does, at 1440 and 390 px: the
// form's dates are the chosen symbol's stored range; a walk-forward study's leaderboard shows
// finished combinations while it runs (not the last fold's pending rows); Sharpe heads one
// column when it is the objective; the leaderboard's figures are the API's formatted in Go;
// the heatmap's colour scale is centred on 0; and no page is wider than the screen.
func TestStudyPageInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct{ ID string }
	must(t, postJSON(srv.url+"/api/strategies", map[string]string{"name": "Study page", "code": strategyCode}, &strat))
	var syms []struct {
		Symbol string `json:"symbol"`
		Ranges []struct {
			Timeframe, First, Last string
		} `json:"ranges"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/symbols", &syms))
	if len(syms) == 0 || len(syms[0].Ranges) == 0 {
		t.Fatalf("sample symbols: %+v", syms)
	}
	sym := syms[0]
	first, last := sym.Ranges[0].First[:10], sym.Ranges[0].Last[:10]
	for _, r := range sym.Ranges {
		if r.Timeframe == "1d" {
			first, last = r.First[:10], r.Last[:10]
		}
	}
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 3*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			wider := func(page string) {
				t.Helper()
				var over []string
				must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`((vw) => document.documentElement.scrollWidth > vw + 1 ? [String(document.documentElement.scrollWidth)].concat([...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > vw + 1 && !e.closest('.table-wrap')).slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right))) : [])(%d)`, size.w), &over)))
				if len(over) > 0 {
					t.Errorf("%s is %s px wide on a %d px screen; out of it: %v", page, over[0], size.w, over[1:])
				}
			}

			// The form opens on the symbol's stored range.
			var start, end, symbol string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/studies?strategy="+strat.ID),
				chromedp.WaitVisible(`#study-submit`),
				waitJS(`document.querySelector('input[name="symbol"]').value !== '' && document.querySelector('input[data-param="fast"]') !== null`, 20*time.Second),
				waitJS(fmt.Sprintf(`document.querySelector('input[name="start_date"]').value === %q`, first), 10*time.Second),
				chromedp.Value(`input[name="start_date"]`, &start),
				chromedp.Value(`input[name="end_date"]`, &end),
				chromedp.Value(`input[name="symbol"]`, &symbol),
			))
			if symbol != sym.Symbol || start != first || end != last {
				t.Errorf("study form on %s %s → %s; %s is stored %s → %s", symbol, start, end, sym.Symbol, first, last)
			}
			wider("the study form")

			// A walk-forward study, slowed so that it can be watched: while it runs the board
			// shows finished combinations of the fold at work.
			var st struct {
				ID string `json:"id"`
			}
			must(t, postJSON(srv.url+"/api/studies", map[string]any{"strategy_id": strat.ID, "symbol": sym.Symbol,
				"start_date": "2015-01-01", "end_date": "2019-12-31", "objective": "sharpe_ratio",
				"space":        map[string]any{"fast": []int{5, 10}, "slow": []int{20, 40}, "delay": []int{4}},
				"walk_forward": map[string]any{"train": "1y", "test": "1y"}}, &st))
			must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+"/ui/studies/"+st.ID)))
			seen := false
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
				var done int
				must(t, chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#study-board-table tbody tr[data-status="completed"]')].length`, &done)))
				var now struct{ Status string }
				must(t, getJSON(srv.url+"/api/studies/"+st.ID, &now))
				if now.Status != "running" && now.Status != "pending" {
					break
				}
				if done > 0 {
					seen = true
					break
				}
			}
			if !seen {
				t.Error("the leaderboard showed no finished combination while the walk-forward study ran")
			}
			var dashes int
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#study-board-table tbody tr')].filter(r => [...r.cells].slice(1).every(c => c.textContent === '—' || c.textContent === '')).length`, &dashes)))
			if dashes > 0 {
				t.Errorf("%d leaderboard rows of dashes", dashes)
			}
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('#study-status [data-status]')?.dataset.status === 'completed'`, 120*time.Second),
				waitJS(`document.querySelector('#wf-cards') !== null && document.querySelectorAll('#study-board-table tbody tr[data-status="completed"]').length === 4`, 20*time.Second),
				waitJS(`Number(document.querySelector('#study-heatmap [data-points]')?.dataset.points) > 0`, 20*time.Second),
			))
			// The surface around the best: a row per varied parameter, as the API's.
			var surface struct {
				Parameters []struct {
					Name string `json:"name"`
				} `json:"parameters"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+st.ID+"/surface", &surface))
			var surfRows []string
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelectorAll('#study-surface tr[data-param]').length > 0`, 20*time.Second),
				chromedp.Evaluate(`[...document.querySelectorAll('#study-surface tr[data-param]')].map(r => r.dataset.param)`, &surfRows),
			))
			if len(surfRows) != len(surface.Parameters) || len(surfRows) == 0 {
				t.Errorf("the page's surface rows %v, the API's parameters %+v", surfRows, surface.Parameters)
			}
			// The purged cross-validation, with the form's defaults (the study declares none):
			// the page's PBO and splits are the API's.
			var cv struct {
				PBO    float64 `json:"pbo"`
				Splits []any   `json:"splits"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+st.ID+"/cpcv?groups=6&test_groups=2&embargo_bars=0", &cv))
			var cvPage struct{ PBO, Splits, Rows string }
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('#cpcv-summary') !== null`, 20*time.Second),
				chromedp.Evaluate(`(() => { const p = document.querySelector('#cpcv-summary'); return {PBO: p.dataset.pbo, Splits: p.dataset.splits, Rows: String(document.querySelectorAll('#cpcv-splits tbody tr').length)}; })()`, &cvPage),
			))
			if cvPage.PBO != strconv.FormatFloat(cv.PBO, 'f', -1, 64) || cvPage.Splits != "15" || cvPage.Rows != "15" || len(cv.Splits) != 15 {
				t.Errorf("the page's cross-validation %+v, the API's PBO %v over %d splits", cvPage, cv.PBO, len(cv.Splits))
			}

			// Sharpe heads one column; the first row reads as the API's figures.
			var heads []string
			var row map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`[...document.querySelectorAll('#study-board-table thead th')].map(th => th.textContent)`, &heads),
				chromedp.Evaluate(`(() => { const r = document.querySelector('#study-board-table tbody tr'), hs = [...document.querySelectorAll('#study-board-table thead th')].map(th => th.textContent);
					return Object.fromEntries([...r.cells].map((c, i) => [hs[i], c.textContent]).concat([['idx', r.dataset.idx]])); })()`, &row),
			))
			if n := strings.Count(strings.ToLower(strings.Join(heads, "|")), "sharpe"); n != 1 {
				t.Errorf("leaderboard heads %q name Sharpe %d times", heads, n)
			}
			var board struct {
				Trials []struct {
					Idx         int      `json:"idx"`
					Objective   *float64 `json:"objective"`
					TotalReturn *float64 `json:"total_return"`
					MaxDD       *float64 `json:"max_drawdown_pct"`
					Trades      *float64 `json:"total_trades"`
				} `json:"trials"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+st.ID+"/results?limit=1", &board))
			if len(board.Trials) != 1 {
				t.Fatalf("study board: %+v", board)
			}
			b := board.Trials[0]
			for head, want := range map[string]string{"idx": fmt.Sprint(b.Idx), "Return": readAs("frac", b.TotalReturn), "Max DD": readAs("pct", b.MaxDD), "Trades": readAs("int", b.Trades)} {
				if row[head] != want {
					t.Errorf("leaderboard's first row %s reads %q, the API's is %q (row %v)", head, row[head], want, row)
				}
			}

			// The heatmap's scale: −m to m.
			var vm struct{ Min, Max float64 }
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => { const v = document.querySelector('#study-heatmap [data-chart]').chartOption().visualMap[0]; return {Min: v.min, Max: v.max}; })()`, &vm)))
			if vm.Max <= 0 || vm.Min != -vm.Max {
				t.Errorf("study heatmap scale %v to %v, not centred on 0", vm.Min, vm.Max)
			}
			if bad := hyphenSigns(t, ctx); len(bad) > 0 {
				t.Errorf("study page writes numbers with a hyphen for minus: %q", bad)
			}
			wider("the study page")
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-wf').scrollIntoView(); window.scrollBy(0, -64)`, nil)))
			docShot(t, ctx, fmt.Sprintf("study-walk-forward-%d", size.w), "")
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-board').scrollIntoView(); window.scrollBy(0, -64)`, nil)))
			docShot(t, ctx, fmt.Sprintf("study-leaderboard-%d", size.w), "")
			must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+"/ui/studies"), waitJS(`document.querySelector('a[href$="/studies/`+st.ID+`"]') !== null`, 20*time.Second)))
			wider("the studies list")
			must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+"/ui/studies/"+st.ID), waitJS(`document.querySelector('#study-heatmap [data-chart]')?.dataset.ready === 'true'`, 20*time.Second)))
			screenshot(t, ctx, shots, fmt.Sprintf("study-page-%d", size.w))
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}
