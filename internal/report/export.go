package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
)

// Export formats.
var ExportFormats = []string{"json", "csv", "html"}

// EquityPoint is one element of the exported equity curve.
type EquityPoint struct {
	Date   string  `json:"date"`
	Value  float64 `json:"value"`
	Cash   float64 `json:"cash"`
	Return float64 `json:"return"`
}

// DrawdownPoint is one element of the exported drawdown series.
type DrawdownPoint struct {
	Date          string  `json:"date"`
	Drawdown      float64 `json:"drawdown"` // percent below the running peak
	DrawdownMoney float64 `json:"drawdown_money"`
}

// Document is the bare result object of the JSON export.
type Document struct {
	TaskID      string              `json:"task_id"`
	Status      string              `json:"status"`
	Summary     results.Summary     `json:"summary"`
	Trades      []results.TradeRow  `json:"trades"`
	EquityCurve []EquityPoint       `json:"equity_curve"`
	Drawdown    []DrawdownPoint     `json:"drawdown"`
	RoundTrips  []results.RoundTrip `json:"round_trips"`
}

// ExportJSON returns taskID's result as the spec's bare result object.
func (svc *Service) ExportJSON(ctx context.Context, taskID string) (*Document, error) {
	e, err := svc.LoadJSONExport(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return document(e.s), nil
}

// JSONExport is a result loaded for its JSON export.
type JSONExport struct{ s *results.Stored }

// LoadJSONExport reads taskID's result for its JSON export.
func (svc *Service) LoadJSONExport(ctx context.Context, taskID string) (*JSONExport, error) {
	s, err := svc.results.Load(ctx, taskID, results.All)
	if err != nil {
		return nil, err
	}
	return &JSONExport{s: s}, nil
}

// WriteJSON writes the export to w as it goes, byte for byte what an encoding/json Encoder
// without HTML escaping writes of its Document (newline included), but without building
// the Document or the whole text: a 300,000-bar result's is some 50 MB. Its error is w's.
func (e *JSONExport) WriteJSON(w io.Writer) error {
	s := e.s
	o := jsonOut{b: make([]byte, 0, spillSize+4<<10), w: w}
	o.b = append(o.b, `{"task_id":`...)
	o.b = appendString(o.b, s.TaskID)
	o.b = append(o.b, `,"status":"completed","summary":`...)
	o.b = appendEncoded(o.b, s.Summary)
	o.b = append(o.b, `,"trades":`...)
	appendArray(&o, s.Executions, func(o *jsonOut, x engine.Execution) { o.b = appendEncoded(o.b, results.TradeRowOf(x)) })
	o.b = append(o.b, `,"equity_curve":`...)
	appendArray(&o, s.Equity, func(o *jsonOut, p engine.EquityPoint) {
		o.b = append(o.b, `{"date":`...)
		o.b = appendTime(o.b, p.Time)
		for _, f := range [...]struct {
			key string
			v   float64
		}{{`,"value":`, p.Value}, {`,"cash":`, p.Cash}, {`,"return":`, p.Return}} {
			o.b = append(o.b, f.key...)
			o.b = appendFloat(o.b, f.v)
		}
		o.b = append(o.b, '}')
	})
	o.b = append(o.b, `,"drawdown":`...)
	appendArray(&o, s.Equity, func(o *jsonOut, p engine.EquityPoint) {
		o.b = append(o.b, `{"date":`...)
		o.b = appendTime(o.b, p.Time)
		o.b = append(o.b, `,"drawdown":`...)
		o.b = appendFloat(o.b, p.Drawdown)
		o.b = append(o.b, `,"drawdown_money":`...)
		o.b = appendFloat(o.b, p.DrawdownMoney)
		o.b = append(o.b, '}')
	})
	o.b = append(o.b, `,"round_trips":`...)
	seq := 0
	appendArray(&o, s.Trades, func(o *jsonOut, t engine.Trade) {
		seq++
		o.b = appendEncoded(o.b, results.RoundTripOf(seq, t))
	})
	o.b = append(o.b, "}\n"...)
	o.flush()
	return o.err
}

func document(s *results.Stored) *Document {
	d := &Document{TaskID: s.TaskID, Status: "completed", Summary: s.Summary,
		Trades: make([]results.TradeRow, len(s.Executions)), EquityCurve: make([]EquityPoint, len(s.Equity)),
		Drawdown: make([]DrawdownPoint, len(s.Equity)), RoundTrips: make([]results.RoundTrip, len(s.Trades))}
	for i, e := range s.Executions {
		d.Trades[i] = results.TradeRowOf(e)
	}
	for i, e := range s.Equity {
		date := results.FormatTime(e.Time)
		d.EquityCurve[i] = EquityPoint{Date: date, Value: e.Value, Cash: e.Cash, Return: e.Return}
		d.Drawdown[i] = DrawdownPoint{Date: date, Drawdown: e.Drawdown, DrawdownMoney: e.DrawdownMoney}
	}
	for i, t := range s.Trades {
		d.RoundTrips[i] = results.RoundTripOf(i+1, t)
	}
	return d
}

// CSV labels: the spec's fixed header and section texts.
const (
	csvSummaryHeader = "metric,value"
	csvTradesLabel   = "Trades"
	csvTradesHeader  = "date,type,price,size,pnl"
)

// num writes a number in plain decimal notation; nil is empty.
func num(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// ExportCSV returns taskID's result in the spec's CSV layout: `metric,value` and the 12
// summary rows, an empty row, the `Trades` label row, `date,type,price,size,pnl` and one
// row per execution.
func (svc *Service) ExportCSV(ctx context.Context, taskID string) (string, error) {
	s, err := svc.results.Load(ctx, taskID, results.Executions)
	if err != nil {
		return "", err
	}
	return csvText(s), nil
}

func csvText(s *results.Stored) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	b.WriteString(csvSummaryHeader + "\n")
	for i, v := range s.Summary.Values() {
		_ = w.Write([]string{results.SummaryKeys[i], num(v)})
	}
	w.Flush()
	b.WriteString("\n" + csvTradesLabel + "\n" + csvTradesHeader + "\n")
	for _, e := range s.Executions {
		t := results.TradeRowOf(e)
		_ = w.Write([]string{t.Date, t.Type, num(&t.Price), num(&t.Size), num(&t.PnL)})
	}
	w.Flush()
	return b.String()
}

// CheckExportFormat is the spec's 400 for an unknown export format.
func CheckExportFormat(format string) error {
	for _, f := range ExportFormats {
		if f == format {
			return nil
		}
	}
	return apperr.Invalid("Unsupported export format: %s", format)
}

// ExportHTML returns a self-contained report page (no scripts, no external assets: charts
// are inline SVG), readable offline and printable.
func (svc *Service) ExportHTML(ctx context.Context, taskID string) (string, error) {
	s, err := svc.results.Load(ctx, taskID, results.All)
	if err != nil {
		return "", err
	}
	bars, err := svc.runBars(ctx, s.Run, s.Run.Benchmark)
	if err != nil {
		return "", err
	}
	stats, err := svc.results.Statistics(ctx, taskID)
	if err != nil {
		return "", err
	}
	return html(s, stats, bars)
}

type reportRow struct{ Label, Value string }

// html writes the report of s with its statistics record; benchBars are the benchmark's.
func html(s *results.Stored, stats engine.Statistics, benchBars []engine.Bar) (string, error) {
	summary := make([]reportRow, len(results.SummaryKeys))
	for i, v := range s.Summary.Values() {
		txt := num(v)
		if txt == "" {
			txt = "—"
		} else if v != nil && !strings.Contains(results.SummaryKeys[i], "trades") {
			txt = strconv.FormatFloat(*v, 'f', 4, 64)
		}
		summary[i] = reportRow{results.SummaryKeys[i], txt}
	}
	eq := make([]float64, len(s.Equity))
	dd := make([]float64, len(s.Equity))
	for i, e := range s.Equity {
		eq[i] = e.Value
		dd[i] = -e.Drawdown
	}
	bench := engine.BuyAndHold(s.Run.InitialCash, benchBars, s.Equity)
	years, grid := MonthlyReturns(s.Equity)
	type hmRow struct {
		Year  int
		Cells []template.HTML
	}
	var heat []hmRow
	for yi, y := range years {
		r := hmRow{Year: y}
		for _, v := range grid[yi] {
			r.Cells = append(r.Cells, template.HTML(fmt.Sprintf(`<td style="background:%s">%.2f</td>`, heatColor(v), v)))
		}
		heat = append(heat, r)
	}
	clock, zone := wallClock(s.Run)
	first, last := "", ""
	if len(s.Equity) > 0 {
		first, last = clock(results.FormatTime(s.Equity[0].Time)), clock(results.FormatTime(s.Equity[len(s.Equity)-1].Time))
	}
	trades := document(s).Trades
	for i := range trades {
		trades[i].Date = clock(trades[i].Date)
	}
	var out bytes.Buffer
	err := reportTmpl().Execute(&out, map[string]any{
		"Task": s.TaskID, "Run": s.Run, "First": first, "Last": last, "Zone": zone, "Summary": summary, "Stats": stats,
		"EquitySVG": lineSVG([][]float64{eq, benchValues(bench)}, []string{"#1f77b4", "#888"}, []bool{false, true}, false),
		"DDSVG":     lineSVG([][]float64{dd}, []string{ColorDrawdown}, []bool{false}, true),
		"Months":    MonthNames, "Heat": heat, "Trades": trades,
	})
	return out.String(), err
}

// wallClock writes the report's bar times (as results.FormatTime gives them) as the page
// shows them: an intraday run's as "2006-01-02 15:04" in its data's zone, which it names,
// and dates as dates (zone "").
func wallClock(run results.Run) (clock func(string) string, zone string) {
	loc, err := time.LoadLocation(run.Timezone)
	if !marketdata.Intraday(run.Timeframe) || err != nil {
		return func(s string) string { return s }, ""
	}
	return func(s string) string {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, s); err != nil { // an instant at midnight UTC
				return s
			}
		}
		return t.In(loc).Format("2006-01-02 15:04")
	}, run.Timezone
}

