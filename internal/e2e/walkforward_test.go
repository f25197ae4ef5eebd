package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// wfResult is GET /api/studies/{id}/walk-forward as the page reads it.
type wfResult struct {
	Status       string   `json:"status"`
	AnnualReturn *float64 `json:"annual_return"`
	Efficiency   *float64 `json:"efficiency"`
	Folds        []struct {
		Fold           int      `json:"fold"`
		Status         string   `json:"status"`
		ISAnnualReturn *float64 `json:"is_annual_return"`
		OOSTotalReturn *float64 `json:"oos_total_return"`
		Efficiency     *float64 `json:"efficiency"`
	} `json:"folds"`
}

// TestWalkForwardVerdictInBrowser: a walk-forward study whose winners trade one share (their
// returns are near zero) gets no efficiency from the API and no verdict on the page, which
// says why; a study trading a real size shows the API's efficiency and verdict. The cards and
// the fold table read as the API's figures formatted in Go, at 1440 and 390 px.
func TestWalkForwardVerdictInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct{ ID string }
	must(t, postJSON(srv.url+"/api/strategies", map[string]string{"name": "Walk-forward verdict", "code": strategyCode}, &strat))
	var syms []struct {
		Symbol string `json:"symbol"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/symbols", &syms))
	if len(syms) == 0 {
		t.Fatal("no sample symbol")
	}
	submit := func(size int) string {
		var st struct {
			ID string `json:"id"`
		}
		must(t, postJSON(srv.url+"/api/studies", map[string]any{"strategy_id": strat.ID, "symbol": syms[0].Symbol,
			"start_date": "2016-01-01", "end_date": "2019-12-31", "objective": "total_return",
			"space":        map[string]any{"fast": []int{5, 10}, "slow": []int{20, 40}, "size": []int{size}},
			"walk_forward": map[string]any{"train": "1y", "test": "1y"}}, &st))
		return st.ID
	}
	tiny, sized := submit(1), submit(100)
	wf := map[string]wfResult{}
	deadline := time.Now().Add(3 * time.Minute)
	for _, id := range []string{tiny, sized} {
		for {
			var w wfResult
			must(t, getJSON(srv.url+"/api/studies/"+id+"/walk-forward", &w))
			if w.Status == "completed" {
				wf[id] = w
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("study %s is %s after 3 minutes", id, w.Status)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	// The API: no efficiency unless the winners made at least 1% a year in sample.
	for id, w := range wf {
		var sum float64
		for _, f := range w.Folds {
			sum += deref0(f.ISAnnualReturn)
			if f.Efficiency != nil && deref0(f.ISAnnualReturn) < 0.01 {
				t.Errorf("%s fold %d: efficiency %v over an in-sample annual return of %v", id, f.Fold, *f.Efficiency, deref0(f.ISAnnualReturn))
			}
		}
		if mean := sum / float64(len(w.Folds)); w.Efficiency != nil && mean < 0.01 {
			t.Errorf("%s: efficiency %v over a mean in-sample annual return of %v", id, *w.Efficiency, mean)
		}
	}
	if wf[tiny].Efficiency != nil {
		t.Errorf("one share a trade: efficiency %v, want none", *wf[tiny].Efficiency)
	}

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 2*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			for _, id := range []string{tiny, sized} {
				w := wf[id]
				var value, verdict, oos string
				var folds [][]string
				must(t, chromedp.Run(ctx,
					chromedp.Navigate(srv.url+"/ui/studies/"+id),
					waitJS(`document.querySelector('#wf-cards [data-key="efficiency"] .value') !== null && document.querySelectorAll('#wf-folds tbody tr').length > 0`, 30*time.Second),
					chromedp.Text(`#wf-cards [data-key="efficiency"] .value`, &value),
					chromedp.Text(`#wf-cards [data-key="efficiency"] .verdict`, &verdict),
					chromedp.Text(`#wf-cards [data-key="oos_annual_return"] .value`, &oos),
					chromedp.Evaluate(`[...document.querySelectorAll('#wf-folds tbody tr')].map(r => [...r.cells].map(c => c.textContent))`, &folds),
				))
				if w.Efficiency == nil {
					if value != "—" || !strings.HasPrefix(verdict, "No verdict") {
						t.Errorf("%s without an efficiency reads %q, %q; want — and no verdict", id, value, verdict)
					}
				} else if want := fmtFixed(*w.Efficiency, 2); value != want || strings.HasPrefix(verdict, "No verdict") {
					t.Errorf("%s efficiency reads %q (%q), the API's %v is %q", id, value, verdict, *w.Efficiency, want)
				}
				if want := readAs("frac", w.AnnualReturn); oos != want {
					t.Errorf("%s out-of-sample annual return reads %q, the API's is %q", id, oos, want)
				}
				if len(folds) != len(w.Folds) {
					t.Fatalf("%s: %d fold rows, the API %d folds", id, len(folds), len(w.Folds))
				}
				for i, f := range w.Folds {
					row := folds[i]
					if got, want := row[len(row)-1], readAs("ratio", f.Efficiency); got != want {
						t.Errorf("%s fold %d efficiency reads %q, want %q", id, f.Fold, got, want)
					}
					if got, want := row[6], readAs("frac", f.OOSTotalReturn); got != want {
						t.Errorf("%s fold %d OOS return reads %q, want %q", id, f.Fold, got, want)
					}
				}
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

func deref0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
