package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fitRoute is one route of the page with real data behind it, and when it has drawn it.
type fitRoute struct {
	name, path, ready string
}

// fitData submits what every route of the page shows: a strategy, a daily run given only
// fast (slow at its default), a weekly run, a run of two symbols, a grid study and a
// walk-forward study; it waits for all of them. It returns the routes of web/src/main.ts,
// each with a run, study or symbol behind it.
func fitData(t *testing.T, srv *server) (routes []fitRoute, daily, weekly, pair string) {
	t.Helper()
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Fit", "code": strategyCode}, &strat))
	submit := func(body map[string]any) string {
		body["strategy_id"] = strat.ID
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", body, &task))
		return task.TaskID
	}
	daily = submit(map[string]any{"strategy_params": map[string]any{"fast": 3}, "start_date": "2015-01-01", "end_date": "2019-12-31"})
	weekly = submit(map[string]any{"strategy_params": map[string]any{"fast": 4, "slow": 10}, "timeframe": "1w", "start_date": "2012-01-01", "end_date": "2019-12-31"})
	pair = submit(map[string]any{"symbols": []string{"GLOBEX", "INITECH"}, "start_date": "2016-01-01", "end_date": "2018-12-31"})
	study := func(wf bool) string {
		body := map[string]any{"strategy_id": strat.ID, "symbol": "ACME",
			"start_date": "2016-01-01", "end_date": "2019-12-31", "objective": "total_return",
			"space": map[string]any{"fast": []int{5, 10}, "slow": []int{20, 40}, "size": []int{100}}}
		if wf {
			body["walk_forward"] = map[string]any{"train": "1y", "test": "1y"}
		}
		var st struct {
			ID string `json:"id"`
		}
		must(t, postJSON(srv.url+"/api/studies", body, &st))
		return st.ID
	}
	grid, walk := study(false), study(true)
	for _, id := range []string{daily, weekly, pair} {
		waitTask(t, srv.url, id)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for _, id := range []string{grid, walk} {
		for {
			var st struct {
				Status string `json:"status"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+id, &st))
			if st.Status == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("study %s is %s after 4 minutes", id, st.Status)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	charts := `[...document.querySelectorAll('#charts .chart-panel')].length > 0 && [...document.querySelectorAll('#charts .chart-panel')].every(p => p.dataset.ready === 'true') && document.querySelectorAll('#statistics li[data-key]').length > 20`
	routes = []fitRoute{
		{"home", "/ui/", `document.querySelector('main h1') !== null`},
		{"strategies", "/ui/strategies", `document.querySelector('a[href$="/strategies/` + strat.ID + `"]') !== null`},
		{"strategy-new", "/ui/strategies/new", `document.querySelector('#code-editor .cm-content') !== null`},
		{"strategy", "/ui/strategies/" + strat.ID, `document.querySelector('#panel-params input') !== null`},
		{"runs", "/ui/runs", `document.querySelector('#task-list .task .figures') !== null`},
		{"task", "/ui/runs/" + daily, `document.querySelectorAll('#log .ll').length > 0`},
		{"results-daily", "/ui/results/" + daily, charts},
		{"results-weekly", "/ui/results/" + weekly, charts},
		{"results-pair", "/ui/results/" + pair, charts},
		{"studies", "/ui/studies", `document.querySelector('a[href$="/studies/` + walk + `"]') !== null`},
		{"study-grid", "/ui/studies/" + grid, `document.querySelector('#study-heatmap [data-chart]')?.dataset.ready === 'true'`},
		{"study-walk-forward", "/ui/studies/" + walk, `document.querySelectorAll('#wf-folds tbody tr').length > 0 && document.querySelectorAll('#study-board-table tbody tr').length > 0`},
		{"compare", "/ui/compare?ids=" + daily + "," + weekly, `document.querySelector('tr[data-param="slow"]') !== null && document.querySelector('#compare-chart [data-chart], .chart-panel[data-ready="true"]') !== null`},
		{"diff", "/ui/diff?a=" + daily + "&b=" + pair, `document.querySelector('main .chart-panel[data-ready="true"], main [data-chart]') !== null`},
		{"data", "/ui/data", `document.querySelector('#symbols .ranges') !== null`},
		{"data-symbol", "/ui/data/builtin/GLOBEX", `document.querySelector('main [data-chart], main .chart-panel') !== null`},
		{"login", "/ui/login", `document.querySelector('main').innerText.trim().length > 0`},
		{"account", "/ui/account", `document.querySelector('main').innerText.trim().length > 0`},
		// The HTML report: a page of its own, outside the app.
		{"report-daily", "/api/results/" + daily + "/export?format=html", `document.querySelector('#yearly-returns') !== null`},
		{"report-weekly", "/api/results/" + weekly + "/export?format=html", `document.querySelector('#yearly-returns') !== null`},
	}
	return routes, daily, weekly, pair
}

// fitParts are the parts of some pages shot alone (<repo>/screenshots/fit-<part>-<width>.png):
// where the issue saw a legend over the axis titles, dates broken in two, a label on three lines.
var fitParts = map[string]map[string]string{
	"diff":          {"diff-equity": `section[aria-labelledby="h-eq"]`},
	"results-daily": {"drawdown-table": `.drawdowns-table`},
	"results-pair":  {"charts-head": `section[aria-labelledby="h-charts"] .section-head`},
}

// TestEveryPageFits visits every route of the page (web/src/main.ts) with real data behind
// it at 390 px, as a phone shows it: no page is wider than the screen (a wide table scrolls
// in its own frame). At 1440 px the same pages fit, the walk-forward folds table is not cut
// off at the right, "Price charts of" reads on one line, and in the dark theme every status
// badge's text has a contrast of at least 4.5:1 against its background. Screenshots of each
// page go to <repo>/screenshots/fit-<page>-<width>.png.
func TestEveryPageFits(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	routes, _, _, _ := fitData(t, srv)
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))

	for _, size := range []struct{ w, h int }{{390, 844}, {1440, 900}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 6*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			for _, r := range routes {
				if only := os.Getenv("FIT_ROUTES"); only != "" && !slices.Contains(strings.Split(only, ","), r.name) {
					continue // while working on some pages: FIT_ROUTES=study-grid,diff
				}
				var width int
				var wide []string
				err := chromedp.Run(ctx,
					chromedp.Navigate(srv.url+r.path),
					waitJS(r.ready, 45*time.Second),
					waitJS(`!document.querySelector('.loading')`, 20*time.Second),
					chromedp.Sleep(300*time.Millisecond),
					chromedp.Evaluate(`document.documentElement.scrollWidth`, &width),
					// What sticks out past the right edge, outside a frame that scrolls.
					// What sticks out past the right edge (the innermost such elements), outside a frame that scrolls.
					chromedp.Evaluate(fmt.Sprintf(`((w) => {
						const out = (e) => e.getBoundingClientRect().right > w + 1;
						const framed = (e) => { if (['absolute', 'fixed'].includes(getComputedStyle(e).position)) return false;
							for (let p = e.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
						return [...document.querySelectorAll('body *')].filter(e => out(e) && !framed(e) && ![...e.children].some(out)).slice(0, 8)
							.map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '') + ' ' + Math.round(e.getBoundingClientRect().right));
					})(%d)`, size.w), &wide),
				)
				if err != nil {
					t.Errorf("%s (%s): %v", r.name, r.path, err)
					continue
				}
				if width > size.w {
					t.Errorf("%s (%s) is %d px wide in a %d px window; sticking out: %q", r.name, r.path, width, size.w, wide)
				}
				screenshot(t, ctx, shots, fmt.Sprintf("fit-%s-%d", r.name, size.w))
				// The parts the issue named, shot alone for review.
				for name, sel := range fitParts[r.name] {
					sectionShot(t, ctx, fmt.Sprintf("fit-%s-%d", name, size.w), sel)
				}
			}
			if size.w < 600 {
				if e := errs.list(); len(e) > 0 {
					t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
				}
				return
			}

			// The walk-forward folds table shows its last column inside its frame at 1440 px.
			var folds struct{ ScrollW, ClientW int }
			var lines float64
			for _, r := range routes {
				switch r.name {
				case "study-walk-forward":
					must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+r.path), waitJS(r.ready, 45*time.Second),
						chromedp.Evaluate(`(() => { const w = document.querySelector('#wf-folds').closest('.table-wrap') || document.querySelector('#wf-folds').parentElement; return {ScrollW: w.scrollWidth, ClientW: w.clientWidth}; })()`, &folds)))
				case "results-pair":
					must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+r.path), waitJS(r.ready, 45*time.Second),
						// The line boxes of the label's text: one when it reads on one line.
						chromedp.Evaluate(`(() => { const l = [...document.querySelectorAll('label.inline')].find(l => l.textContent.startsWith('Price charts of')); if (!l || l.hidden) return -1;
							const r = document.createRange(); r.selectNodeContents(l.firstChild); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; })()`, &lines)))
				}
			}
			if folds.ClientW == 0 || folds.ScrollW > folds.ClientW+1 {
				t.Errorf("walk-forward folds table at 1440 px: %d px of content in a %d px frame (cut off or scrolled)", folds.ScrollW, folds.ClientW)
			}
			if lines < 0 || lines > 1.5 {
				t.Errorf(`"Price charts of" at 1440 px takes %.1f lines (or is missing: -1), want one`, lines)
			}

			// Dark theme: every status badge (COMPLETED among them) reads at 4.5:1 or better.
			var badges []struct {
				Text, Colour, Background string
			}
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`localStorage.setItem('backtestd.display', JSON.stringify({theme: 'dark', updown: 'green-up'}))`, nil),
				chromedp.Navigate(srv.url+"/ui/runs"),
				waitJS(`document.documentElement.dataset.theme === 'dark' && document.querySelector('#task-list .status') !== null`, 30*time.Second),
				chromedp.Evaluate(`(() => { const seen = new Set(), out = [];
					for (const e of document.querySelectorAll('.status')) { const cs = getComputedStyle(e); const k = e.className + cs.color + cs.backgroundColor;
						if (seen.has(k)) continue; seen.add(k); out.push({Text: e.textContent, Colour: cs.color, Background: cs.backgroundColor}); }
					return out; })()`, &badges),
			))
			completed := false
			for _, b := range badges {
				completed = completed || strings.EqualFold(b.Text, "completed")
				fg, bg := cssRGB(t, b.Colour), cssRGB(t, b.Background)
				if c := contrast(fg, bg); c < 4.5 {
					t.Errorf("dark theme: badge %q, %s on %s, contrast %.2f:1, want at least 4.5:1", b.Text, b.Colour, b.Background, c)
				}
			}
			if !completed {
				t.Errorf("no COMPLETED badge among %v", badges)
			}
			screenshot(t, ctx, shots, "fit-runs-dark-1440")
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

// cssRGB reads a computed colour, rgb(r, g, b) or rgba(r, g, b, a) with a = 1.
func cssRGB(t *testing.T, s string) [3]float64 {
	t.Helper()
	var c [3]float64
	var a float64 = 1
	if strings.HasPrefix(s, "rgba(") {
		if _, err := fmt.Sscanf(s, "rgba(%g, %g, %g, %g)", &c[0], &c[1], &c[2], &a); err != nil {
			t.Fatalf("colour %q: %v", s, err)
		}
	} else if _, err := fmt.Sscanf(s, "rgb(%g, %g, %g)", &c[0], &c[1], &c[2]); err != nil {
		t.Fatalf("colour %q: %v", s, err)
	}
	if a < 1 {
		t.Fatalf("colour %q is see-through: its contrast depends on what lies under it", s)
	}
	return c
}

// contrast is WCAG 2's contrast ratio of two sRGB colours (0 to 255 a channel).
func contrast(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			v /= 255
			if v <= 0.04045 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	la, lb := lum(a), lum(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func TestContrast(t *testing.T) {
	for _, tt := range []struct {
		a, b [3]float64
		want float64
	}{
		{[3]float64{0, 0, 0}, [3]float64{255, 255, 255}, 21},
		{[3]float64{255, 255, 255}, [3]float64{255, 255, 255}, 1},
		{[3]float64{0x76, 0x76, 0x76}, [3]float64{255, 255, 255}, 4.54},
	} {
		if got := contrast(tt.a, tt.b); math.Abs(got-tt.want) > 0.01 {
			t.Errorf("contrast(%v, %v) = %.3f, want %.2f", tt.a, tt.b, got, tt.want)
		}
	}
}
