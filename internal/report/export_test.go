package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

func TestExportCSVLayout(t *testing.T) {
	t.Parallel()
	b, _, res := resultstest.SmallRun(t)
	text, err := service(b).ExportCSV(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := b.Results().GetSummary(b.Ctx, "task_1")
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
	b, bars, res := resultstest.SmallRun(t)
	doc, err := service(b).ExportJSON(b.Ctx, "task_1")
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
	// The API writes the export as it goes: the same bytes an encoder writes of the document.
	var want, got bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	exp, err := service(b).LoadJSONExport(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.WriteJSON(&got); err != nil || len(doc.RoundTrips) == 0 || got.String() != want.String() {
		t.Errorf("WriteJSON (%v, %d round trips) differs from the document's encoding:\n got %.300s\nwant %.300s", err, len(doc.RoundTrips), got.String(), want.String())
	}
	page, err := service(b).ExportHTML(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<dd data-key="task_id">task_1</dd>`, "<svg", "Sharpe Ratio", "Win Months %", "Jan", "stroke-dasharray"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("report is not self-contained: contains %q", bad)
		}
	}
	if err := report.CheckExportFormat("xml"); resultstest.Detail(err) != "Unsupported export format: xml" {
		t.Errorf("xml: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	resultstest.CheckNotFound(t, func(b *resultstest.Bundle, id string) []error {
		_, e1 := service(b).Chart(b.Ctx, id, "equity", "", report.View{})
		_, e2 := service(b).ExportJSON(b.Ctx, id)
		_, e3 := service(b).ExportCSV(b.Ctx, id)
		_, e4 := service(b).ExportHTML(b.Ctx, id)
		return []error{e1, e2, e3, e4}
	})
}

// The HTML report shows an intraday run's times in its data's zone, as the page does.
func TestExportHTMLInDataTimeZone(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.FiveMinuteWalk(400, 3, time.Date(2024, 7, 1, 13, 30, 0, 0, time.UTC))
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	if _, err := marketdata.NewService(b.Store, nil).Import(b.Ctx, "builtin", "TZ5", "", "5m", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	res := b.Completed(t, "task_tz", "TZ5", bars, map[string]any{"fast": 5, "slow": 20})
	b.Exec(t, `UPDATE tasks SET timeframe = '5m', timezone = 'America/New_York' WHERE id = 'task_tz'`)
	if len(res.Executions) == 0 {
		t.Fatal("the run has no fills")
	}
	page, err := service(b).ExportHTML(b.Ctx, "task_tz")
	if err != nil {
		t.Fatal(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	fill := res.Executions[0].Time.In(ny).Format("2006-01-02 15:04")
	for _, want := range []string{"2024-07-01 09:30 → ", "(times in America/New_York)", `<td class="l">` + fill + `</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
