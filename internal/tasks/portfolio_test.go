package tasks_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// readRef reads one of the reference data files.
func readRef(t *testing.T, name string) []engine.Bar {
	t.Helper()
	return reftest.Bars(t, reftest.Path(t, "data", name))
}

func exampleCode(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// inRange is bars with from <= time < until.
func inRange(bars []engine.Bar, from, until time.Time) []engine.Bar {
	i := slices.IndexFunc(bars, func(b engine.Bar) bool { return !b.Time.Before(from) })
	j := slices.IndexFunc(bars, func(b engine.Bar) bool { return !b.Time.Before(until) })
	if i < 0 {
		return nil
	}
	if j < 0 {
		j = len(bars)
	}
	return bars[i:j]
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestPortfolioTaskMatchesLocalRun runs the pairs example on two imported reference feeds
// through the queue and compares every execution, round trip and equity point with the
// same run made locally (what `backtestd run --data a --data b` does) and with what
// backtrader did (testdata/backtrader/expected/pairs__orcl_nvda.json).
func TestPortfolioTaskMatchesLocalRun(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 2})
	md := marketdata.NewService(b.store, nil)
	feeds := []engine.Feed{{Symbol: "ORCL", Bars: readRef(t, "orcl.csv")}, {Symbol: "NVDA", Bars: readRef(t, "nvda.csv")}}
	for _, f := range feeds {
		if _, err := md.Import(b.ctx, "testsrc", f.Symbol, "", "1d", time.UTC, f.Bars); err != nil {
			t.Fatal(err)
		}
	}
	code := exampleCode(t, "pairs.js")
	r := req(b.strategy(t, code))
	r.StartDate, r.EndDate = sp("2000-01-01"), sp("2014-12-31")
	r.Symbols = []string{"ORCL", "NVDA"}
	task := b.create(t, r)
	if task.Symbol != "ORCL" || !slices.Equal(task.Symbols, []string{"ORCL", "NVDA"}) || task.Timeframe != "1d" {
		t.Fatalf("task records symbol %s, symbols %v, timeframe %s", task.Symbol, task.Symbols, task.Timeframe)
	}
	if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
		t.Fatalf("task %s: %v", got.Status, got.Error)
	}
	stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.All)
	if err != nil {
		t.Fatal(err)
	}

	from, until := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range feeds {
		feeds[i].Bars = inRange(feeds[i].Bars, from, until)
	}
	local, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: feeds, Cash: 10000, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if len(local.Executions) < 10 {
		t.Fatalf("the local run made %d executions: too few to compare", len(local.Executions))
	}
	symbols := map[string]int{}
	if len(stored.Executions) != len(local.Executions) {
		t.Fatalf("%d executions stored, %d in the local run", len(stored.Executions), len(local.Executions))
	}
	for i, want := range local.Executions {
		got := stored.Executions[i]
		if got.Symbol != want.Symbol || !got.Time.Equal(want.Time) || got.Side != want.Side || !near(got.Price, want.Price) ||
			!near(got.Size, want.Size) || !near(got.Commission, want.Commission) || !near(got.PnL, want.PnL) {
			t.Fatalf("execution %d: stored %+v, local %+v", i, got, want)
		}
		symbols[got.Symbol]++
	}
	if symbols["ORCL"] == 0 || symbols["NVDA"] == 0 {
		t.Fatalf("executions per symbol %v: want fills of both feeds", symbols)
	}
	if len(stored.Trades) != len(local.Trades) {
		t.Fatalf("%d round trips stored, %d in the local run", len(stored.Trades), len(local.Trades))
	}
	for i, want := range local.Trades {
		if got := stored.Trades[i]; got.Symbol != want.Symbol || !near(got.PnLNet, want.PnLNet) {
			t.Fatalf("round trip %d: stored %s %v, local %s %v", i, got.Symbol, got.PnLNet, want.Symbol, want.PnLNet)
		}
	}
	if len(stored.Equity) != len(local.Equity) {
		t.Fatalf("%d equity points stored, %d in the local run", len(stored.Equity), len(local.Equity))
	}
	for i, want := range local.Equity {
		if got := stored.Equity[i]; !got.Time.Equal(want.Time) || !near(got.Value, want.Value) {
			t.Fatalf("equity %d: stored %v %v, local %v %v", i, got.Time, got.Value, want.Time, want.Value)
		}
	}
	checkBacktrader(t, stored)

	var n int
	if err := b.store.Pool.QueryRow(b.ctx, `SELECT count(DISTINCT symbol) FROM bi_executions WHERE task_id = $1`, task.TaskID).Scan(&n); err != nil || n != 2 {
		t.Fatalf("bi_executions names %d symbols (%v), want 2", n, err)
	}

	// The breakdown: as the local run's, and summing to the portfolio's totals.
	syms, err := results.NewService(b.store.Pool).Symbols(b.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 2 || len(local.Symbols) != 2 {
		t.Fatalf("breakdown of %d symbols, local %d", len(syms), len(local.Symbols))
	}
	var pnl, contrib float64
	var execs, trades int
	for i, s := range syms {
		w := local.Symbols[i]
		if s.Symbol != w.Symbol || !near(s.PnL, w.PnL) || !near(s.Exposure, w.Exposure) || s.Trades != w.Trades || s.Executions != w.Executions {
			t.Errorf("symbol %d: stored %+v, local %+v", i, s, w)
		}
		pnl += s.PnL
		contrib += s.Contribution
		execs += s.Executions
		trades += s.Trades + s.OpenTrades
	}
	if want := stored.Summary.FinalValue - 10000; math.Abs(pnl-want) > 1e-6 {
		t.Errorf("symbols' pnl sum to %v, final value less initial cash %v", pnl, want)
	}
	if math.Abs(contrib-stored.Summary.TotalReturn) > 1e-9 || execs != len(stored.Executions) || trades != len(stored.Trades) {
		t.Errorf("contributions %v (total return %v), fills %d (%d), round trips %d (%d)",
			contrib, stored.Summary.TotalReturn, execs, len(stored.Executions), trades, len(stored.Trades))
	}
	// The charts of one feed: its bars and only its fills.
	rep := report.New(results.NewService(b.store.Pool), md.Bars)
	for i, f := range feeds {
		c, err := rep.Chart(b.ctx, task.TaskID, "candlestick", f.Symbol, report.View{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c.AppendJSON(nil)); !strings.Contains(got, `"K-Line Chart"`) || strings.Count(got, "],[") < len(f.Bars)-1 {
			t.Errorf("candlestick of %s: want its %d bars", f.Symbol, len(f.Bars))
		}
		tc, err := rep.Chart(b.ctx, task.TaskID, "trades", f.Symbol, report.View{})
		if err != nil {
			t.Fatal(err)
		}
		marks := 0
		for _, s := range tc.Series[1:] {
			marks += reflect.ValueOf(s["data"]).Len()
		}
		if marks != syms[i].Executions {
			t.Errorf("trades chart of %s marks %d fills, want %d", f.Symbol, marks, syms[i].Executions)
		}
	}
	if _, err := rep.Chart(b.ctx, task.TaskID, "trades", "AAA", report.View{}); err == nil || !strings.Contains(err.Error(), "Symbol AAA is not a feed of task "+task.TaskID+" (its feeds: ORCL, NVDA)") {
		t.Errorf("chart of a symbol the task did not trade: %v", err)
	}
	var biPnL float64
	if err := b.store.Pool.QueryRow(b.ctx, `SELECT sum(pnl) FROM bi_symbols WHERE task_id = $1`, task.TaskID).Scan(&biPnL); err != nil || math.Abs(biPnL-pnl) > 1e-9 {
		t.Errorf("bi_symbols pnl %v (%v), want %v", biPnL, err, pnl)
	}
}

// TestTimeframeAggregatesInTasks runs a task on weekly bars made from the stored daily ones
// and compares it with a local run on the same aggregation.
func TestTimeframeAggregatesInTasks(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	r := req(b.strategy(t, smaCross))
	r.Timeframe = sp("1w")
	task := b.create(t, r)
	if task.Timeframe != "1w" || !slices.Equal(task.Symbols, []string{"AAA"}) {
		t.Fatalf("task records timeframe %s, symbols %v", task.Timeframe, task.Symbols)
	}
	if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
		t.Fatalf("task %s: %v", got.Status, got.Error)
	}
	stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.EquityValues|results.Executions)
	if err != nil {
		t.Fatal(err)
	}
	daily := inRange(engine.RandomWalk(5000, 7), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1984, 1, 1, 0, 0, 0, 0, time.UTC))
	weekly := marketdata.Aggregate(daily, "1w", time.UTC)
	local, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: smaCross, Feeds: []engine.Feed{{Symbol: "AAA", Bars: weekly}}, Cash: 10000, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Equity) != len(weekly) || len(weekly) >= len(daily)/4 {
		t.Fatalf("%d equity points for %d weekly bars made from %d daily ones", len(stored.Equity), len(weekly), len(daily))
	}
	if len(stored.Executions) != len(local.Executions) || len(local.Executions) == 0 {
		t.Fatalf("%d executions stored, %d in the local run", len(stored.Executions), len(local.Executions))
	}
	if got, want := stored.Summary.FinalValue, local.Summary.FinalValue; !near(got, want) {
		t.Fatalf("final value %v, local run on weekly bars %v", got, want)
	}
	// A weekly bar is dated by its week's first daily bar.
	firstOfWeek := map[int64]bool{} // by Unix time: a stored time has another location
	for i, d := range daily {
		y, w := d.Time.ISOWeek()
		if i == 0 {
			firstOfWeek[d.Time.Unix()] = true
		} else if py, pw := daily[i-1].Time.ISOWeek(); py != y || pw != w {
			firstOfWeek[d.Time.Unix()] = true
		}
	}
	for _, e := range stored.Executions {
		if !firstOfWeek[e.Time.Unix()] {
			t.Fatalf("fill on %v (%s): weekly bars are dated by their week's first day", e.Time, e.Time.Weekday())
		}
	}
	// Weekly returns annualise with √52.
	stats, err := results.NewService(b.store.Pool).Statistics(b.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	m, sd := meanSD(returns(10000, stored.Equity))
	if v := stats.Get("annual_volatility"); v.Value == nil || math.Abs(*v.Value-sd*math.Sqrt(52)) > 6e-5 || !strings.Contains(v.Explanation, "N = 52 (weekly bars)") {
		t.Errorf("annual volatility %+v, want %v with N = 52", v, sd*math.Sqrt(52))
	}
	if v := stats.Get("sharpe_ratio"); v.Value == nil || math.Abs(*v.Value-m/sd*math.Sqrt(52)) > 6e-5 {
		t.Errorf("sharpe ratio %+v, want %v", v, m/sd*math.Sqrt(52))
	}
}

