package httpapi

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/tabular"
)

// mountResults mounts Result routes under /api/results.
func (s *Server) mountResults(r chi.Router) {
	r.Route("/api/results", func(r chi.Router) {
		r.Get("/compare", s.handle(s.compareResults))
		r.Route("/{task_id}", func(r chi.Router) {
			r.Get("/summary", s.handle(s.resultSummary))
			r.Get("/trades", s.handle(s.resultTrades))
			r.Get("/chart", s.handle(s.resultChart))
			r.Get("/statistics", s.handle(s.resultStatistics))
			r.Get("/symbols", s.handle(s.resultSymbols))
			r.Get("/strategies", s.handle(s.resultStrategies))
			r.Get("/analyzers", s.handle(s.resultAnalyzers))
			r.Get("/drawdowns", s.handle(s.resultDrawdowns))
			r.Get("/montecarlo", s.handle(s.resultMonteCarlo))
			r.Get("/export", s.handle(s.resultExport))
			r.Get("/diff", s.handle(s.resultDiff))
			r.Get("/findings", s.handle(s.resultFindings))
			r.Get("/significance", s.handle(s.resultSignificance))
		})
	})
}

// heavy admits a read that holds about cost bytes while it is built and written (what
// names it in a 413) into the budget of heavy reads, and guards its answer against a client
// that stops reading: the answer goes to the returned writer, and done, called once it is
// written, frees the read's share.
func (s *Server) heavy(w http.ResponseWriter, r *http.Request, cost int64, what string) (http.ResponseWriter, func(), error) {
	release, err := s.reads.admit(r.Context(), w, cost, what)
	if err != nil {
		return w, nil, err
	}
	gw, clear := s.reads.guard(w)
	return gw, func() { clear(); release() }, nil
}

// queryDefault reads a string query parameter with a default.
func queryDefault(r *http.Request, name, def string) string {
	if v, ok := r.URL.Query()[name]; ok && len(v) > 0 {
		return v[0]
	}
	return def
}

func (s *Server) resultSummary(w http.ResponseWriter, r *http.Request) error {
	sum, err := s.results.GetSummary(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(sum))
	return nil
}

func (s *Server) resultFindings(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.results.Findings(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(fs))
	return nil
}

func (s *Server) resultTrades(w http.ResponseWriter, r *http.Request) error {
	skip, limit, err := paging(r, tradesDefaultLimit, tradesMaxLimit)
	if err != nil {
		return err
	}
	page, err := s.results.Trades(r.Context(), chi.URLParam(r, "task_id"), r.URL.Query().Get("kind"), skip, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(page))
	return nil
}

func (s *Server) resultChart(w http.ResponseWriter, r *http.Request) error {
	var view report.View
	var err error
	if view.From, err = queryTime(r, "from", false); err != nil {
		return err
	}
	if view.To, err = queryTime(r, "to", true); err != nil {
		return err
	}
	if !view.From.IsZero() && !view.To.IsZero() && view.To.Before(view.From) {
		return apperr.Invalid("from %s is after to %s", r.URL.Query().Get("from"), r.URL.Query().Get("to"))
	}
	if view.MaxPoints, err = queryInt(r, "max_points", report.DefaultMaxPoints, 0, math.MaxInt32); err != nil {
		return err
	}
	if view.MaxPoints > 0 && view.MaxPoints < report.MinMaxPoints {
		return apperr.Invalid("Invalid max_points '%d': 0 for every point, or at least %d", view.MaxPoints, report.MinMaxPoints)
	}
	if view.MovingAverages, err = movingAverages(r.URL.Query().Get("ma")); err != nil {
		return err
	}
	id, chartType := chi.URLParam(r, "task_id"), queryDefault(r, "chart_type", "candlestick")
	// The chart holds the result's rows while it is built and written, whatever it shows.
	cost, err := s.report.ChartCost(r.Context(), id, chartType)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, fmt.Sprintf("The %s chart of %s", chartType, id))
	if err != nil {
		return err
	}
	defer done()
	chart, err := s.report.Chart(r.Context(), id, chartType, r.URL.Query().Get("symbol"), view)
	if err != nil {
		return err
	}
	writeChart(w, chart)
	return nil
}

// maxMovingAverages bounds the candlestick chart's moving averages: more is noise.
const maxMovingAverages = 5

// movingAverages parses the candlestick chart's ma query: comma-separated periods.
func movingAverages(v string) ([]int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 || n > 1000 {
			return nil, apperr.Invalid("Invalid ma '%s': comma-separated periods from 2 to 1000", v)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > maxMovingAverages {
		return nil, apperr.Invalid("Invalid ma '%s': at most %d periods", v, maxMovingAverages)
	}
	return out, nil
}

// writeChart writes the envelope ok(chart) as writeJSON would, with the chart (about 1.5 MB
// for 10,000 bars, 60 MB for 300,000 intraday bars) encoded by its own one-pass writer as
// it goes, through a buffer of 64 KB.
func writeChart(w http.ResponseWriter, chart *report.ChartConfig) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = chart.WriteJSON(w, `{"code":"ok","message":"success","data":`, "}\n") // an error is the client gone
}

