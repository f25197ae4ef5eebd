package report

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/csvsafe"
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
	// Analyzers are the run's analyzers (engine.Analyzers): backtrader's figures and its
	// pyfolio report.
	Analyzers engine.Analyzers `json:"analyzers"`
	// Provenance is the run's provenance.Provenance; null when none was recorded.
	Provenance json.RawMessage `json:"provenance"`
	// Strategies is each strategy's part of a run of several (empty for one); the trades'
	// and round trips' strategy is an index into it.
	Strategies []engine.StrategyResult `json:"strategies"`
}

// ExportJSON returns taskID's result as a bare result object (api/openapi.yaml's Result).
func (svc *Service) ExportJSON(ctx context.Context, taskID string) (*Document, error) {
	e, err := svc.LoadJSONExport(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return e.document()
}

// JSONExport is a result loaded for its JSON export.
type JSONExport struct {
	s         *results.Stored
	analyzers engine.Analyzers
}

// LoadJSONExport reads taskID's result for its JSON export.
func (svc *Service) LoadJSONExport(ctx context.Context, taskID string) (*JSONExport, error) {
	s, err := svc.results.Load(ctx, taskID, results.All)
	if err != nil {
		return nil, err
	}
	a, err := results.DecodeAnalyzers(taskID, s.Analyzers)
	if err != nil {
		return nil, err
	}
	if err := svc.results.RestorePositions(ctx, taskID, &a); err != nil {
		return nil, err
	}
	return &JSONExport{s: s, analyzers: a}, nil
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
	o.b = append(o.b, `,"analyzers":`...)
	o.b = appendEncoded(o.b, e.analyzers)
	o.b = append(o.b, `,"provenance":`...)
	o.b = appendEncoded(o.b, provenanceOf(s))
	o.b = append(o.b, `,"strategies":`...)
	o.b = appendEncoded(o.b, strategiesOf(s))
	o.b = append(o.b, "}\n"...)
	o.flush()
	return o.err
}

func (e *JSONExport) document() (*Document, error) {
	s := e.s
	d := &Document{TaskID: s.TaskID, Status: "completed", Summary: s.Summary, Analyzers: e.analyzers, Provenance: provenanceOf(s), Strategies: strategiesOf(s),
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
	return d, nil
}

// strategiesOf is s's strategies as the export writes them: [] for a run of one.
func strategiesOf(s *results.Stored) []engine.StrategyResult {
	if s.Strategies == nil {
		return []engine.StrategyResult{}
	}
	return s.Strategies
}

// provenanceOf is s's provenance as the export writes it: null when none was recorded.
func provenanceOf(s *results.Stored) json.RawMessage {
	if len(s.Provenance) == 0 {
		return json.RawMessage("null")
	}
	return s.Provenance
}

// CSV labels: the export's fixed header and section texts, which clients parse.
const (
	csvSummaryHeader = "metric,value"
	csvTradesLabel   = "Trades"
	csvTradesHeader  = "date,type,price,size,pnl"
	// csvStatusColumn is added to the trades section of a result with partial fills: the
	// order's status after each execution. Others keep the five columns of the spec.
	csvStatusColumn = "status"
)

// num writes a number in plain decimal notation; nil is empty.
func num(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// ExportCSV returns taskID's result in the API's CSV layout: `metric,value` and the 12
// summary rows, an empty row, the `Trades` label row, `date,type,price,size,pnl` and one
// row per execution; `,status` ends the header and each row when an order filled in parts.
func (svc *Service) ExportCSV(ctx context.Context, taskID string) (string, error) {
	s, err := svc.results.Load(ctx, taskID, results.Executions)
	if err != nil {
		return "", err
	}
	return csvText(s), nil
}

func csvText(s *results.Stored) string {
	var b bytes.Buffer
	w := csvsafe.NewWriter(&b) // text cells that a spreadsheet would evaluate are written as text
	b.WriteString(csvSummaryHeader + "\n")
	for i, v := range s.Summary.Values() {
		_ = w.Write([]string{results.SummaryKeys[i], num(v)})
	}
	w.Flush()
	partial := slices.ContainsFunc(s.Executions, func(e engine.Execution) bool { return e.Status == engine.Partial.String() })
	// A run of several strategies adds a column: the strategy whose order filled.
	several := len(s.Strategies) > 0
	header := csvTradesHeader
	if partial {
		header += "," + csvStatusColumn
	}
	if several {
		header += ",strategy"
	}
	b.WriteString("\n" + csvTradesLabel + "\n" + header + "\n")
	for _, e := range s.Executions {
		t := results.TradeRowOf(e)
		row := []string{t.Date, t.Type, num(&t.Price), num(&t.Size), num(&t.PnL)}
		if partial {
			row = append(row, t.Status)
		}
		if several {
			name := ""
			if e.Strategy < len(s.Strategies) {
				name = s.Strategies[e.Strategy].Label
			}
			row = append(row, name)
		}
		_ = w.Write(row)
	}
	w.Flush()
	return b.String()
}

// CheckExportFormat is the 400 for an unknown export format.
func CheckExportFormat(format string) error {
	for _, f := range ExportFormats {
		if f == format {
			return nil
		}
	}
	return apperr.Invalid("Unsupported export format: %s", format)
}

// ExportHTML returns taskID's tearsheet: a self-contained page (no scripts, no external
// assets: charts are inline SVG), readable offline and printable on A4 (tearsheet.go).
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
	version, err := svc.results.StrategyVersion(ctx, s.Run.StrategyID, s.Run.StrategyVersion)
	if err != nil {
		return "", err
	}
	fs, err := svc.results.Findings(ctx, taskID)
	if err != nil {
		return "", err
	}
	return html(s, stats, bars, version, fs)
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
