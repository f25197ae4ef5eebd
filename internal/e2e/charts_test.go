package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTradeChartsInBrowser reads the results page's charts as drawn (the ECharts option each
// panel exposes), at 1440 and 390 px: every buy of the API sits below its bar and every sell
// above it, in colours other than the candles'; every closed round trip has a line from its
// entry to its exit; selecting a trade highlights it on the chart and in the table; the
// monthly heatmap names its months above the cells, away from its colour scale below; the
// drawdown axis runs from 0 to the deepest fall rounded up, never past 100%.
func TestTradeChartsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": "Trade charts", "code": strategyCode}, &strat))
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": 5, "slow": 20},
		"start_date": "2015-01-01", "end_date": "2019-12-31"}, &task))
	waitTask(t, srv.url, task.TaskID)
	var fills struct {
		Total  int `json:"total"`
		Trades []struct {
			Date string `json:"date"`
			Type string `json:"type"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?kind=executions&limit=1000", &fills))
	var trips struct {
		Trades []struct {
			Seq       int     `json:"seq"`
			EntryDate string  `json:"entry_date"`
			ExitDate  *string `json:"exit_date"`
		} `json:"trades"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/trades?kind=round_trips&limit=1000", &trips))
	buys, sells, closed := 0, 0, 0
	for _, f := range fills.Trades {
		if f.Type == "buy" {
			buys++
		} else {
			sells++
		}
	}
	for _, r := range trips.Trades {
		if r.ExitDate != nil {
			closed++
		}
	}
	var summary struct {
		MaxDrawdownPct float64 `json:"max_drawdown_pct"`
	}
	must(t, getEnvelope(srv.url+"/api/results/"+task.TaskID+"/summary", &summary))
	if buys == 0 || sells == 0 || closed == 0 || fills.Total != len(fills.Trades) {
		t.Fatalf("the run made %d buys, %d sells, %d closed round trips (%d fills in all)", buys, sells, closed, fills.Total)
	}
	shots := filepath.Join(repoRoot(t), "screenshots")
	must(t, os.MkdirAll(shots, 0o755))

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 2*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/results/"+task.TaskID),
				waitJS(`[...document.querySelectorAll('#charts .chart-panel')].length === 8 && [...document.querySelectorAll('#charts .chart-panel')].every(p => p.dataset.ready === 'true')`, 30*time.Second),
				waitJS(`document.querySelectorAll('#trades .round-trips tbody tr').length > 0`, 30*time.Second),
			))
			// The markers as drawn: where each sits against its bar, its colour, its count.
			var price struct {
				Buys, Sells, BuysBelow, SellsAbove, Lines int
				BuyColour, SellColour, Up, Down           string
			}
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
				const o = document.querySelector('[data-chart-type="candlestick"]').chartOption();
				const k = o.series.find(s => s.type === 'candlestick');
				const bar = new Map(k.data.map(r => [r[0], r]));
				const buy = o.series.find(s => s.name === '▲ Buy'), sell = o.series.find(s => s.name === '▼ Sell');
				const below = buy.data.filter(d => bar.get(d[0]) && d[1] === bar.get(d[0])[3] && buy.symbolOffset[1] > 0).length;
				const above = sell.data.filter(d => bar.get(d[0]) && d[1] === bar.get(d[0])[4] && sell.symbolOffset[1] < 0).length;
				return {Buys: buy.data.length, Sells: sell.data.length, BuysBelow: below, SellsAbove: above, Lines: (k.markLine && k.markLine.data || []).length,
					BuyColour: buy.itemStyle.color, SellColour: sell.itemStyle.color, Up: k.itemStyle.color, Down: k.itemStyle.color0};
			})()`, &price)))
			if price.Buys != buys || price.Sells != sells {
				t.Errorf("price chart shows %d buys and %d sells, the API has %d and %d", price.Buys, price.Sells, buys, sells)
			}
			if price.BuysBelow != price.Buys || price.SellsAbove != price.Sells {
				t.Errorf("%d of %d buys below their bar, %d of %d sells above theirs", price.BuysBelow, price.Buys, price.SellsAbove, price.Sells)
			}
			if price.Lines != closed {
				t.Errorf("%d entry-to-exit lines, the API has %d closed round trips", price.Lines, closed)
			}
			for _, c := range []string{price.BuyColour, price.SellColour} {
				if c == "" || strings.EqualFold(c, price.Up) || strings.EqualFold(c, price.Down) || price.BuyColour == price.SellColour {
					t.Errorf("marker colours %s and %s against candles %s and %s", price.BuyColour, price.SellColour, price.Up, price.Down)
				}
			}

			// Selecting a round trip bands it on the chart and marks its row.
			first := trips.Trades[0]
			exit := ""
			if first.ExitDate != nil {
				exit = *first.ExitDate
			}
			var band []string
			must(t, chromedp.Run(ctx,
				// a tap on the row's first cell (on a phone the rest of the row may be scrolled out of the box)
				chromedp.Click(fmt.Sprintf(`#trades .round-trips tbody tr[data-seq="%d"] td`, first.Seq)),
				waitJS(fmt.Sprintf(`document.querySelector('[data-chart-type="candlestick"]').dataset.selectedTrade === '%d'`, first.Seq), 10*time.Second),
				waitJS(fmt.Sprintf(`document.querySelector('#trades .round-trips tbody tr[data-seq="%d"]').classList.contains('selected')`, first.Seq), 5*time.Second),
				chromedp.Evaluate(`(() => { const a = document.querySelector('[data-chart-type="candlestick"]').chartOption().series.find(s => s.id === 'price').markArea.data[0]; return [a[0].xAxis, a[1].xAxis]; })()`, &band),
			))
			if len(band) != 2 || band[0] != first.EntryDate || (exit != "" && band[1] != exit) {
				t.Errorf("trade %d (%s → %s) highlighted as %v", first.Seq, first.EntryDate, exit, band)
			}
			var selected int
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#trades .round-trips tbody tr.selected').length`, &selected)))
			if selected != 1 {
				t.Errorf("%d rows marked selected", selected)
			}

			// The heatmap's months above the cells, its scale below them.
			var heat struct {
				Position string
				Bottom   float64
				Grid     float64
			}
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => { const o = document.querySelector('[data-chart-type="monthly_heatmap"]').chartOption();
				return {Position: o.xAxis[0].position, Bottom: Number(o.visualMap[0].bottom), Grid: Number(o.grid[0].bottom)}; })()`, &heat)))
			if heat.Position != "top" || heat.Bottom >= heat.Grid {
				t.Errorf("monthly heatmap: months at the %q, scale %v px from the bottom, cells end %v px from it", heat.Position, heat.Bottom, heat.Grid)
			}

			// The drawdown axis: 0 at the top, the deepest fall (rounded up) at the bottom.
			var dd struct{ Min, Max float64 }
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => { const y = document.querySelector('[data-chart-type="equity"]').chartOption().yAxis.find(a => a.name === 'Drawdown (%)'); return {Min: y.min, Max: y.max}; })()`, &dd)))
			if dd.Max != 0 || dd.Min > -summary.MaxDrawdownPct || dd.Min < -100 || dd.Min < -2*math.Max(summary.MaxDrawdownPct, 1) {
				t.Errorf("drawdown axis %v to %v for a deepest drawdown of %.2f%%", dd.Min, dd.Max, summary.MaxDrawdownPct)
			}
			docShot(t, ctx, fmt.Sprintf("results-price-chart-%d", size.w), `[data-chart-type="candlestick"]`)
			docShot(t, ctx, fmt.Sprintf("results-equity-drawdown-%d", size.w), `[data-chart-type="equity"]`)
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`window.scrollTo(0, 0)`, nil)))
			docShot(t, ctx, fmt.Sprintf("results-%d", size.w), "")
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#h-charts').scrollIntoView()`, nil)))
			screenshot(t, ctx, shots, fmt.Sprintf("results-charts-%d", size.w))
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}
