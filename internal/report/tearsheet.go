package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/findings"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/results"
)

// The HTML report is a tearsheet: one self-contained page (inline CSS and SVG, no script, no
// external asset, so it passes a strict Content-Security-Policy, opens offline and can be
// mailed) that prints on A4. Every figure is the API's, written by the convention of
// format.go.

// figure is a labelled value; Key names the API field it shows (data-key in the page).
type figure struct {
	Key, Label, Value string
	Tone              string // "pos" or "neg" for a gain or a loss
	Note              string // what the figure means
}

// paramRow is one strategy parameter as the run used it.
type paramRow struct {
	Name, Value, Default, Type, Description string
	Changed                                 bool
}

type monthRow struct {
	Year  int
	Cells []heatCell
	Total heatCell
}

type heatCell struct {
	Text, Class string
}

type yearRow struct {
	Year                             int
	Return, MaxDrawdown, End, Trades string
	ReturnClass                      string
}

// strategyRow is one strategy of a run of several: its figures as the strategies route
// serves them (engine.StrategyResult), written by the convention of format.go.
type strategyRow struct {
	Index                                            int
	Name, Orders, Fills, Trades, Open, PnL, PnLClass string
	Commission, SQN, FirstNext                       string
}

type tripRow struct {
	Seq                                                 int32
	Strategy                                            string // the strategy's name in a run of several
	Symbol, Side, Entry, Exit, Held, Size, EntryPrice   string
	ExitPrice, PnL, PnLClass, Fees, Return, ReturnClass string
}

type fillRow struct {
	Date, Symbol, Type, Price, Size, Value, Fees, PnL, PnLClass string
	Strategy                                                    string // the strategy's name in a run of several
	Partial                                                     bool   // the order has more to fill on later bars
}

type statGroup struct {
	Name    string
	Metrics []figure
	Notes   []string
}

// tearsheet holds what the template shows.
type tearsheet struct {
	Task, Title, Subtitle  string
	Facts                  []figure
	Headline               []figure
	EquitySVG, DrawdownSVG template.HTML
	BenchmarkNote          string
	Stats                  []statGroup
	Months                 []string
	Monthly                []monthRow
	Yearly                 []yearRow
	Trips                  []tripRow
	Fills                  []fillRow
	MultiFeed              bool
	Strategies             []strategyRow // a run of several strategies: each one's part; none for one
	Params                 []paramRow
	Zone                   string
	Generated              string
	Findings               []findings.Finding // critical first, then warnings, then information
}