// returns are the equity curve's relative changes, the first from cash.
func returns(cash float64, eq []engine.EquityPoint) []float64 {
	out := make([]float64, len(eq))
	for i, p := range eq {
		out[i] = p.Value/cash - 1
		cash = p.Value
	}
	return out
}

// meanSD is the mean and population standard deviation of x.
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

// checkBacktrader compares a stored pairs result with backtrader's fixture of the run.
func checkBacktrader(t *testing.T, stored *results.Stored) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "expected", "pairs__orcl_nvda.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bt struct {
		Executions []struct {
			Date, Side, Data string
			Price, Size      float64
			Comm             float64 `json:"commission"`
		} `json:"executions"`
		Equity     [][2]any `json:"equity"`
		FinalValue float64  `json:"final_value"`
	}
	if err := json.Unmarshal(raw, &bt); err != nil {
		t.Fatal(err)
	}
	if len(stored.Executions) != len(bt.Executions) {
		t.Fatalf("%d executions stored, backtrader %d", len(stored.Executions), len(bt.Executions))
	}
	for i, w := range bt.Executions {
		g := stored.Executions[i]
		if g.Time.Format(time.DateOnly) != w.Date || g.Side != w.Side || !strings.EqualFold(g.Symbol, w.Data) ||
			!near(g.Price, w.Price) || !near(g.Size, w.Size) || !near(g.Commission, w.Comm) {
			t.Fatalf("execution %d: stored %+v, backtrader %+v", i, g, w)
		}
	}
	if len(stored.Equity) != len(bt.Equity) {
		t.Fatalf("%d equity points stored, backtrader %d", len(stored.Equity), len(bt.Equity))
	}
	for i, w := range bt.Equity {
		if g := stored.Equity[i]; g.Time.Format(time.DateOnly) != w[0] || !near(g.Value, w[1].(float64)) {
			t.Fatalf("equity %d: stored %v %v, backtrader %v %v", i, g.Time, g.Value, w[0], w[1])
		}
	}
	if !near(stored.Summary.FinalValue, bt.FinalValue) {
		t.Fatalf("final value %v, backtrader %v", stored.Summary.FinalValue, bt.FinalValue)
	}
}
