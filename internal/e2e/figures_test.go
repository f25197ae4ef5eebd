package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// How each figure of the summary and the statistics record reads, by the API's units: a
// fraction shown in percent, a value already in percent, money, a ratio, a count, days.
var (
	summaryUnits = map[string]string{
		"initial_cash": "money", "final_value": "money", "total_return": "frac", "annual_return": "frac",
		"sharpe_ratio": "ratio", "max_drawdown_pct": "pct", "max_drawdown": "money", "total_trades": "int",
		"win_rate": "pct", "profit_factor": "ratio", "avg_win": "money", "avg_loss": "money",
	}
	statUnits = map[string]string{
		"total_return": "frac", "cagr": "frac", "sharpe_ratio": "ratio", "annual_volatility": "frac", "sqn": "ratio",
		"r_squared": "ratio", "max_drawdown": "pct", "max_drawdown_duration": "days", "win_rate": "pct",
		"avg_trade": "money", "avg_win": "money", "avg_loss": "money", "best_trade": "money", "worst_trade": "money",
		"avg_trade_duration": "days1", "total_trades": "int", "win_month_pct": "pct", "avg_win_month": "frac",
		"avg_loss_month": "frac", "best_month": "frac", "worst_month": "frac", "win_year_pct": "pct",
		"best_year": "frac", "worst_year": "frac", "benchmark_return": "frac", "alpha": "frac", "beta": "ratio",
		"correlation": "ratio", "tracking_error": "frac", "information_ratio": "ratio",
		"sortino_ratio": "ratio", "calmar_ratio": "ratio", "omega_ratio": "ratio", "value_at_risk": "frac",
		"expected_shortfall": "frac", "tail_ratio": "ratio", "ulcer_index": "ratio", "kelly_criterion": "frac",
		"skew": "ratio", "kurtosis": "ratio", "probabilistic_sharpe_ratio": "frac", "max_consecutive_wins": "int",
		"max_consecutive_losses": "int", "recovery_factor": "ratio",
	}
)

// readAs is a figure as a person reads it on the page, in the given unit.
func readAs(unit string, v *float64) string {
	if v == nil {
		return "—"
	}
	switch unit {
	case "frac":
		return fmtPctOf(*v)
	case "pct":
		return fmtPctIn(*v)
	case "int":
		return fmtFixed(*v, 0)
	case "days":
		if fmtFixed(*v, 0) == "1" {
			return "1 day"
		}
		return fmtFixed(*v, 0) + " days"
	case "days1":
		return fmtFixed(*v, 1) + " days"
	default: // money, ratio
		return fmtFixed(*v, 2)
	}
}

// hyphenSign finds numbers written with "-" as their sign in the page's text: the page
// writes "−" (dates like 2015-01-02 are not matched: a digit precedes their hyphens).
var hyphenSign = regexp.MustCompile(`(^|[^\w.])-\d[\d,.]*%?`)

