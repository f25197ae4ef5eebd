package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/tabular"
)

// importBodyLimit bounds a bar import body (about 2.5 million CSV rows).
const importBodyLimit = 128 << 20

// mountData mounts Data-source routes under /api/data. The literal `sources`, `symbols` and
// `update` segments are registered before the generic {symbol} form.
func (s *Server) mountData(r chi.Router) {
	r.Route("/api/data", func(r chi.Router) {
		r.Get("/sources", s.handle(s.dataSources))
		r.Route("/{source}", func(r chi.Router) {
			r.Get("/symbols", s.handle(s.dataSymbols))
			r.Post("/update", s.handle(s.dataUpdate))
			r.Get("/{symbol}", s.handle(s.dataBars))
			r.Get("/{symbol}/chart", s.handle(s.dataChart))
			r.Get("/{symbol}/versions", s.handle(s.dataVersions))
			r.Post("/{symbol}/bars", s.handle(s.dataImport))
		})
	})
}

func (s *Server) dataSources(w http.ResponseWriter, r *http.Request) error {
	list, err := s.data.Sources(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

func (s *Server) dataSymbols(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", symbolsDefaultLimit, 1, marketdata.MaxSymbolsLimit)
	if err != nil {
		return err
	}
	list, err := s.data.Symbols(r.Context(), chi.URLParam(r, "source"), r.URL.Query().Get("search"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

// barJSON is api/openapi.yaml's Bar.
type barJSON struct {
	Datetime string  `json:"datetime"`
	Open     float64 `json:"open"`
	High     float64 `json:"high"`
	Low      float64 `json:"low"`
	Close    float64 `json:"close"`
	Volume   int64   `json:"volume"`
}

func requiredDay(r *http.Request, name string) (time.Time, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return time.Time{}, apperr.Invalid("Data retrieval failed: %s is required (YYYY-MM-DD)", name)
	}
	return marketdata.ParseDay(name, raw)
}

// symbolBars reads the bars the symbol routes ask for: source and symbol from the path,
// start_date and end_date (required), timeframe (default 1d) and version (default the
// latest) from the query. loc is the symbol's time zone.
func (s *Server) symbolBars(r *http.Request) (bars []engine.Bar, tf string, loc *time.Location, err error) {
	source, symbol := chi.URLParam(r, "source"), chi.URLParam(r, "symbol")
	if err := s.data.CheckSource(r.Context(), source); err != nil {
		return nil, "", nil, err
	}
	start, err := requiredDay(r, "start_date")
	if err != nil {
		return nil, "", nil, err
	}
	end, err := requiredDay(r, "end_date")
	if err != nil {
		return nil, "", nil, err
	}
	tf = queryDefault(r, "timeframe", marketdata.DefaultTimeframe)
	version, err := queryInt(r, "version", 0, 1, math.MaxInt32)
	if err != nil {
		return nil, "", nil, err
	}
	bars, loc, err = s.data.BarsAt(r.Context(), source, symbol, start, end, tf, version)
	return bars, tf, loc, err
}

// dataVersions lists a symbol's immutable bar versions, newest first.
func (s *Server) dataVersions(w http.ResponseWriter, r *http.Request) error {
	list, err := s.data.Versions(r.Context(), chi.URLParam(r, "source"), chi.URLParam(r, "symbol"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(list))
	return nil
}

func (s *Server) dataBars(w http.ResponseWriter, r *http.Request) error {
	format := queryDefault(r, "format", "json")
	if format != "json" && format != "parquet" {
		return apperr.Invalid("Unsupported format: %q (use json or parquet)", format)
	}
	bars, tf, loc, err := s.symbolBars(r)
	if err != nil {
		return err
	}
	symbol := chi.URLParam(r, "symbol")
	if format == "parquet" {
		return writeBarsParquet(w, bars, chi.URLParam(r, "source")+"-"+symbol+"-"+tf)
	}
	out := make([]barJSON, len(bars))
	for i, b := range bars {
		out[i] = barJSON{Datetime: marketdata.FormatBarTime(b.Time, tf), Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume}
	}
	writeJSON(w, http.StatusOK, ok(map[string]any{"symbol": symbol, "timeframe": tf, "timezone": loc.String(), "bars": out}))
	return nil
}

// dataChart is the candlestick chart (price, MA5/10/20, volume) of a symbol's bars, built
// as a result's candlestick chart is.
func (s *Server) dataChart(w http.ResponseWriter, r *http.Request) error {
	bars, _, _, err := s.symbolBars(r)
	if err != nil {
		return err
	}
	chart, err := report.BuildChart("candlestick", report.ChartInput{Bars: bars})
	if err != nil {
		return err
	}
	writeChart(w, chart)
	return nil
}

func (s *Server) dataImport(w http.ResponseWriter, r *http.Request) error {
	source, symbol := chi.URLParam(r, "source"), chi.URLParam(r, "symbol")
	if err := s.data.CheckSource(r.Context(), source); err != nil {
		return err
	}
	tf := r.URL.Query().Get("timeframe")
	if tf != "" {
		if err := marketdata.CheckTimeframe(tf); err != nil {
			return err
		}
	}
	loc, err := s.data.ImportZone(r.Context(), source, symbol, r.URL.Query().Get("timezone"))
	if err != nil {
		return err
	}
	// CSV or JSON, declared as such: neither is a type another site's page may send
	// without a CORS preflight (text/plain and forms are), and JSON passes the same
	// checks as every JSON body (validJSON).
	if err := requireMediaType(r, "text/csv", "application/json", marketdata.ParquetContentType); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, importBodyLimit)
	var bars []engine.Bar
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == marketdata.ParquetContentType {
		bars, err = marketdata.ParseParquet(body, loc)
	} else if mt == "application/json" {
		var raw []byte
		if raw, err = io.ReadAll(body); err == nil {
			if err = validJSON(raw); err != nil {
				return err
			}
			bars, err = marketdata.ParseJSON(bytes.NewReader(raw), loc)
		}
	} else {
		bars, err = marketdata.ParseCSV(body, loc)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) || strings.Contains(err.Error(), "request body too large") {
			return &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf("Request body too large: the limit is %d bytes", importBodyLimit)}
		}
		return err
	}
	res, err := s.data.ImportAs(r.Context(), auth.By(caller(r)), source, symbol, r.URL.Query().Get("name"), tf, loc, bars)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: fmt.Sprintf("Imported %d bars for %s/%s (%d new, %d updated, %d unchanged)",
		res.Received, source, symbol, res.Inserted, res.Updated, res.Unchanged), Data: res})
	return nil
}