// html writes the report of s with its statistics record; benchBars are the benchmark's and
// version the strategy version the run used (nil when it is not stored).
// fs are its findings (results.Service.Findings).
func html(s *results.Stored, stats engine.Statistics, benchBars []engine.Bar, version *results.StrategyVersion, fs []findings.Finding) (string, error) {
	clock, zone := wallClock(s.Run)
	loc := time.UTC
	if zone != "" {
		if l, err := time.LoadLocation(zone); err == nil {
			loc = l
		}
	}
	intraday := marketdata.Intraday(s.Run.Timeframe)
	t := tearsheet{Task: s.TaskID, Zone: zone, Months: MonthNames, MultiFeed: len(s.Run.Symbols) > 1, Findings: slices.Clone(fs)}
	rank := map[findings.Severity]int{findings.Critical: 0, findings.Warning: 1, findings.Info: 2}
	slices.SortStableFunc(t.Findings, func(a, b findings.Finding) int { return rank[a.Severity] - rank[b.Severity] })

	name := s.Run.StrategyName
	if name == "" && version != nil {
		name = version.Name
	}
	symbols := strings.Join(s.Run.Symbols, ", ")
	if symbols == "" {
		symbols = s.Run.Symbol
	}
	t.Title = fmt.Sprintf("%s on %s", name, symbols)
	first, last := "", ""
	if len(s.Equity) > 0 {
		first, last = clock(results.FormatTime(s.Equity[0].Time)), clock(results.FormatTime(s.Equity[len(s.Equity)-1].Time))
	}
	t.Subtitle = fmt.Sprintf("%s → %s · %s bars · %s", first, last, formatNumber(float64(len(s.Equity)), 0), s.Run.Timeframe)

	strat := fmt.Sprintf("%s (%s, version %d)", name, s.Run.StrategyID, s.Run.StrategyVersion)
	t.Facts = []figure{
		{Key: "task_id", Label: "Backtest", Value: s.TaskID},
		{Key: "strategy", Label: "Strategy", Value: strat},
	}
	if version != nil {
		if version.ClassName != "" && version.ClassName != name {
			t.Facts = append(t.Facts, figure{Key: "class_name", Label: "Class", Value: version.ClassName})
		}
		t.Facts = append(t.Facts, figure{Key: "content_hash", Label: "Code SHA-256", Value: version.ContentHash})
	}
	t.Facts = append(t.Facts, provenanceFacts(s.Provenance)...)
	t.Facts = append(t.Facts,
		figure{Key: "data", Label: "Data", Value: fmt.Sprintf("%s / %s, %s", s.Run.DataSource, symbols, s.Run.Timeframe)},
		figure{Key: "period", Label: "Period", Value: fmt.Sprintf("%s to %s", first, last)},
		figure{Key: "initial_cash", Label: "Initial cash", Value: formatValue(s.Run.InitialCash, fmtMoney)},
		figure{Key: "commission", Label: "Commission", Value: formatNumber(s.Run.Commission*100, 3) + "% of traded value"},
	)
	if zone != "" {
		t.Facts = append(t.Facts, figure{Key: "timezone", Label: "Times in", Value: zone})
	}

	values := s.Summary.Values()
	byKey := map[string]*float64{}
	for i, k := range results.SummaryKeys {
		byKey[k] = values[i]
	}
	for _, f := range summaryFields {
		v := byKey[f.key]
		tone := ""
		if v != nil && (f.format == fmtPctFraction || f.key == "avg_win" || f.key == "avg_loss") {
			tone = signClass(*v)
		}
		t.Headline = append(t.Headline, figure{Key: f.key, Label: f.label, Value: format(v, f.format), Tone: tone})
	}

	// Charts: equity with the benchmark, and drawdown below it on the same dates.
	times := make([]time.Time, len(s.Equity))
	eq := make([]float64, len(s.Equity))
	dd := make([]float64, len(s.Equity))
	for i, e := range s.Equity {
		times[i], eq[i], dd[i] = e.Time.In(loc), e.Value, -e.Drawdown
	}
	bench := benchValues(engine.BuyAndHold(s.Run.InitialCash, benchBars, s.Equity))
	series := []chartSeries{{Name: "Equity", Values: eq, Color: "#1f77b4", Width: 1.6}}
	if s.Run.Benchmark != "" && len(benchBars) > 0 {
		series = append(series, chartSeries{Name: "Benchmark: " + s.Run.Benchmark + " bought and held", Values: bench, Color: "#888", Width: 1.2, Dashed: true})
		t.BenchmarkNote = fmt.Sprintf("Dashed: the benchmark, %s bought with the same cash at its first close and held.", s.Run.Benchmark)
	}
	t.EquitySVG = chartSVG(chart{Title: "Equity", Height: 300, Times: times, Intraday: intraday, Series: series,
		YLabel: func(v, step float64) string { return formatNumber(v, decimalsFor(step)) }})
	t.DrawdownSVG = chartSVG(chart{Title: "Drawdown", Height: 150, Times: times, Intraday: intraday, ZeroTop: true,
		Series: []chartSeries{{Name: "Drawdown", Values: dd, Color: ColorDrawdown, Width: 1.2, Fill: AreaDrawdown}},
		YLabel: func(v, step float64) string { return formatNumber(v, decimalsFor(step)) + "%" }})

	// Statistics, by the record's groups, labels and units.
	for _, g := range stats.Groups {
		sg := statGroup{Name: g.Name}
		for _, m := range g.Metrics {
			sg.Metrics = append(sg.Metrics, figure{Key: m.Key, Label: m.Label, Value: conventionalOf(m.Display, m.Value), Note: m.Explanation})
		}
		t.Stats = append(t.Stats, sg)
	}
	if len(s.Analyzers) > 0 {
		a, err := results.DecodeAnalyzers(s.TaskID, s.Analyzers)
		if err != nil {
			return "", err
		}
		if a.Returns.Days > 0 { // results stored before these analyzers have none
			t.Stats = append(t.Stats, analyzerGroup(a))
		}
	}

	t.Monthly, t.Yearly = periodTables(s)

	t.Strategies = strategyRows(s.Strategies)
	strategyName := func(i int32) string {
		if len(s.Strategies) == 0 {
			return ""
		}
		if int(i) < len(s.Strategies) {
			return s.Strategies[i].Label
		}
		return strconv.Itoa(int(i))
	}

	// Trades: round trips, then every fill.
	for i, tr := range s.Trades {
		rt := results.RoundTripOf(i+1, tr)
		row := tripRow{Seq: rt.Seq, Strategy: strategyName(rt.Strategy), Symbol: rt.Symbol, Side: "Long", Entry: clock(rt.EntryDate), Exit: "open",
			Held: formatNumber(float64(rt.BarsHeld), 0) + " bars", Size: formatNumber(math.Abs(rt.Size), 0),
			EntryPrice: formatNumber(rt.EntryPrice, 2), ExitPrice: missing,
			PnL: formatValue(rt.PnLNet, fmtMoney), PnLClass: signClass(rt.PnLNet), Fees: formatValue(rt.Commission, fmtMoney), Return: missing}
		if rt.Size < 0 {
			row.Side = "Short"
		}
		if rt.BarsHeld == 1 {
			row.Held = "1 bar"
		}
		if rt.ExitDate != nil {
			row.Exit = clock(*rt.ExitDate)
		}
		if rt.ExitPrice != nil {
			row.ExitPrice = formatNumber(*rt.ExitPrice, 2)
		}
		if basis := math.Abs(rt.Size) * rt.EntryPrice; basis != 0 {
			r := rt.PnLNet / basis
			row.Return, row.ReturnClass = formatValue(r, fmtPctFraction), signClass(r)
		}
		t.Trips = append(t.Trips, row)
	}
	for _, e := range s.Executions {
		tr := results.TradeRowOf(e)
		row := fillRow{Date: clock(tr.Date), Strategy: strategyName(tr.Strategy), Symbol: tr.Symbol, Type: tr.Type, Price: formatNumber(tr.Price, 2),
			Size: formatNumber(tr.Size, 0), Value: formatValue(tr.Value, fmtMoney), Fees: formatValue(tr.Commission, fmtMoney), PnL: missing,
			Partial: tr.Status == engine.Partial.String()}
		if tr.PnL != 0 {
			row.PnL, row.PnLClass = formatValue(tr.PnL, fmtMoney), signClass(tr.PnL)
		}
		t.Fills = append(t.Fills, row)
	}

	t.Params = paramRows(s.Params(), version)
	t.Generated = time.Now().UTC().Format("2006-01-02 15:04") + " UTC"

	var out bytes.Buffer
	if err := reportTmpl().Execute(&out, t); err != nil {
		return "", fmt.Errorf("render report: %w", err)
	}
	return out.String(), nil
}

