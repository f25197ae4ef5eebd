package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestResultsInBrowser walks the results page as a trader reads it: round trips by default
// with fees, return and excursions, the fills on a second tab, buys and sells on the price
// chart, a trade zooming the chart to it, formatted tooltips, one colour convention with its
// setting and the dark theme, the keyboard focus kept through paging, list refreshes and
// navigation, and the page's transfer size, at 1440 and 375 px with no console errors.
func TestResultsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Results walk", "code": strategyCode}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": 5, "slow": 20},
		"start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	var trips struct {
		Total  int `json:"total"`
		Trades []struct {
			Seq       int     `json:"seq"`
			EntryDate string  `json:"entry_date"`
			ExitDate  *string `json:"exit_date"`
			PnLNet    float64 `json:"pnl_net"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?kind=round_trips&limit=1000", &trips))
	var fills struct {
		Total int `json:"total"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?limit=1", &fills))
	if trips.Total < 25 || fills.Total <= trips.Total {
		t.Fatalf("the run made %d round trips and %d fills; the walk needs more than 20 round trips", trips.Total, fills.Total)
	}
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))
	ui := srv.url + "/ui"
	results := ui + "/results/" + task.TaskID

	for _, size := range []struct{ w, h int }{{1440, 900}, {375, 812}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 3*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			// A fresh profile: every byte of the page comes over the wire once.
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(results),
				waitJS(`document.querySelectorAll('#trades .round-trips tbody tr').length === 20`, 30*time.Second),
				waitJS(`[...document.querySelectorAll('#charts .chart-panel')].length === 8 && [...document.querySelectorAll('#charts .chart-panel')].every(p => p.dataset.ready === 'true')`, 30*time.Second),
				waitJS(`document.querySelector('#trade-analysis table') !== null`, 10*time.Second),
				waitJS(`document.querySelector('#drawdowns table') !== null`, 10*time.Second),
			))
			// The drawdown periods are the API's, deepest first; the deepest is the Max Drawdown.
			var periods []struct {
				Peak     string  `json:"peak"`
				DepthPct float64 `json:"depth_pct"`
			}
			must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/drawdowns", &periods))
			var ddRows []string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#drawdowns tbody tr')].map(r => r.innerText.replace(/\s+/g, ' '))`, &ddRows)))
			if len(periods) == 0 || len(ddRows) != len(periods) {
				t.Errorf("drawdown table has %d rows, the API %d periods", len(ddRows), len(periods))
			} else if want := fmt.Sprintf("−%.2f%% %s", periods[0].DepthPct, periods[0].Peak); !strings.Contains(ddRows[0], want) {
				t.Errorf("deepest drawdown row %q, want %q", ddRows[0], want)
			}
			var maxDD string
			must(t, chromedp.Run(ctx, chromedp.Text(`#statistics li[data-key="max_drawdown"] .value`, &maxDD)))
			if len(periods) > 0 && !strings.Contains(maxDD, fmt.Sprintf("%.2f", periods[0].DepthPct)) {
				t.Errorf("Max Drawdown statistic %q, deepest period %.4f%%", maxDD, periods[0].DepthPct)
			}
			// The rolling Sharpe ratio and the returns histogram are drawn with data.
			var drawn []string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`['rolling_sharpe', 'returns_histogram'].filter(k => { const p = document.querySelector('[data-chart-type="' + k + '"]'); return p && p.dataset.ready === 'true' && !p.dataset.error && p.querySelector('canvas'); })`, &drawn)))
			if len(drawn) != 2 {
				t.Errorf("charts drawn: %v, want rolling_sharpe and returns_histogram", drawn)
			}
			var transfer struct {
				Bytes      float64 `json:"bytes"`
				Compressed bool    `json:"compressed"`
			}
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
				const rs = performance.getEntriesByType('resource'), nav = performance.getEntriesByType('navigation')[0];
				const big = rs.filter(r => /\.js$/.test(r.name)).sort((a, b) => b.decodedBodySize - a.decodedBodySize)[0];
				return {bytes: rs.concat([nav]).reduce((n, r) => n + r.transferSize, 0), compressed: !!big && big.encodedBodySize < big.decodedBodySize / 2};
			})()`, &transfer)))
			t.Logf("results page with all charts: %.0f KB transferred", transfer.Bytes/1024)
			if transfer.Bytes <= 0 || transfer.Bytes > 600*1024 || !transfer.Compressed {
				t.Errorf("results page moved %.0f KB (want under 600 KB), largest script compressed=%v", transfer.Bytes/1024, transfer.Compressed)
			}

			// Round trips: what a trader reads, and the number in the pager is the API's.
			var head []string
			var pager string
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`[...document.querySelectorAll('#trades .round-trips thead th')].map(th => th.textContent)`, &head),
				chromedp.Text(`#trades-page`, &pager),
			))
			for _, col := range []string{"Entry", "Exit", "Held", "Net P&L", "Fees", "Return", "MAE", "MFE"} {
				if !contains(head, col) {
					t.Errorf("round trips table lacks %q: %v", col, head)
				}
			}
			if !strings.Contains(pager, fmt.Sprintf("%d round trips", trips.Total)) {
				t.Errorf("pager says %q; the run made %d round trips", pager, trips.Total)
			}
			var analysis string
			must(t, chromedp.Run(ctx, chromedp.Text(`#trade-analysis tr[data-row="Trades"]`, &analysis)))
			if !strings.Contains(analysis, fmt.Sprint(trips.Total)) && !strings.Contains(analysis, fmt.Sprint(trips.Total-1)) {
				t.Errorf("trade analysis counts %q; the run made %d round trips", analysis, trips.Total)
			}

			// The price chart carries the buys and sells; a trade zooms it to itself.
			var series string
			must(t, chromedp.Run(ctx, chromedp.AttributeValue(`[data-chart-type="candlestick"]`, "data-series", &series, nil)))
			if !strings.Contains(series, "Buy") || !strings.Contains(series, "Sell") {
				t.Errorf("price chart series %q: no trade markers", series)
			}
			// Its moving averages are the strategy's own periods (fast 5, slow 20), not 5/10/20.
			if !strings.Contains(series, "MA5") || !strings.Contains(series, "MA20") || strings.Contains(series, "MA10") {
				t.Errorf("price chart series %q: want the strategy's MA5 and MA20 only", series)
			}
			third := trips.Trades[2]
			var zoom string
			must(t, chromedp.Run(ctx,
				chromedp.Click(`#trades .round-trips tbody tr[data-seq="3"] td:nth-child(2)`),
				waitJS(`!!document.querySelector('[data-chart-type="candlestick"]').dataset.zoom`, 5*time.Second),
				chromedp.AttributeValue(`[data-chart-type="candlestick"]`, "data-zoom", &zoom, nil),
			))
			if from, to, ok := strings.Cut(zoom, ".."); !ok || from > third.EntryDate || (third.ExitDate != nil && to < *third.ExitDate) {
				t.Errorf("trade 3 (%s → %v) zoomed the price chart to %q", third.EntryDate, third.ExitDate, zoom)
			}

			screenshot(t, ctx, shots, fmt.Sprintf("results-trades-%d", size.w))
			// Paging keeps the keyboard focus on the control that paged.
			var focused string
			must(t, chromedp.Run(ctx,
				chromedp.Focus(`#trades-next`),
				chromedp.KeyEvent("\r"),
				waitJS(`/^Page 2 of/.test(document.querySelector('#trades-page').textContent)`, 10*time.Second),
				chromedp.Evaluate(`document.activeElement.id`, &focused),
			))
			if focused != "trades-next" {
				t.Errorf("after paging with the keyboard the focus is on %q, want trades-next", focused)
			}

			// Fills on their own tab: realised P&L only where a fill closed something.
			var fillRows int
			must(t, chromedp.Run(ctx,
				chromedp.Click(`#trades-tab-executions`),
				waitJS(`document.querySelectorAll('#trades .fills tbody tr').length > 0 && document.querySelector('#trades-tab-executions').getAttribute('aria-selected') === 'true'`, 10*time.Second),
				chromedp.Evaluate(`document.querySelectorAll('#trades .fills tbody tr').length`, &fillRows),
				chromedp.Text(`#trades-page`, &pager),
			))
			if !strings.Contains(pager, fmt.Sprintf("%d fills", fills.Total)) {
				t.Errorf("fills pager says %q; the run made %d fills", pager, fills.Total)
			}

			// Tooltips show rounded numbers (hover over the equity chart).
			var tip string
			for round := 0; round < 10 && tip == ""; round++ {
				var at []float64
				must(t, chromedp.Run(ctx,
					chromedp.ScrollIntoView(`[data-chart-type="equity"] .chart`),
					chromedp.Evaluate(`(() => { const r = document.querySelector('[data-chart-type="equity"] .chart').getBoundingClientRect(); return [r.left + r.width * 0.6, r.top + r.height * 0.5]; })()`, &at)))
				must(t, chromedp.Run(ctx, input.DispatchMouseEvent(input.MouseMoved, at[0]+float64(round), at[1])))
				time.Sleep(300 * time.Millisecond)
				must(t, chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('[data-chart-type="equity"] .chart div')].filter(d => d.style.position === 'absolute' && d.style.display !== 'none' && /Equity/.test(d.textContent)).map(d => d.innerText).join(' ')`, &tip)))
			}
			if tip == "" {
				t.Error("no tooltip on the equity chart")
			} else if regexp.MustCompile(`\d\.\d{3,}`).MatchString(tip) || !regexp.MustCompile(`\d{1,3}(,\d{3})+\.\d{2}`).MatchString(tip) {
				t.Errorf("equity tooltip %q: want values like 100,123.45", tip)
			}

			// One colour convention, and its setting: gains red makes every gain red.
			var pos, up, upAfter, bg string
			must(t, chromedp.Run(ctx,
				chromedp.ScrollIntoView(`header.top`),
				chromedp.Evaluate(`getComputedStyle(document.documentElement).getPropertyValue('--pos').trim()`, &pos),
				chromedp.AttributeValue(`[data-chart-type="candlestick"]`, "data-up", &up, nil),
				chromedp.Click(`#display summary`),
				chromedp.SetValue(`#display-updown`, "red-up"),
				chromedp.Evaluate(`document.querySelector('#display-updown').dispatchEvent(new Event('change'))`, nil),
				waitJS(`document.querySelector('[data-chart-type="candlestick"]').dataset.up !== '`+up+`'`, 5*time.Second),
				chromedp.AttributeValue(`[data-chart-type="candlestick"]`, "data-up", &upAfter, nil),
				chromedp.SetValue(`#display-theme`, "dark"),
				chromedp.Evaluate(`document.querySelector('#display-theme').dispatchEvent(new Event('change'))`, nil),
				chromedp.Evaluate(`getComputedStyle(document.documentElement).backgroundColor`, &bg),
			))
			screenshot(t, ctx, shots, fmt.Sprintf("results-dark-%d", size.w))
			if pos != "#1b8a5a" || up != "#26a69a" || upAfter != "#ef5350" {
				t.Errorf("colours: gains %s in text and %s in candles by default, candles %s after choosing red for up", pos, up, upAfter)
			}
			if bg != "rgb(15, 19, 27)" {
				t.Errorf("dark theme: body background %s", bg)
			}
			// The setting lasts: a new page in this browser keeps it.
			var kept string
			must(t, chromedp.Run(ctx, chromedp.Navigate(results), waitJS(`document.querySelector('[data-chart-type="candlestick"]')?.dataset.ready === 'true'`, 20*time.Second),
				chromedp.Evaluate(`document.documentElement.dataset.updown + ' ' + document.documentElement.dataset.theme + ' ' + document.querySelector('[data-chart-type="candlestick"]').dataset.up`, &kept)))
			if kept != "red-up dark #ef5350" {
				t.Errorf("after a reload the display settings are %q", kept)
			}

			// Navigation leaves the focus on the new page's heading, not on the link.
			must(t, chromedp.Run(ctx, chromedp.Navigate(ui+"/strategies"), waitJS(`document.querySelector('main h1') !== null`, 10*time.Second)))
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.Click(`.menu-toggle`)))
			}
			must(t, chromedp.Run(ctx,
				chromedp.Click(`#nav a[href$="/runs"]`),
				waitJS(`document.querySelector('#task-list .task') !== null`, 15*time.Second),
				waitJS(`document.activeElement.tagName === 'H1'`, 5*time.Second),
			))

			// A runs list that refreshes itself keeps the focus on the same task.
			link := `[data-focus="open-` + task.TaskID + `"]`
			must(t, chromedp.Run(ctx,
				chromedp.Focus(link),
				chromedp.Evaluate(`window.__firstLink = document.querySelector('`+link+`')`, nil),
				// the list is re-read every 8 s: wait for a new element, then for the focus on it
				waitJS(`document.querySelector('`+link+`') !== window.__firstLink`, 30*time.Second),
				waitJS(`document.activeElement === document.querySelector('`+link+`')`, 2*time.Second),
			))

			var overflow bool
			must(t, chromedp.Run(ctx, chromedp.Navigate(results), waitJS(`document.querySelectorAll('#trades tbody tr').length > 0`, 20*time.Second),
				chromedp.Evaluate(fmt.Sprintf(`document.documentElement.scrollWidth > %d`, size.w+1), &overflow)))
			if overflow {
				t.Errorf("results page wider than %d px", size.w)
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
