package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// peekCode is a crossover that also reads the next bar's close: a look-ahead check flags it.
const peekCode = `/**
 * Crossover that peeks at the next close.
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 */
class Peek extends Strategy {
  static params = { fast: 5, slow: 20, size: 10 };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow));
    this.ahead = ind.Compute(this.data.close, c => c.map((_, i) => c[Math.min(i + 1, c.length - 1)]));
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0 && this.ahead[0] > this.data.close[0]) this.buy({ size: this.p.size });
    else if (this.position.size > 0 && (this.cross[0] < 0 || this.ahead[0] < this.data.close[0] * 0.97)) this.close();
  }
}
`

// sectionProblems is what a person would see wrong in the element(s) sel: text reading
// undefined, NaN or null; a page wider than the screen; an element that sticks out of the
// screen or whose content spills out of it (scrollWidth beyond clientWidth) or is clipped;
// a chart drawn with no size. A table in a .table-wrap may scroll sideways: wide tables are
// listed apart (scrolls) so the test can say which must fit.
// vw is the screen's width as the test set it: under mobile emulation window.innerWidth grows
// with a page wider than the screen, so a check against it could not fail.
const sectionProblemsJS = `((sel, vw) => {
  const out = {bad: [], scrolls: [], charts: 0};
  const roots = [...document.querySelectorAll(sel)];
  if (!roots.length) { out.bad.push('nothing matches ' + sel); return out; }
  if (document.documentElement.scrollWidth > vw + 1) out.bad.push('page is ' + document.documentElement.scrollWidth + ' px wide');
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
  for (const root of roots) {
    const text = root.innerText;
    const m = text.match(/\b(undefined|NaN|null|Infinity)\b/);
    if (m) out.bad.push(name(root) + ' shows "' + m[0] + '": …' + text.slice(Math.max(0, m.index - 40), m.index + 20).replace(/\s+/g, ' ') + '…');
    for (const e of [root, ...root.querySelectorAll('*')]) {
      if (e.closest('.chart') && !e.classList.contains('chart')) continue; // ECharts' own layers
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const wrap = e.closest('.table-wrap');
      if (wrap && wrap !== e) continue;
      const cs = getComputedStyle(e);
      if (e.classList.contains('table-wrap')) {
        if (e.scrollWidth > e.clientWidth + 1) out.scrolls.push(name(e.querySelector('table') || e) + ' ' + e.scrollWidth + '/' + e.clientWidth);
      } else if (r.right > vw + 1 || r.left < -1) {
        out.bad.push(name(e) + ' sticks out: ' + Math.round(r.left) + '…' + Math.round(r.right));
      } else if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 && cs.display !== 'inline' && !['auto', 'scroll'].includes(cs.overflowX)) {
        out.bad.push(name(e) + ' content ' + e.scrollWidth + ' px in ' + e.clientWidth + ' px (' + (cs.overflowX === 'visible' ? 'spills' : 'clipped') + ')');
      }
      if (e.classList.contains('chart')) {
        const c = e.querySelector('canvas');
        if (!c || c.width === 0 || c.height === 0 || r.width < 100 || r.height < 100) out.bad.push(name(e.closest('.chart-panel') || e) + ' chart drawn ' + Math.round(r.width) + '×' + Math.round(r.height));
        else out.charts++;
      }
    }
  }
  return out;
})`

type sectionReport struct {
	Bad     []string `json:"bad"`
	Scrolls []string `json:"scrolls"`
	Charts  int      `json:"charts"`
}