// strategyRows are the By strategy table's rows: the figures of the results page's table
// (web/src/views/results.ts, strategyTable) from what the strategies route serves.
func strategyRows(list []engine.StrategyResult) []strategyRow {
	rows := make([]strategyRow, len(list))
	for i, r := range list {
		rows[i] = strategyRow{Index: i, Name: r.Name, Orders: formatNumber(float64(r.Orders), 0), Fills: formatNumber(float64(r.Executions), 0),
			Trades: fmt.Sprintf("%s (%s won, %s lost)", formatNumber(float64(r.Trades), 0), formatNumber(float64(r.Won), 0), formatNumber(float64(r.Lost), 0)),
			Open:   formatNumber(float64(r.OpenTrades), 0), PnL: formatValue(r.PnLClosed, fmtMoney), PnLClass: signClass(r.PnLClosed),
			Commission: formatValue(r.Commission, fmtMoney), SQN: formatNumber(r.SQN.Value, 2), FirstNext: formatNumber(float64(r.FirstNext), 0)}
	}
	return rows
}

func signClass(v float64) string {
	switch {
	case v > 0:
		return "pos"
	case v < 0:
		return "neg"
	}
	return ""
}

// periodTables builds the monthly and yearly returns tables from the figures the API's
// monthly_returns and yearly_returns charts show (MonthlyReturns, YearlyReturns: the sums of
// the returns per bar, by the bars' UTC calendar dates), with the year's deepest drawdown, its last value and the round
// trips closed in it.
func periodTables(s *results.Stored) ([]monthRow, []yearRow) {
	years, grid := MonthlyReturns(s.Equity)
	ySums := map[int]float64{}
	yl, ys := YearlyReturns(s.Equity)
	for i, y := range yl {
		ySums[y] = ys[i]
	}
	// Months with bars (MonthlyReturns gives 0 for the others, which the table leaves blank).
	type ym struct{ y, m int }
	has := map[ym]bool{}
	maxDD := map[int]float64{}
	end := map[int]float64{}
	for _, e := range s.Equity {
		u := e.Time.UTC()
		has[ym{u.Year(), int(u.Month()) - 1}] = true
		maxDD[u.Year()] = math.Max(maxDD[u.Year()], e.Drawdown)
		end[u.Year()] = e.Value
	}
	closed := map[int]int{}
	for _, tr := range s.Trades {
		if tr.CloseTime != nil && !tr.IsOpen {
			closed[tr.CloseTime.UTC().Year()]++
		}
	}
	lim := 0.0
	for yi := range years {
		for m := range 12 {
			lim = math.Max(lim, math.Abs(grid[yi][m]))
		}
	}
	cell := func(v float64, present bool) heatCell {
		if !present {
			return heatCell{}
		}
		c := heatCell{Text: signed(v), Class: signClass(math.Round(v*100) / 100)}
		if lim > 0 && c.Class != "" {
			// four shades by size, as classes: a strict style-src allows the page's one <style>
			// element but not style attributes
			c.Class += fmt.Sprintf(" h%d", min(4, max(1, int(math.Ceil(4*math.Abs(v)/lim)))))
		}
		return c
	}
	var monthly []monthRow
	var yearly []yearRow
	for yi, y := range years {
		r := monthRow{Year: y}
		for m := range 12 {
			r.Cells = append(r.Cells, cell(grid[yi][m], has[ym{y, m}]))
		}
		r.Total = heatCell{Text: signed(ySums[y]), Class: signClass(math.Round(ySums[y]*100) / 100)}
		monthly = append(monthly, r)
		yearly = append(yearly, yearRow{Year: y, Return: formatValue(ySums[y], fmtPct), ReturnClass: r.Total.Class,
			MaxDrawdown: formatValue(maxDD[y], fmtPct), End: formatValue(end[y], fmtMoney), Trades: formatNumber(float64(closed[y]), 0)})
	}
	return monthly, yearly
}