func (s *Server) resultSymbols(w http.ResponseWriter, r *http.Request) error {
	list, err := s.results.Symbols(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

// resultStrategies answers each strategy's part of a run of several (empty for one).
func (s *Server) resultStrategies(w http.ResponseWriter, r *http.Request) error {
	list, err := s.results.Strategies(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

// resultAnalyzers answers the analyzers the run computed (backtrader's, engine.Analyzers).
func (s *Server) resultAnalyzers(w http.ResponseWriter, r *http.Request) error {
	a, err := s.results.Analyzers(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(a))
	return nil
}

// resultDrawdowns lists a result's deepest drawdown periods; limit (1–100, default 10).
func (s *Server) resultDrawdowns(w http.ResponseWriter, r *http.Request) error {
	n, err := queryInt(r, "limit", 10, 1, 100)
	if err != nil {
		return err
	}
	id := chi.URLParam(r, "task_id")
	cost, err := s.report.DrawdownsCost(r.Context(), id)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, "The drawdowns of "+id)
	if err != nil {
		return err
	}
	defer done()
	list, err := s.report.Drawdowns(r.Context(), id, n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

func (s *Server) resultStatistics(w http.ResponseWriter, r *http.Request) error {
	stats, err := s.results.Statistics(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(stats))
	return nil
}

// csvEnvelope is the CSV export's answer: the envelope plus the content type.
type csvEnvelope struct {
	Envelope
	ContentType string `json:"content_type"`
}

func (s *Server) resultExport(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "task_id")
	format := queryDefault(r, "format", "json")
	if table := r.URL.Query().Get("table"); table != "" || format == "parquet" {
		return s.resultExportTable(w, r, id, table, format)
	}
	if err := report.CheckExportFormat(format); err != nil {
		return err
	}
	ctx := r.Context()
	cost, err := s.report.ExportCost(ctx, id, format)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, fmt.Sprintf("The %s export of %s", format, id))
	if err != nil {
		return err
	}
	defer done()
	switch format {
	case "csv":
		text, err := s.report.ExportCSV(ctx, id)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, csvEnvelope{Envelope: ok(text), ContentType: "text/csv"})
	case "html":
		page, err := s.report.ExportHTML(ctx, id)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="backtest-%s.html"`, id))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(page))
	default:
		doc, err := s.report.LoadJSONExport(ctx, id)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_ = doc.WriteJSON(w) // an error is the client gone
	}
	return nil
}

// resultExportTable answers one table of a result (report.ExportTables) as plain CSV or
// Parquet, with no envelope, for a notebook to read as it is.
func (s *Server) resultExportTable(w http.ResponseWriter, r *http.Request, id, table, format string) error {
	if table == "" {
		return apperr.Invalid("format=%s exports one table: add table=%s", format, strings.Join(report.ExportTables, "|"))
	}
	if err := report.CheckExportTable(table, format); err != nil {
		return err
	}
	cost, err := s.report.ExportCost(r.Context(), id, format)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, fmt.Sprintf("The %s %s export of %s", table, format, id))
	if err != nil {
		return err
	}
	defer done()
	t, err := s.report.ExportTable(r.Context(), id, table)
	if err != nil {
		return err
	}
	return writeTable(w, t, format, fmt.Sprintf("backtest-%s-%s", id, table))
}

// writeTable answers t in format (tabular.Formats) as a download named name.
func writeTable(w http.ResponseWriter, t tabular.Table, format, name string) error {
	// Parquet's footer comes last, so the file is built before the status is sent: a
	// failure is still an error answer, not a truncated file.
	var b bytes.Buffer
	if err := tabular.Write(&b, t, format); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	w.Header().Set("Content-Type", tabular.ContentType(format))
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s.%s"`, name, format))
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes()) // an error is the client gone
	return nil
}

func (s *Server) compareResults(w http.ResponseWriter, r *http.Request) error {
	ids, err := report.ParseTaskIDs(r.URL.Query().Get("task_ids"))
	if err != nil {
		return err
	}
	format := queryDefault(r, "format", "json")
	if format != "json" && format != "csv" {
		return apperr.Invalid("Unsupported export format: %s", format)
	}
	cost, err := s.report.CompareCost(r.Context(), ids)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, "The comparison of "+strings.Join(ids, ", "))
	if err != nil {
		return err
	}
	defer done()
	c, err := s.report.Compare(r.Context(), ids)
	if err != nil {
		return err
	}
	if format == "csv" {
		writeJSON(w, http.StatusOK, csvEnvelope{Envelope: ok(c.CSV()), ContentType: "text/csv"})
		return nil
	}
	writeJSON(w, http.StatusOK, ok(c))
	return nil
}