// sectionShot writes the element sel to <repo>/screenshots/name.png for review.
func sectionShot(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(dir, 0o755))
	var buf []byte
	// A list re-rendered a moment ago (after a pin) is scrolled to and given time to settle.
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector('header.top').style.visibility = 'hidden'`, nil),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: 'center'})`, sel), nil),
		chromedp.Sleep(400*time.Millisecond),
		chromedp.Screenshot(sel, &buf, chromedp.NodeVisible, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('header.top').style.visibility = ''`, nil),
	)
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	must(t, os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644))
}

// TestNewSectionsInBrowser opens the sections added lately at 1440 and 390 px, as a person
// reads them: the Monte Carlo view (table, losses, fan and histograms) against the API's
// answer, backtrader's analyzers, the Risk statistics, provenance and a reproduction's verdict,
// the trade-level diff of two runs, pinning a run and a study, a bayes study's convergence
// chart and Pareto ranks, and the look-ahead badge and check. Each must show its figures
// with no "undefined"/"NaN"/"null", fit the screen, and draw its charts; screenshots of each
// go to <repo>/screenshots.
func TestNewSectionsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var syms []struct {
		Symbol string `json:"symbol"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/symbols", &syms))
	if len(syms) == 0 {
		t.Fatal("no sample symbols")
	}
	symbol := syms[0].Symbol
	var cross, peek struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Sections crossover", "code": strategyCode}, &cross))
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Peeking crossover", "code": peekCode}, &peek))
	submit := func(strategy string, fast int) string {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strategy, "symbol": symbol, "strategy_params": map[string]any{"fast": fast, "slow": 20, "size": 10},
			"start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
		return task.TaskID
	}
	runA, runB, runPeek := submit(cross.ID, 5), submit(cross.ID, 8), submit(peek.ID, 5)
	// A run that never trades: 60 bars of average on two months of bars. Its page shows the
	// empty states (no trades; the Monte Carlo view on the returns per bar).
	var none struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": cross.ID, "symbol": symbol, "strategy_params": map[string]any{"fast": 50, "slow": 60},
		"start_date": "2019-11-01", "end_date": "2019-12-31"}, &none))
	runNone := none.TaskID
	for _, id := range []string{runA, runB, runPeek, runNone} {
		waitTask(t, srv.url, id)
	}
	var study struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/studies", map[string]any{"strategy_id": peek.ID, "symbol": symbol, "name": "Bayes search",
		"start_date": "2015-01-01", "end_date": "2019-12-31", "objective": "sharpe_ratio", "method": "bayes", "samples": 24, "seed": 3,
		"space": map[string]any{"fast": map[string]any{"start": 2, "stop": 30, "step": 1}, "slow": map[string]any{"start": 20, "stop": 120, "step": 5}}}, &study))
	var check struct {
		Lookahead bool `json:"lookahead"`
	}
	must(t, postJSON(srv.url+"/api/strategies/"+peek.ID+"/versions/1/lookahead", map[string]any{"symbol": symbol, "start_date": "2015-01-01", "end_date": "2019-12-31"}, &check))
	if !check.Lookahead {
		t.Fatal("the look-ahead check did not flag the peeking strategy")
	}

	// What the API answers, to compare the page with.
	var mc struct {
		Runs     int `json:"runs"`
		Original struct {
			FinalValue float64 `json:"final_value"`
		} `json:"original"`
		FinalValue struct {
			P5, P50, P95 float64
		} `json:"final_value"`
		CAGR *struct {
			P50 float64
		} `json:"cagr"`
		MaxDD struct {
			P50 float64
		} `json:"max_drawdown_pct"`
		Losses []struct {
			Loss, Probability float64
		} `json:"loss_probability"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+runA+"/montecarlo?method=shuffle&seed=1", &mc))
	var an struct {
		Returns struct {
			Rtot, Rnorm *float64
		} `json:"returns"`
		VWR *float64 `json:"vwr"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+runA+"/analyzers", &an))
	var stats struct {
		Groups []struct {
			Name    string `json:"name"`
			Metrics []struct {
				Key   string   `json:"key"`
				Value *float64 `json:"value"`
			} `json:"metrics"`
		} `json:"groups"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+runA+"/statistics", &stats))
	risk := map[string]*float64{}
	for _, g := range stats.Groups {
		if strings.EqualFold(g.Name, "risk") {
			for _, m := range g.Metrics {
				risk[m.Key] = m.Value
			}
		}
	}
	if len(risk) == 0 {
		t.Fatalf("the statistics have no Risk group: %+v", stats)
	}
	var diff struct {
		Causes  []string `json:"causes"`
		Summary map[string]struct {
			A, B, Delta *float64
		} `json:"summary"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+runA+"/diff?against="+runB, &diff))
	var prov struct {
		Provenance struct {
			CodeSHA256 string `json:"code_sha256"`
			Data       []struct {
				Symbol string `json:"symbol"`
				SHA256 string `json:"sha256"`
			} `json:"data"`
		} `json:"provenance"`
	}
	must(t, getJSON(srv.url+"/api/backtests/"+runA, &prov))
	// The study runs while the results pages are read; its page is read once it has finished.
	studyDone := func() {
		t.Helper()
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
			var st struct{ Status string }
			must(t, getJSON(srv.url+"/api/studies/"+study.ID, &st))
			if st.Status == "completed" {
				return
			}
			if st.Status == "failed" || st.Status == "cancelled" || time.Now().After(deadline) {
				t.Fatalf("study %s %s", study.ID, st.Status)
			}
		}
	}

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 6*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			// check reads the section sel and screenshots it; tables named in mayScroll may
			// scroll sideways inside their frame at this width, no other may.
			check := func(what, sel, shot string, minCharts int, mayScroll ...string) {
				t.Helper()
				var r sectionReport
				must(t, chromedp.Run(ctx, chromedp.Evaluate(sectionProblemsJS+fmt.Sprintf("(%q, %d)", sel, size.w), &r)))
				for _, b := range r.Bad {
					t.Errorf("%s at %d px: %s", what, size.w, b)
				}
				for _, s := range r.Scrolls {
					allowed := false
					for _, m := range mayScroll {
						allowed = allowed || strings.Contains(s, m)
					}
					if !allowed {
						t.Errorf("%s at %d px: table scrolls sideways: %s", what, size.w, s)
					}
				}
				if r.Charts < minCharts {
					t.Errorf("%s at %d px: %d charts drawn, want %d", what, size.w, r.Charts, minCharts)
				}
				if bad := hyphenSigns(t, ctx); len(bad) > 0 {
					t.Errorf("%s: numbers with a hyphen for minus: %q", what, bad)
				}
				sectionShot(t, ctx, fmt.Sprintf("%s-%d", shot, size.w), sel)
			}
			narrow := size.w < 600

			// ---- a run's results: analyzers, Risk statistics, Monte Carlo, provenance ----
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/results/"+runA),
				waitJS(`document.querySelector('#analyzer-figures') && document.querySelector('#analyzer-note') && document.querySelector('#statistics .stat-groups') && document.querySelector('#provenance-data')`, 40*time.Second),
				waitJS(`document.querySelectorAll('#montecarlo-charts .chart-panel[data-ready="true"]').length === 3 && document.querySelector('#montecarlo-table')`, 60*time.Second),
			))
			var page struct {
				MC       map[string][]string `json:"mc"`
				Losses   []string            `json:"losses"`
				Note     string              `json:"note"`
				Figures  map[string]string   `json:"figures"`
				Risk     map[string]string   `json:"risk"`
				RiskHead string              `json:"riskHead"`
			}
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`({
				mc: Object.fromEntries([...document.querySelectorAll('#montecarlo-table tbody tr')].map(r => [r.dataset.key, [...r.querySelectorAll('td')].map(c => c.textContent)])),
				losses: [...document.querySelectorAll('#montecarlo-losses li')].map(l => l.textContent),
				note: document.querySelector('#montecarlo-note').textContent,
				figures: Object.fromEntries([...document.querySelectorAll('#analyzer-figures li')].map(l => [l.dataset.key, l.querySelector('.value').textContent])),
				risk: Object.fromEntries([...document.querySelectorAll('#statistics section[aria-label="Risk statistics"] li')].map(l => [l.dataset.key, l.querySelector('.value').textContent])),
				riskHead: document.querySelector('#statistics section[aria-label="Risk statistics"] h3')?.textContent ?? '',
			})`, &page)))
			if fv := page.MC["final_value"]; len(fv) != 6 || fv[0] != fmtFixed(mc.Original.FinalValue, 2) || fv[1] != fmtFixed(mc.FinalValue.P5, 2) || fv[3] != fmtFixed(mc.FinalValue.P50, 2) || fv[5] != fmtFixed(mc.FinalValue.P95, 2) {
				t.Errorf("Monte Carlo final value row %q; the API's own %v and 5/50/95%%: %v", fv, mc.Original.FinalValue, mc.FinalValue)
			}
			if md := page.MC["max_drawdown_pct"]; len(md) != 6 || md[3] != fmtPctIn(mc.MaxDD.P50) {
				t.Errorf("Monte Carlo max drawdown row %q; the API's median %v%%", md, mc.MaxDD.P50)
			}
			if cg := page.MC["cagr"]; mc.CAGR != nil && (len(cg) != 6 || cg[3] != fmtPctOf(mc.CAGR.P50)) {
				t.Errorf("Monte Carlo CAGR row %q; the API's median %v", cg, mc.CAGR.P50)
			}
			if len(page.Losses) != len(mc.Losses) || len(mc.Losses) == 0 || !strings.Contains(page.Losses[0], fmtPctOf(mc.Losses[0].Probability)) {
				t.Errorf("loss lines %q; the API's %+v", page.Losses, mc.Losses)
			}
			// A shuffle's final values are all one: the note says why the histogram is one bar.
			if !strings.Contains(page.Note, fmtFixed(float64(mc.Runs), 0)+" runs") || !strings.Contains(page.Note, "same final value") {
				t.Errorf("Monte Carlo note %q does not say the API's %d runs and why a shuffle ends at one value", page.Note, mc.Runs)
			}
			for key, want := range map[string]string{"returns_rtot": readAs("frac", an.Returns.Rtot), "returns_rnorm": readAs("frac", an.Returns.Rnorm), "vwr": fmtFixedPtr(an.VWR, 3)} {
				if page.Figures[key] != want {
					t.Errorf("analyzer %s reads %q, the API's is %q", key, page.Figures[key], want)
				}
			}
			if page.RiskHead != "Risk" || len(page.Risk) != len(risk) {
				t.Errorf("Risk group %q shows %d figures, the API has %d", page.RiskHead, len(page.Risk), len(risk))
			}
			for key, v := range risk {
				if unit, ok := statUnits[key]; ok && page.Risk[key] != readAs(unit, v) {
					t.Errorf("Risk %s reads %q, the API's %v reads %q", key, page.Risk[key], deref(v), readAs(unit, v))
				}
			}
			// The provenance names the code's and each series' hash as the API has them.
			var hashes map[string]string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#provenance dd[data-key]')].map(d => [d.dataset.key, d.textContent]))`, &hashes)))
			if hashes["code_sha256"] != prov.Provenance.CodeSHA256 || len(prov.Provenance.Data) == 0 {
				t.Errorf("provenance shows %v; the API's code hash %s", hashes, prov.Provenance.CodeSHA256)
			}
			for _, f := range prov.Provenance.Data {
				if hashes["data_sha256_"+f.Symbol] != f.SHA256 {
					t.Errorf("provenance shows %s's data hash %q, the API's %q", f.Symbol, hashes["data_sha256_"+f.Symbol], f.SHA256)
				}
			}
			// These tables fit a phone: none of them may scroll sideways.
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-analyzers').scrollIntoView()`, nil)))
			check("the analyzers", `#analyzers`, "section-analyzers", 0)
			check("the Risk statistics", `#statistics section[aria-label="Risk statistics"]`, "section-risk", 0)
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#montecarlo').scrollIntoView()`, nil)))
			check("the Monte Carlo section", `#montecarlo`, "section-montecarlo", 3)
			docShot(t, ctx, fmt.Sprintf("results-montecarlo-%d", size.w), `#montecarlo`)
			check("the provenance", `#provenance`, "section-provenance", 0)

			// ---- the empty states of a run that never traded ----
			var noneState struct {
				Method string `json:"method"`
				Trades string `json:"trades"`
				Hidden bool   `json:"charts"`
			}
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/results/"+runNone),
				waitJS(`document.querySelector('#analyzers .analyzers, #analyzers .empty') && document.querySelector('#trades-panel') && document.querySelector('#montecarlo-empty')`, 60*time.Second),
				chromedp.Evaluate(`({method: document.querySelector('#montecarlo select[name="method"]').value, trades: document.querySelector('#trades-panel').innerText, charts: document.querySelector('#montecarlo-charts').hidden})`, &noneState),
			))
			if noneState.Method != "block" || !strings.Contains(noneState.Trades, "no trades") || !noneState.Hidden {
				t.Errorf("a run without trades: Monte Carlo method %q (want block), charts hidden %v, trades panel %q", noneState.Method, noneState.Hidden, noneState.Trades)
			}
			check("the Monte Carlo section without trades", `#montecarlo`, "section-montecarlo-notrades", 0)
			// Simulated all the same: flat paths, the figures at the capital (five digits) still fit.
			must(t, chromedp.Run(ctx,
				// submitted as Enter or a click would (the sticky header can lie over a button scrolled to)
				chromedp.Evaluate(`document.querySelector('#montecarlo form').requestSubmit()`, nil),
				waitJS(`document.querySelectorAll('#montecarlo-charts .chart-panel[data-ready="true"]').length === 3 && document.querySelector('#montecarlo-table')`, 60*time.Second),
			))
			check("the Monte Carlo section without trades, simulated", `#montecarlo`, "section-montecarlo-notrades-simulated", 3)
			check("the analyzers without trades", `#analyzers`, "section-analyzers-notrades", 0)
			check("the trades without trades", `#trades-panel`, "section-trades-notrades", 0)
			must(t, chromedp.Run(ctx, chromedp.Navigate(srv.url+"/ui/results/"+runA), waitJS(`document.querySelector('[data-reproduce]') !== null`, 30*time.Second)))

			// ---- reproduce: the verdict ----
			var outcome string
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
				chromedp.Click(`[data-reproduce]`, chromedp.ByQuery),
				waitJS(`(document.querySelector('#reproduction')?.dataset.outcome ?? 'pending') !== 'pending'`, 90*time.Second),
				chromedp.Evaluate(`document.querySelector('#reproduction').dataset.outcome`, &outcome),
			))
			if outcome != "identical" {
				t.Errorf("reproduction of %s: %q, want identical", runA, outcome)
			}
			check("the reproduction verdict", `#reproduction`, "section-reproduce", 0)
			check("the results page's head", `main .page-head`, "section-result-head", 0)

			// ---- the trade-level diff ----
			var causes []string
			var summary map[string][]string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/diff?a="+runA+"&b="+runB),
				waitJS(`document.querySelector('#diff-verdict') && document.querySelector('#diff .chart-panel')?.dataset.ready === 'true'`, 30*time.Second),
				chromedp.Evaluate(`[...document.querySelectorAll('#diff-causes li')].map(li => li.textContent)`, &causes),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#diff-summary tbody tr')].map(r => [r.dataset.key, [...r.cells].map(c => c.textContent)]))`, &summary),
			))
			if strings.Join(causes, "\n") != strings.Join(diff.Causes, "\n") || len(summary) != len(diff.Summary) {
				t.Errorf("diff shows causes %q and %d summary rows; the API's %q and %d", causes, len(summary), diff.Causes, len(diff.Summary))
			}
			// The summary reads in the summary cards' units: a return in percent, not as a fraction.
			for key, row := range summary {
				want, unit := diff.Summary[key], summaryUnits[key]
				if unit == "" || len(row) != 4 {
					continue
				}
				if row[1] != readAs(unit, want.A) || row[2] != readAs(unit, want.B) || row[3] != readAs(unit, want.Delta) {
					t.Errorf("diff summary %s reads %q; the API's %v, %v, %v read %s, %s, %s", key, row, deref(want.A), deref(want.B), deref(want.Delta), readAs(unit, want.A), readAs(unit, want.B), readAs(unit, want.Delta))
				}
			}
			if row := summary["total_return"]; len(row) != 4 || row[0] != "Total Return" {
				t.Errorf("diff summary's total return row %q", row)
			}
			diffScroll := []string{}
			if narrow {
				diffScroll = []string{"diff-trades"}
			}
			check("the diff", `main`, "section-diff", 1, diffScroll...)
			if !narrow {
				docShot(t, ctx, "diff-1440", "")
			}

			// ---- pin and unpin a run in the list ----
			pinSel := fmt.Sprintf(`button[aria-label="Pin %s"], button[aria-label="Unpin %s"]`, runA, runA)
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/runs"),
				waitJS(`document.querySelector('`+pinSel+`') !== null`, 20*time.Second),
				chromedp.Click(pinSel, chromedp.ByQuery),
				waitJS(`document.querySelector('`+pinSel+`')?.getAttribute('aria-pressed') === 'true'`, 10*time.Second),
			))
			var task struct {
				PinnedAt *string `json:"pinned_at"`
			}
			must(t, getJSON(srv.url+"/api/backtests/"+runA, &task))
			var flagged bool
			must(t, chromedp.Run(ctx, waitJS(`document.querySelector('li.task[data-task="`+runA+`"] [data-pinned="true"]') !== null`, 10*time.Second), chromedp.Evaluate(`document.querySelectorAll('li.task [data-pinned="true"]').length === 1`, &flagged)))
			if task.PinnedAt == nil || !flagged {
				t.Errorf("the page shows %s pinned (one pinned flag: %v); the API's pinned_at %v", runA, flagged, task.PinnedAt)
			}
			check("the pinned run in the list", `li.task[data-task="`+runA+`"]`, "section-runs-pinned", 0)
			// The peeking run's row carries the look-ahead badge and says what it means in
			// words (a phone has no hover for the badge's title); a clean run's has neither.
			var clean bool
			must(t, chromedp.Run(ctx,
				waitJS(`document.querySelector('li.task[data-task="`+runPeek+`"] .task-main [data-lookahead="true"]') !== null && /reads bars after the one it decides on/.test(document.querySelector('li.task[data-task="`+runPeek+`"] [data-lookahead-note]')?.innerText ?? '')`, 10*time.Second),
				chromedp.Evaluate(`document.querySelector('li.task[data-task="`+runA+`"] [data-lookahead], li.task[data-task="`+runA+`"] [data-lookahead-note]') === null`, &clean),
			))
			if !clean {
				t.Errorf("the clean run %s shows a look-ahead flag in the list", runA)
			}
			check("the flagged run in the list", `li.task[data-task="`+runPeek+`"]`, "section-runs-lookahead", 0)
			must(t, chromedp.Run(ctx,
				chromedp.Click(pinSel, chromedp.ByQuery),
				waitJS(`document.querySelector('`+pinSel+`')?.getAttribute('aria-pressed') === 'false'`, 10*time.Second),
			))
			task.PinnedAt = nil
			must(t, getJSON(srv.url+"/api/backtests/"+runA, &task))
			if task.PinnedAt != nil {
				t.Errorf("unpinned on the page, %s still pinned at %s", runA, *task.PinnedAt)
			}

			// ---- look-ahead: the badge on the run and the check's findings ----
			var findings int
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/results/"+runPeek),
				waitJS(`document.querySelector('.page-head [data-lookahead="true"]') !== null && document.querySelector('#lookahead-note') && document.querySelector('[data-lookahead-check]')`, 30*time.Second),
				chromedp.Click(`[data-lookahead-check]`, chromedp.ByQuery),
				waitJS(`document.querySelector('#lookahead section, #lookahead .error-box') !== null`, 90*time.Second),
				chromedp.Evaluate(`document.querySelectorAll('#lookahead [data-finding]').length`, &findings),
			))
			if findings == 0 {
				t.Error("the look-ahead check of the peeking strategy lists no finding")
			}
			check("the look-ahead check", `#lookahead`, "section-lookahead", 0)
			check("the flagged run's head", `main .page-head`, "section-lookahead-head", 0)
			if narrow {
				must(t, chromedp.Run(ctx, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil)))
				docShot(t, ctx, "results-lookahead-390", "")
			}

			// ---- the bayes study: convergence, Pareto ranks, look-ahead, pin ----
			studyDone()
			var conv struct {
				Values []*float64 `json:"values"`
				Best   []*float64 `json:"best"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+study.ID+"/convergence", &conv))
			var board struct {
				Trials []struct {
					Idx    int  `json:"idx"`
					Pareto *int `json:"pareto_rank"`
				} `json:"trials"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+study.ID+"/results?limit=20", &board))
			var shown struct {
				Points int            `json:"points"`
				Note   string         `json:"note"`
				Pareto map[string]int `json:"pareto"`
				PNote  string         `json:"pnote"`
			}
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/studies/"+study.ID),
				waitJS(`document.querySelector('#study-convergence .chart-panel')?.dataset.ready === 'true' && document.querySelector('#study-board-table') && document.querySelector('.page-head [data-lookahead="true"]') && document.querySelector('#lookahead-note')`, 40*time.Second),
				chromedp.Evaluate(`({points: Number(document.querySelector('#study-convergence .chart-panel').dataset.points),
					note: document.querySelector('#study-convergence-note').textContent,
					pareto: Object.fromEntries([...document.querySelectorAll('#study-board-table tbody tr')].map(r => [r.dataset.idx, Number(r.dataset.pareto ?? 0)])),
					pnote: document.querySelector('#study-pareto-note')?.textContent ?? ''})`, &shown),
			))
			finished := 0
			for _, v := range conv.Values {
				if v != nil {
					finished++
				}
			}
			if finished == 0 || shown.Points < finished || !strings.Contains(shown.Note, "of "+fmtFixed(float64(len(conv.Values)), 0)) {
				t.Errorf("convergence chart of %d points, note %q; the API has %d finished of %d trials", shown.Points, shown.Note, finished, len(conv.Values))
			}
			front := 0
			for _, tr := range board.Trials {
				want := 0
				if tr.Pareto != nil {
					want = *tr.Pareto
				}
				if want == 1 {
					front++
				}
				if got := shown.Pareto[fmt.Sprint(tr.Idx)]; got != want {
					t.Errorf("combination %d shows Pareto rank %d, the API's %d", tr.Idx, got, want)
				}
			}
			if front == 0 || !strings.Contains(shown.PNote, "Pareto front") {
				t.Errorf("Pareto front of %d rows, note %q", front, shown.PNote)
			}
			boardScroll := []string{}
			if narrow {
				boardScroll = []string{"study-board-table"}
			}
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-board').scrollIntoView()`, nil)))
			check("the leaderboard", `#study-board`, "section-study-board", 0, boardScroll...)
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-conv').scrollIntoView()`, nil)))
			check("the convergence chart", `#study-convergence`, "section-study-convergence", 1)
			if !narrow {
				docShot(t, ctx, "study-convergence-1440", `#study-convergence`)
			}
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
				chromedp.Click(`#study-pin`, chromedp.ByQuery),
				waitJS(`document.querySelector('#study-pin')?.getAttribute('aria-pressed') === 'true'`, 10*time.Second),
			))
			var st struct {
				PinnedAt *string `json:"pinned_at"`
			}
			must(t, getJSON(srv.url+"/api/studies/"+study.ID, &st))
			if st.PinnedAt == nil {
				t.Error("the study shows pinned; the API has no pinned_at")
			}
			check("the study's head", `main .page-head`, "section-study-head", 0)
			check("the study's look-ahead note", `#lookahead-note`, "section-study-lookahead", 0)
			must(t, chromedp.Run(ctx,
				chromedp.Click(`#study-pin`, chromedp.ByQuery),
				waitJS(`document.querySelector('#study-pin')?.getAttribute('aria-pressed') === 'false'`, 10*time.Second),
			))
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

func fmtFixedPtr(v *float64, digits int) string {
	if v == nil {
		return "—"
	}
	return fmtFixed(*v, digits)
}