// signed writes a percent figure with 2 decimals and a "+" before a positive one.
func signed(v float64) string {
	s := formatNumber(v, 2)
	if v > 0 && strings.ContainsAny(s, "123456789") {
		return "+" + s
	}
	return s
}

// paramRows lists every declared parameter with the value the run used (its override, else
// the default), then any value the run was given that the version does not declare.
func paramRows(used map[string]any, version *results.StrategyVersion) []paramRow {
	var declared []struct {
		Name        string `json:"name"`
		Default     any    `json:"default"`
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	if version != nil {
		_ = json.Unmarshal(version.Params, &declared)
	}
	var rows []paramRow
	seen := map[string]bool{}
	for _, p := range declared {
		seen[p.Name] = true
		row := paramRow{Name: p.Name, Default: paramText(p.Default, p.Type), Type: p.Type, Description: p.Description}
		row.Value = row.Default
		if v, ok := used[p.Name]; ok {
			row.Value = paramText(v, p.Type)
			row.Changed = row.Value != row.Default
		}
		rows = append(rows, row)
	}
	var extra []string
	for k := range used {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		rows = append(rows, paramRow{Name: k, Value: paramText(used[k], ""), Default: missing})
	}
	return rows
}

// paramText writes a parameter value as JSON would (numbers in full, not grouped: a value a
// person types back into a run), a whole float as Python writes it (2.0).
func paramText(v any, typ string) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if typ == "float" && x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// reportTmpl is parsed on first use, not at start-up of every command of the binary.
var reportTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(reportHTML))
})