func hyphenSigns(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var text string
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('main') ? document.querySelector('main').innerText : document.body.innerText`, &text)))
	return hyphenSign.FindAllString(text, -1)
}

// TestFiguresInBrowser reads the results page, the runs list, the data page and the run form
// as a person does, at 1440 and 390 px: every summary card and statistic is the API's figure
// written in the page's one convention (format_test.go), no number carries a hyphen as its
// minus sign, the trade counts say what their brackets mean, the symbol list separates the
// name from the ranges, and the date fields hold ISO text whatever the browser's locale.
func TestFiguresInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Figures", "code": strategyCode}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	// A short fast average on a falling stretch: losing trades, so negative figures show.
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": 3, "slow": 12},
		"start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	var summary map[string]*float64
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/summary", &summary))
	var stats struct {
		Groups []struct {
			Name    string `json:"name"`
			Metrics []struct {
				Key   string   `json:"key"`
				Value *float64 `json:"value"`
			} `json:"metrics"`
		} `json:"groups"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/statistics", &stats))
	negative := false
	for _, g := range stats.Groups {
		for _, m := range g.Metrics {
			negative = negative || (m.Value != nil && *m.Value < 0)
		}
	}
	if !negative {
		t.Fatalf("the run has no negative statistic: the minus sign is not exercised")
	}
	ui := srv.url + "/ui"

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 3*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/results/"+task.TaskID),
				waitJS(`document.querySelectorAll('#statistics li[data-key]').length > 20`, 30*time.Second),
				waitJS(`document.querySelector('#trade-analysis table') !== null && document.querySelector('#symbols table') !== null`, 30*time.Second),
			))
			var cards, statTexts map[string]string
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#summary-cards [data-key]')].map(e => [e.dataset.key, e.querySelector('.value').textContent]))`, &cards),
				chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#statistics li[data-key]')].map(e => [e.dataset.key, e.querySelector('.value').textContent]))`, &statTexts),
			))
			for key, unit := range summaryUnits {
				if want := readAs(unit, summary[key]); cards[key] != want {
					t.Errorf("summary card %s reads %q, the API's %v is %q", key, cards[key], deref(summary[key]), want)
				}
			}
			checked := 0
			for _, g := range stats.Groups {
				for _, m := range g.Metrics {
					unit, ok := statUnits[m.Key]
					if !ok {
						t.Errorf("statistic %s has no unit in this test", m.Key)
						continue
					}
					checked++
					if want := readAs(unit, m.Value); statTexts[m.Key] != want {
						t.Errorf("statistic %s reads %q, the API's %v is %q", m.Key, statTexts[m.Key], deref(m.Value), want)
					}
				}
			}
			if checked < 24 {
				t.Errorf("only %d statistics compared", checked)
			}
			// The brackets after a count say what they count.
			var tradesRow, symbolTrades string
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(`document.querySelector('#trade-analysis tr[data-row="Trades"] td').textContent`, &tradesRow),
				chromedp.Evaluate(`document.querySelector('#symbols tbody tr td:nth-of-type(3)').textContent`, &symbolTrades),
			))
			if !regexp.MustCompile(`^[\d,]+ \([\d,]+ won\)$`).MatchString(tradesRow) {
				t.Errorf("trade analysis reads %q, want \"N (M won)\"", tradesRow)
			}
			if !regexp.MustCompile(`^[\d,]+ \([\d,]+ won, [\d,]+ lost\)$`).MatchString(symbolTrades) {
				t.Errorf("symbol breakdown trades read %q, want \"N (W won, L lost)\"", symbolTrades)
			}
			if bad := hyphenSigns(t, ctx); len(bad) > 0 {
				t.Errorf("results page writes numbers with a hyphen for minus: %q", bad)
			}

			// The runs list and the data page: the same convention.
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/runs"),
				waitJS(`document.querySelector('#task-list .task .figures') !== null`, 30*time.Second),
			))
			if bad := hyphenSigns(t, ctx); len(bad) > 0 {
				t.Errorf("runs list writes numbers with a hyphen for minus: %q", bad)
			}
			var item string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/data"),
				waitJS(`document.querySelector('#symbols .ranges') !== null`, 15*time.Second),
				chromedp.Evaluate(`document.querySelector('#symbols .symbol-list li').innerText`, &item),
			))
			if !regexp.MustCompile(`\S · \d+[mhdwM]+ · \d{4}-\d{2}-\d{2} → \d{4}-\d{2}-\d{2} · [\d,]+ bars`).MatchString(item) {
				t.Errorf("symbol list item reads %q: the name and the ranges run together", item)
			}

			// The run form's dates are ISO text, whatever the locale; an impossible date is refused.
			var dates []string
			var invalid bool
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(ui+"/runs?strategy="+strat.ID),
				chromedp.WaitVisible(`form.run-form input[name="start_date"]`),
				chromedp.Evaluate(`[...document.querySelectorAll('form.run-form input[name$="_date"]')].map(i => i.type + ' ' + i.value)`, &dates),
				typeValue(`form.run-form input[name="start_date"]`, "2015-02-30"),
				chromedp.Evaluate(`!document.querySelector('form.run-form input[name="start_date"]').checkValidity()`, &invalid),
			))
			if len(dates) != 2 {
				t.Fatalf("run form date fields: %q", dates)
			}
			for _, d := range dates {
				if !regexp.MustCompile(`^text \d{4}-\d{2}-\d{2}$`).MatchString(d) {
					t.Errorf("run form date field %q, want ISO text", d)
				}
			}
			if !invalid {
				t.Error("the run form takes 2015-02-30 as a date")
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
