package report_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// futuresContracts are the contracts the chain and rollover fixtures join.
var futuresContracts = []string{"ESH1", "ESM1", "ESU1", "ESZ1", "ESH2"}

// btJoined is what backtrader recorded of a joined-feed fixture: the dates of its bars (the
// equity curve's), the contract each stretch came from (rolls) and the fills.
type btJoined struct {
	Equity     [][2]any    `json:"equity"`
	Rolls      [][2]string `json:"rolls"`
	Executions []struct {
		Date, Side  string
		Price, Size float64
	} `json:"executions"`
}

// TestJoinedFeedCharts stores the chain and rollover fixtures' runs as a task on the five
// contracts would and reads their price charts: by default they show the joined feed ES,
// bar for bar the bars backtrader's strategy saw (each date's bar of the contract rolled
// to by then), with every fill marked at its date and price; a contract's own bars stay
// available by its symbol.
func TestJoinedFeedCharts(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "testdata", "backtrader")
	b := resultstest.Setup(t)
	own := map[string]map[string]engine.Bar{} // contract → date → bar
	feeds := make([]engine.Feed, len(futuresContracts))
	for i, s := range futuresContracts {
		bars := reftest.Bars(t, filepath.Join(root, "data", s+".csv"))
		b.Bars(t, s, bars)
		feeds[i] = engine.Feed{Symbol: s, Bars: bars}
		own[s] = map[string]engine.Bar{}
		for _, x := range bars {
			own[s][x.Time.Format(time.DateOnly)] = x
		}
	}
	symbols, _ := json.Marshal(futuresContracts)
	for i, fixture := range []string{"chain_futures", "rollover_date", "rollover_volume"} {
		t.Run(fixture, func(t *testing.T) {
			code, err := os.ReadFile(filepath.Join(root, "strategies", fixture+".js"))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(root, "expected", fixture+"__"+strings.Join(futuresContracts, "_")+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var bt btJoined
			if err := json.Unmarshal(raw, &bt); err != nil {
				t.Fatal(err)
			}
			res, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: string(code), Feeds: feeds, Cash: 10000, Commission: 0.001})
			if err != nil {
				t.Fatal(err)
			}
			id := "task_" + fixture
			first, last := feeds[0].Bars[0].Time, feeds[len(feeds)-1].Bars[len(feeds[len(feeds)-1].Bars)-1].Time
			b.Task(t, id, "completed", futuresContracts[0], first, last, 10000, "{}")
			b.Exec(t, `UPDATE tasks SET symbols = ARRAY(SELECT jsonb_array_elements_text($2::jsonb)) WHERE id = $1`, id, string(symbols))
			if err := results.Save(b.Ctx, b.Store.Pool, id, 1, res, nil); err != nil {
				t.Fatal(err)
			}
			chart := func(kind, symbol string) map[string]any {
				t.Helper()
				c, err := service(b).Chart(b.Ctx, id, kind, symbol, report.View{})
				if err != nil {
					t.Fatalf("%s of %q: %v", kind, symbol, err)
				}
				return chartJSON(t, c)
			}

			// The joined feed's bars, as backtrader's strategy saw them.
			rows := series(chart("candlestick", ""), 0)["data"].([]any)
			if len(rows) != len(bt.Equity) || len(bt.Rolls) < 4 {
				t.Fatalf("%d candles, backtrader's joined feed has %d bars (%d rolls)", len(rows), len(bt.Equity), len(bt.Rolls))
			}
			at := map[string]engine.Bar{}
			roll := 0
			for j, r := range rows {
				r := r.([]any)
				date := bt.Equity[j][0].(string)
				for roll+1 < len(bt.Rolls) && bt.Rolls[roll+1][0] <= date {
					roll++
				}
				want, ok := own[bt.Rolls[roll][1]][date]
				if !ok {
					t.Fatalf("backtrader's bar %s is not a bar of %s", date, bt.Rolls[roll][1])
				}
				at[date] = want
				if r[0] != date || r[1] != want.Open || r[2] != want.Close || r[3] != want.Low || r[4] != want.High || r[5] != float64(want.Volume) {
					t.Fatalf("candle %d %v, backtrader's bar of %s on %s %+v", j, r, bt.Rolls[roll][1], date, want)
				}
			}

			// The trades chart: the same bars' closes, every fill marked where it was.
			tc := chart("trades", "")
			closes := floats(series(tc, 0)["data"])
			if len(closes) != len(rows) || closes[len(closes)-1] != at[bt.Equity[len(bt.Equity)-1][0].(string)].Close {
				t.Fatalf("the trades chart has %d closes, ending %v", len(closes), closes[len(closes)-1])
			}
			var marks [][]any
			for _, s := range []int{1, 2} {
				for _, m := range series(tc, s)["data"].([]any) {
					marks = append(marks, m.([]any))
				}
			}
			if len(marks) != len(bt.Executions) || len(marks) == 0 {
				t.Fatalf("%d fills marked, backtrader made %d", len(marks), len(bt.Executions))
			}
			for _, x := range bt.Executions {
				found := false
				for _, m := range marks {
					if m[0] == x.Date && resultstest.Near(m[1].(float64), x.Price) {
						found = true
					}
				}
				if _, ok := at[x.Date]; !ok || !found {
					t.Errorf("backtrader's %s of %g at %g on %s is not marked on a bar of the chart", x.Side, x.Size, x.Price, x.Date)
				}
			}

			// A contract's own bars, as the run read them, on request.
			if i == 0 {
				esh2 := series(chart("candlestick", "ESH2"), 0)["data"].([]any)
				if len(esh2) != len(feeds[4].Bars) || esh2[0].([]any)[0] != feeds[4].Bars[0].Time.Format(time.DateOnly) {
					t.Errorf("ESH2's chart has %d bars, the contract %d", len(esh2), len(feeds[4].Bars))
				}
				_, err := service(b).Chart(b.Ctx, id, "candlestick", "NQ", report.View{})
				if d := resultstest.Detail(err); d != "Symbol NQ is not a feed of task "+id+" (its feeds: ES)" {
					t.Errorf("an unknown symbol: %v", err)
				}
			}
		})
	}
}