// reportHTML colours gains green and losses red, the page's default convention (the API's
// chart options keep the reference's red-rising colours).
const reportHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · backtest {{.Task}}</title>
<style>
:root{--fg:#1d232a;--muted:#65707c;--line:#dde1e6;--pos:#1b8a5a;--neg:#c62828}
*{box-sizing:border-box}
body{font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;color:var(--fg)}
header{border-bottom:2px solid var(--fg);padding-bottom:8px;margin-bottom:12px}
h1{font-size:22px;margin:0 0 2px}h2{font-size:15px;margin:22px 0 6px;padding-bottom:3px;border-bottom:1px solid var(--line)}
h3{font-size:13px;margin:0 0 4px}
.sub,.muted{color:var(--muted)}.muted{font-size:11px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0 0;font-size:12px}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(6,1fr);gap:6px;margin:0;padding:0;list-style:none}
.card{border:1px solid var(--line);border-radius:4px;padding:6px 8px}
.card .label{display:block;color:var(--muted);font-size:11px}.card .value{display:block;font-size:16px;font-weight:600;font-variant-numeric:tabular-nums}
.pos{color:var(--pos)}.neg{color:var(--neg)}
figure{margin:0}figcaption{font-size:11px;color:var(--muted)}
svg{display:block;width:100%;height:auto}
svg text{font:10px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#4a535c}
table{border-collapse:collapse;width:100%;font-size:12px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:right;white-space:nowrap}
th{font-weight:600}thead th{background:#f4f6f8}th.l,td.l{text-align:left}td.wrap{white-space:normal}
thead{display:table-header-group}tr{break-inside:avoid}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:12px;align-items:start}
.stats td.l{color:var(--fg)}
table.months td,table.months th{padding:3px 4px}
td.pos.h1{background:rgba(27,138,90,.1)}td.pos.h2{background:rgba(27,138,90,.22)}td.pos.h3{background:rgba(27,138,90,.36)}td.pos.h4{background:rgba(27,138,90,.5)}
td.neg.h1{background:rgba(198,40,40,.1)}td.neg.h2{background:rgba(198,40,40,.22)}td.neg.h3{background:rgba(198,40,40,.36)}td.neg.h4{background:rgba(198,40,40,.5)}
td.changed{font-weight:600}
footer{margin-top:24px;color:var(--muted);font-size:11px}
ul.findings{list-style:none;margin:0;padding:0}li.finding{padding:2px 0 2px 8px;border-left:3px solid var(--line);margin:3px 0}
li.finding.warning{border-left-color:#bf8700}li.finding.critical{border-left-color:var(--neg)}li.finding.info{color:var(--muted)}
@page{size:A4;margin:14mm 12mm}
@media print{
 body{margin:0;max-width:none;padding:0;font-size:10px}
 h1{font-size:18px}h2{font-size:13px;margin-top:14px}
 .card .value{font-size:13px}table{font-size:9.5px}th,td{padding:2px 4px}
 .cards{grid-template-columns:repeat(6,1fr)}
 section,figure,.stats>table{break-inside:avoid}
 section.trades{break-before:page}section.trades table{break-inside:auto}
 th{-webkit-print-color-adjust:exact;print-color-adjust:exact}td{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
@media (max-width:700px){.cards{grid-template-columns:repeat(2,1fr)}.scroll{overflow-x:auto}}
</style></head><body>
<header>
<h1>{{.Title}}</h1>
<div class="sub">{{.Subtitle}}</div>
<dl class="facts">{{range .Facts}}<dt>{{.Label}}</dt><dd data-key="{{.Key}}">{{.Value}}</dd>{{end}}</dl>
</header>

{{if .Findings}}<section aria-label="Findings" id="findings">
<h2>Findings</h2>
<ul class="findings">{{range .Findings}}<li class="finding {{.Severity}}" data-finding="{{.ID}}" data-severity="{{.Severity}}"><strong>{{.Severity}}: {{.Title}}.</strong> {{.Detail}}</li>{{end}}</ul>
</section>
{{end}}
<section aria-label="Headline figures">
<ul class="cards" id="headline">{{range .Headline}}<li class="card" data-key="{{.Key}}"><span class="label">{{.Label}}</span><span class="value {{.Tone}}">{{.Value}}</span></li>{{end}}</ul>
</section>

<section>
<h2>Equity</h2>
<figure>{{.EquitySVG}}<figcaption>Portfolio value at each bar's close{{if .Zone}} (times in {{.Zone}}){{end}}. {{.BenchmarkNote}}</figcaption></figure>
<h2>Drawdown</h2>
<figure>{{.DrawdownSVG}}<figcaption>Fall of the portfolio value below its running peak, in percent of the peak.</figcaption></figure>
</section>

<section>
<h2>Statistics</h2>
<div class="stats">{{range .Stats}}<table class="stat-group"><thead><tr><th class="l" colspan="2">{{.Name}}</th></tr></thead><tbody>
{{range .Metrics}}<tr><td class="l" title="{{.Note}}">{{.Label}}</td><td data-key="{{.Key}}">{{.Value}}</td></tr>{{end}}
</tbody></table>{{end}}</div>
</section>

<section>
<h2>Monthly returns (%)</h2>
<div class="scroll"><table class="months" id="monthly-returns"><thead><tr><th class="l">Year</th>{{range .Months}}<th>{{.}}</th>{{end}}<th>Year</th></tr></thead><tbody>
{{range .Monthly}}<tr><th class="l">{{.Year}}</th>{{range .Cells}}<td class="{{.Class}}">{{.Text}}</td>{{end}}<td class="{{.Total.Class}}"><b>{{.Total.Text}}</b></td></tr>
{{end}}</tbody></table></div>
<p class="muted">Each cell sums the returns per bar of the month (as the statistics' best and worst month do); blank: no bars.</p>
<h2>Yearly returns</h2>
<div class="scroll"><table id="yearly-returns"><thead><tr><th class="l">Year</th><th>Return</th><th>Max drawdown</th><th>Value at year end</th><th>Trades closed</th></tr></thead><tbody>
{{range .Yearly}}<tr><th class="l">{{.Year}}</th><td class="{{.ReturnClass}}">{{.Return}}</td><td>{{.MaxDrawdown}}</td><td>{{.End}}</td><td>{{.Trades}}</td></tr>
{{end}}</tbody></table></div>
</section>

<section>
<h2>Parameters</h2>
{{if .Params}}<div class="scroll"><table id="parameters"><thead><tr><th class="l">Name</th><th class="l">Value</th><th class="l">Default</th><th class="l">Type</th><th class="l">Description</th></tr></thead><tbody>
{{range .Params}}<tr><td class="l"><code>{{.Name}}</code></td><td class="l{{if .Changed}} changed{{end}}" data-key="{{.Name}}">{{.Value}}</td><td class="l">{{.Default}}</td><td class="l">{{.Type}}</td><td class="l wrap">{{.Description}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="muted">The strategy has no parameters.</p>{{end}}
</section>

{{if .Strategies}}<section>
<h2>By strategy</h2>
<div class="scroll"><table id="strategies"><thead><tr><th class="l">#</th><th class="l">Strategy</th><th>Orders</th><th>Fills</th><th title="Closed round trips (won, lost)">Trades</th><th title="Round trips still open at the end">Open</th><th title="Of its closed round trips">Net P&amp;L</th><th>Commission</th><th title="Of its own closed round trips; the run&#39;s SQN counts every strategy&#39;s">SQN</th><th title="Bar of its first next(): the end of its own warm-up">First next</th></tr></thead><tbody>
{{range .Strategies}}<tr data-strategy="{{.Index}}"><td class="l muted">{{.Index}}</td><th class="l">{{.Name}}</th><td>{{.Orders}}</td><td>{{.Fills}}</td><td>{{.Trades}}</td><td>{{.Open}}</td><td class="{{.PnLClass}}">{{.PnL}}</td><td>{{.Commission}}</td><td>{{.SQN}}</td><td>{{.FirstNext}}</td></tr>
{{end}}</tbody></table></div>
<p class="muted">The strategies ran on one broker: the cash and each feed's position are shared, the orders, fills and round trips are each strategy's own.</p>
</section>

{{end}}<section class="trades">
<h2>Trades</h2>
{{if .Trips}}<div class="scroll"><table id="round-trips"><thead><tr><th>#</th>{{if .MultiFeed}}<th class="l">Symbol</th>{{end}}{{if .Strategies}}<th class="l">Strategy</th>{{end}}<th class="l">Side</th><th class="l">Entry</th><th class="l">Exit</th><th>Held</th><th>Size</th><th>Entry price</th><th>Exit price</th><th>Net P&amp;L</th><th>Fees</th><th>Return</th></tr></thead><tbody>
{{range .Trips}}<tr><td class="muted">{{.Seq}}</td>{{if $.MultiFeed}}<td class="l">{{.Symbol}}</td>{{end}}{{if $.Strategies}}<td class="l">{{.Strategy}}</td>{{end}}<td class="l">{{.Side}}</td><td class="l">{{.Entry}}</td><td class="l">{{.Exit}}</td><td>{{.Held}}</td><td>{{.Size}}</td><td>{{.EntryPrice}}</td><td>{{.ExitPrice}}</td><td class="{{.PnLClass}}">{{.PnL}}</td><td>{{.Fees}}</td><td class="{{.ReturnClass}}">{{.Return}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="muted">No trades.</p>{{end}}
<h2>Executions</h2>
{{if .Fills}}<div class="scroll"><table id="executions"><thead><tr><th class="l">Date</th>{{if .MultiFeed}}<th class="l">Symbol</th>{{end}}{{if .Strategies}}<th class="l">Strategy</th>{{end}}<th class="l">Type</th><th>Price</th><th>Size</th><th>Value</th><th>Fees</th><th>Realised P&amp;L</th></tr></thead><tbody>
{{range .Fills}}<tr><td class="l">{{.Date}}</td>{{if $.MultiFeed}}<td class="l">{{.Symbol}}</td>{{end}}{{if $.Strategies}}<td class="l">{{.Strategy}}</td>{{end}}<td class="l">{{.Type}}{{if .Partial}} <span class="muted" title="filled in part: the rest of the order fills on later bars">partial</span>{{end}}</td><td>{{.Price}}</td><td>{{.Size}}</td><td>{{.Value}}</td><td>{{.Fees}}</td><td class="{{.PnLClass}}">{{.PnL}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="muted">No executions.</p>{{end}}
</section>

<footer>Backtest {{.Task}} · generated by backtestd on {{.Generated}} · figures as the API serves them: money without currency, returns in percent.</footer>
</body></html>
`

// provenanceFacts are the tearsheet's lines of the run's provenance: the engine that ran
// it and the fingerprint of each series it read (none when no provenance was recorded).
func provenanceFacts(raw json.RawMessage) []figure {
	if len(raw) == 0 {
		return nil
	}
	var p provenance.Provenance
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil
	}
	out := []figure{{Key: "engine_version", Label: "Engine", Value: p.EngineVersion}}
	for _, f := range p.Data {
		v := fmt.Sprintf("%d bars, sha256 %s", f.Bars, f.SHA256)
		if f.First != nil && f.Last != nil {
			v = fmt.Sprintf("%d bars %s → %s, sha256 %s", f.Bars, f.First.Format(time.DateOnly), f.Last.Format(time.DateOnly), f.SHA256)
		}
		out = append(out, figure{Key: "data_sha256_" + f.Symbol, Label: "Data " + f.Symbol + " " + f.Timeframe, Value: v})
	}
	return out
}