func (s *Server) dataUpdate(w http.ResponseWriter, r *http.Request) error {
	source := chi.URLParam(r, "source")
	if err := s.data.CheckSource(r.Context(), source); err != nil {
		return err
	}
	symbol := r.URL.Query().Get("symbol")
	if symbol == "" {
		return apperr.Unprocessable("Query parameter 'symbol' is required")
	}
	force := false
	if raw := r.URL.Query().Get("force"); raw != "" {
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return apperr.Unprocessable("Query parameter 'force': expected true or false, got '%s'", raw)
		}
		force = v
	}
	id, dup, err := s.data.EnqueueUpdate(r.Context(), source, symbol, force)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Update task created for %s/%s", source, symbol)
	if dup {
		msg = fmt.Sprintf("Update task already pending for %s/%s", source, symbol)
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: msg, Data: map[string]any{
		"job_id": id, "source": source, "symbol": symbol, "force": force, "already_pending": dup,
	}})
	return nil
}

// writeBarsParquet answers bars as a Parquet bars file (tabular.WriteBars), the layout the
// import reads back.
func writeBarsParquet(w http.ResponseWriter, bars []engine.Bar, name string) error {
	var b bytes.Buffer
	if err := tabular.WriteBars(&b, bars); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	w.Header().Set("Content-Type", tabular.ParquetContentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.parquet"`, name))
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes()) // an error is the client gone
	return nil
}
