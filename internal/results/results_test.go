package results_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

func detail(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Detail
	}
	if err == nil {
		return ""
	}
	return "internal: " + err.Error()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// smallRun is a real SMA-crossover run over 800 generated daily bars (about 2.2 years).
func smallRun(t *testing.T) (*testBundle, []engine.Bar, *engine.Result) {
	b := setup(t)
	bars := engine.RandomWalk(800, 7)
	b.bars(t, "RW", bars)
	res := b.completed(t, "task_1", "RW", bars, map[string]any{"fast": 5, "slow": 20, "size": 10})
	if len(res.Executions) < 4 {
		t.Fatalf("the run made only %d executions", len(res.Executions))
	}
	return b, bars, res
}

func TestSummaryMatchesReference(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bars := loadOrcl(t)
	b.bars(t, "ORCL", bars)
	b.completed(t, "task_1", "ORCL", bars, nil)
	var want struct {
		FinalValue float64 `json:"final_value"`
		Sharpe     struct {
			DailyAnnualized float64 `json:"daily_annualized"`
		} `json:"sharpe"`
		Drawdown struct {
			MaxPct   float64 `json:"max_drawdown_pct"`
			MaxMoney float64 `json:"max_moneydown"`
		} `json:"drawdown"`
		TradeAnalyzer struct {
			Total int `json:"total"`
			Won   int `json:"won"`
		} `json:"trade_analyzer"`
	}
	raw, err := os.ReadFile(referencePath(t, "expected", "sma_cross__orcl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	got, err := results.NewService(b.store.Pool).GetSummary(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.FinalValue, want.FinalValue) || got.SharpeRatio == nil || !near(*got.SharpeRatio, want.Sharpe.DailyAnnualized) ||
		!near(got.MaxDrawdownPct, want.Drawdown.MaxPct) || !near(got.MaxDrawdown, want.Drawdown.MaxMoney) || got.TotalTrades != want.TradeAnalyzer.Total {
		t.Errorf("summary %+v differs from the reference %+v", got, want)
	}
	if got.WinRate == nil || !near(*got.WinRate, float64(want.TradeAnalyzer.Won)/float64(want.TradeAnalyzer.Total)*100) {
		t.Errorf("win rate %v", got.WinRate)
	}
	js, _ := json.Marshal(got)
	var keys map[string]any
	_ = json.Unmarshal(js, &keys)
	if len(keys) != 12 {
		t.Errorf("summary has %d keys: %s", len(keys), js)
	}
	for _, k := range results.SummaryKeys {
		if keys[k] == nil {
			t.Errorf("summary key %s is null or missing", k)
		}
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.task(t, "task_9", "running", "X", time.Now(), time.Now(), 10000, "")
	for _, id := range []string{"task_404", "task_9"} {
		want := "Result not found: " + id
		_, e1 := results.NewService(b.store.Pool).GetSummary(b.ctx, id)
		_, e2 := results.NewService(b.store.Pool).Trades(b.ctx, id, "", 0, 10)
		_, e3 := results.NewService(b.store.Pool).Chart(b.ctx, id, "equity")
		_, e4 := results.NewService(b.store.Pool).Statistics(b.ctx, id)
		_, e5 := results.NewService(b.store.Pool).ExportJSON(b.ctx, id)
		_, e6 := results.NewService(b.store.Pool).ExportCSV(b.ctx, id)
		_, e7 := results.NewService(b.store.Pool).ExportHTML(b.ctx, id)
		for i, err := range []error{e1, e2, e3, e4, e5, e6, e7} {
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindNotFound || e.Detail != want {
				t.Errorf("%s read %d: %v", id, i+1, err)
			}
		}
	}
}

func TestTradesPaging(t *testing.T) {
	t.Parallel()
	b, _, res := smallRun(t)
	all, err := results.NewService(b.store.Pool).Trades(b.ctx, "task_1", "", 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	rows := all.Trades.([]results.TradeRow)
	if all.Total != int64(len(res.Executions)) || len(rows) != len(res.Executions) {
		t.Fatalf("total %d, rows %d, executions %d", all.Total, len(rows), len(res.Executions))
	}
	for i, e := range res.Executions {
		r := rows[i]
		if r.Date != e.Time.Format("2006-01-02") || r.Type != e.Side || r.Price != e.Price || r.Size != math.Abs(e.Size) || r.PnL != e.PnL {
			t.Errorf("row %d: %+v vs execution %+v", i, r, e)
		}
	}
	page, err := results.NewService(b.store.Pool).Trades(b.ctx, "task_1", "executions", 2, 3)
	if err != nil || page.Total != all.Total || len(page.Trades.([]results.TradeRow)) != 3 || page.Trades.([]results.TradeRow)[0] != rows[2] {
		t.Errorf("page skip 2 limit 3: %+v %v", page, err)
	}
	past, _ := results.NewService(b.store.Pool).Trades(b.ctx, "task_1", "", 10000, 5)
	if len(past.Trades.([]results.TradeRow)) != 0 || past.Total != all.Total {
		t.Errorf("page past the end: %+v", past)
	}
	rt, err := results.NewService(b.store.Pool).Trades(b.ctx, "task_1", "round_trips", 0, 1000)
	if err != nil || rt.Total != int64(len(res.Trades)) {
		t.Fatalf("round trips: %+v %v", rt, err)
	}
	trips := rt.Trades.([]results.RoundTrip)
	for i, tr := range res.Trades {
		if trips[i].PnLNet != tr.PnLNet || trips[i].IsOpen != tr.IsOpen || trips[i].BarsHeld != int32(tr.BarLen) {
			t.Errorf("round trip %d: %+v vs %+v", i, trips[i], tr)
		}
	}
	for _, tc := range []struct {
		kind        string
		skip, limit int
		want        string
	}{
		{"x", 0, 1, "Unsupported trade kind: x (use executions or round_trips)"},
		{"", -1, 1, "skip must be 0 or more, got -1"},
		{"", 0, -5, "limit must be 0 or more, got -5"},
	} {
		if _, err := results.NewService(b.store.Pool).Trades(b.ctx, "task_1", tc.kind, tc.skip, tc.limit); detail(err) != tc.want {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

func TestStatisticsFromStoredRows(t *testing.T) {
	t.Parallel()
	b, _, res := smallRun(t)
	got, err := results.NewService(b.store.Pool).Statistics(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	want := engine.ComputeStatistics(res.InitialCash, res.Equity, res.Trades, res.Analyzers.SQN.Value)
	n := 0
	for gi, g := range got.Groups {
		if g.Name != []string{"Curve", "Trade", "Time"}[gi] {
			t.Errorf("group %d is %s", gi, g.Name)
		}
		for mi, m := range g.Metrics {
			n++
			w := want.Groups[gi].Metrics[mi]
			if m.Key != w.Key || m.Display != w.Display || m.Label == "" || m.Explanation == "" {
				t.Errorf("metric %s: %+v, want %+v", m.Key, m, w)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d metrics", n)
	}
}

func TestExportCSVLayout(t *testing.T) {
	t.Parallel()
	b, _, res := smallRun(t)
	text, err := results.NewService(b.store.Pool).ExportCSV(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := results.NewService(b.store.Pool).GetSummary(b.ctx, "task_1")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 1+12+1+1+1+len(res.Executions) {
		t.Fatalf("%d lines:\n%s", len(lines), text)
	}
	if lines[0] != "metric,value" {
		t.Errorf("line 1: %q", lines[0])
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fp := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	wantSummary := []string{f(sum.InitialCash), f(sum.FinalValue), f(sum.TotalReturn), fp(sum.AnnualReturn), fp(sum.SharpeRatio),
		f(sum.MaxDrawdown), f(sum.MaxDrawdownPct), fmt.Sprint(sum.TotalTrades), fp(sum.WinRate), fp(sum.ProfitFactor), fp(sum.AvgWin), fp(sum.AvgLoss)}
	for i, k := range results.SummaryKeys {
		if want := k + "," + wantSummary[i]; lines[1+i] != want {
			t.Errorf("line %d: %q, want %q", 2+i, lines[1+i], want)
		}
	}
	if lines[13] != "" || lines[14] != "Trades" || lines[15] != "date,type,price,size,pnl" {
		t.Errorf("section lines: %q", lines[13:16])
	}
	for i, e := range res.Executions {
		want := fmt.Sprintf("%s,%s,%s,%s,%s", e.Time.Format("2006-01-02"), e.Side, f(e.Price), f(math.Abs(e.Size)), f(e.PnL))
		if lines[16+i] != want {
			t.Errorf("trade line %d: %q, want %q", 17+i, lines[16+i], want)
		}
	}
}

func TestExportJSONAndHTML(t *testing.T) {
	t.Parallel()
	b, bars, res := smallRun(t)
	doc, err := results.NewService(b.store.Pool).ExportJSON(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(doc)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(js, &m)
	for _, k := range []string{"task_id", "status", "summary", "trades", "equity_curve", "drawdown"} {
		if _, ok := m[k]; !ok {
			t.Errorf("export lacks %s", k)
		}
	}
	if doc.Status != "completed" || len(doc.EquityCurve) != len(bars) || len(doc.Drawdown) != len(bars) || len(doc.Trades) != len(res.Executions) {
		t.Errorf("export sizes: %s %d %d %d", doc.Status, len(doc.EquityCurve), len(doc.Drawdown), len(doc.Trades))
	}
	if doc.EquityCurve[10].Value != res.Equity[10].Value || doc.Drawdown[10].Drawdown != res.Equity[10].Drawdown {
		t.Errorf("equity point 10: %+v %+v vs %+v", doc.EquityCurve[10], doc.Drawdown[10], res.Equity[10])
	}
	page, err := results.NewService(b.store.Pool).ExportHTML(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Backtest report: task_1", "<svg", "Sharpe Ratio", "Win Months %", "Jan", "stroke-dasharray"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("report is not self-contained: contains %q", bad)
		}
	}
	if err := results.CheckExportFormat("xml"); detail(err) != "Unsupported export format: xml" {
		t.Errorf("xml: %v", err)
	}
}