func benchValues(b []*float64) []float64 {
	out := make([]float64, 0, len(b))
	for _, v := range b {
		if v != nil {
			out = append(out, *v)
		} else {
			out = append(out, math.NaN())
		}
	}
	return out
}

func heatColor(v float64) string {
	a := math.Min(math.Abs(v)/10, 1)*0.8 + 0.05
	if v >= 0 {
		return fmt.Sprintf("rgba(239,83,80,%.2f)", a)
	}
	return fmt.Sprintf("rgba(38,166,154,%.2f)", a)
}

// lineSVG draws series as polylines in a 900×260 box (NaN points are skipped).
func lineSVG(series [][]float64, colors []string, dashed []bool, fill bool) template.HTML {
	const w, h, pad = 900.0, 260.0, 30.0
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, s := range series {
		n = max(n, len(s))
		for _, v := range s {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if n < 2 || math.IsInf(lo, 0) {
		return `<p>No data.</p>`
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	x := func(i int) float64 { return pad + float64(i)/float64(n-1)*(w-2*pad) }
	y := func(v float64) float64 { return pad + (hi-v)/(hi-lo)*(h-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %.0f %.0f" width="100%%" role="img" xmlns="http://www.w3.org/2000/svg">`, w, h)
	fmt.Fprintf(&b, `<text x="2" y="%.0f" font-size="11">%.2f</text><text x="2" y="%.0f" font-size="11">%.2f</text>`, pad, hi, h-pad+10, lo)
	for k, s := range series {
		var pts strings.Builder
		for i, v := range s {
			if !math.IsNaN(v) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(v))
			}
		}
		dash := ""
		if dashed[k] {
			dash = ` stroke-dasharray="6 4"`
		}
		if fill {
			fmt.Fprintf(&b, `<polygon fill="%s" points="%.1f,%.1f %s%.1f,%.1f"/>`, AreaDrawdown, x(0), y(math.Min(hi, 0)), pts.String(), x(len(s)-1), y(math.Min(hi, 0)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%d"%s points="%s"/>`, colors[k], 2-k, dash, pts.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// reportTmpl is parsed on first use, not at start-up of every command of the binary.
var reportTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(reportHTML))
})

const reportHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backtest report {{.Task}}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;padding:0 12px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #e0e0e0;padding:3px 8px;text-align:right}
th{background:#f6f6f6}td.l,th.l{text-align:left}.groups{display:flex;flex-wrap:wrap;gap:16px}
details summary{cursor:pointer}.muted{color:#777;font-size:12px}
</style></head><body>
<h1>Backtest report: {{.Task}}</h1>
<p>Strategy <b>{{.Run.StrategyName}}</b> ({{.Run.StrategyID}} v{{.Run.StrategyVersion}}), {{.Run.DataSource}}/{{.Run.Symbol}},
bars {{.First}} to {{.Last}}{{if .Zone}} (times in {{.Zone}}){{end}}, initial cash {{printf "%.2f" .Run.InitialCash}}, commission {{.Run.Commission}}.
Parameters: <code>{{printf "%s" .Run.StrategyParams}}</code></p>
<h2>Summary</h2>
<table>{{range .Summary}}<tr><th class="l">{{.Label}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<h2>Statistics</h2>
<div class="groups">{{range .Stats.Groups}}<table><tr><th class="l" colspan="2">{{.Name}}</th></tr>
{{range .Metrics}}<tr><td class="l"><details><summary>{{.Label}}</summary><span class="muted">{{.Explanation}}</span></details></td><td>{{.Display}}</td></tr>{{end}}
</table>{{end}}</div>
<h2>Equity curve</h2><p class="muted">Solid: equity. Dashed: the benchmark, {{.Run.Benchmark}} bought with the same cash at its first close and held.</p>
{{.EquitySVG}}
<h2>Drawdown (%)</h2>
{{.DDSVG}}
<h2>Monthly returns (%)</h2>
<table><tr><th></th>{{range .Months}}<th>{{.}}</th>{{end}}</tr>
{{range .Heat}}<tr><th>{{.Year}}</th>{{range .Cells}}{{.}}{{end}}</tr>{{end}}</table>
<h2>Trades</h2>
<table><tr><th class="l">date</th><th class="l">type</th><th>price</th><th>size</th><th>pnl</th></tr>
{{range .Trades}}<tr><td class="l">{{.Date}}</td><td class="l">{{.Type}}</td><td>{{printf "%.4f" .Price}}</td><td>{{.Size}}</td><td>{{printf "%.2f" .PnL}}</td></tr>{{end}}
</table>
<p class="muted">Generated by backtestd.</p>
</body></html>
`
