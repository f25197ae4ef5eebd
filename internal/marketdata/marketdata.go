// Package marketdata is the data-source registry and the bars behind it: the built-in source
// (bars stored in PostgreSQL), its generated sample data, bar import (all or nothing, upsert),
// reads with timeframe aggregation, and the River job that refreshes a symbol from the
// source's watched import directory.
//
// User-facing failures are apperr values with the texts api/openapi.yaml documents; anything
// else is an internal error.
package marketdata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/store"
)

// BuiltinSource is the name of the built-in source: bars stored in PostgreSQL. It is the
// default data source of a backtest task (data_sources.is_default).
const BuiltinSource = "builtin"

// BuiltinDescription describes the built-in source in the registry.
const BuiltinDescription = "Built-in source: historical bars stored in PostgreSQL (sample data, imports and the watched import folder)"

// MaxSymbolsLimit is the maximum `limit` of the symbol listing.
const MaxSymbolsLimit = 1000

// The dates the service accepts, both included: bar times on import (by their UTC day) and
// the start and end dates of a backtest. Anything outside is a typing mistake (a two-digit
// year, a timestamp in the wrong unit), not market data.
const (
	MinDay = "1900-01-01"
	MaxDay = "2200-01-01"
)

var (
	minDate = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDate = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// InDateRange reports whether t's UTC day is from MinDay to MaxDay.
func InDateRange(t time.Time) bool {
	return !t.Before(minDate) && t.Before(maxDate.AddDate(0, 0, 1))
}

// DateRangeText is the rule InDateRange checks, as error details state it.
const DateRangeText = "dates must be from " + MinDay + " to " + MaxDay

var q = store.New()

// Service is the market data the API serves: the source registry, symbols, bars (with
// timeframe aggregation), imports and queued refreshes.
type Service struct {
	st    *store.Store
	queue Inserter // enqueues refresh jobs; nil: refreshes cannot be queued
	zones Zones
}

// NewService returns a Service over st that queues refreshes with queue (may be nil).
func NewService(st *store.Store, queue Inserter) *Service { return &Service{st: st, queue: queue} }

// SourceInfo is a registry entry as the API lists it.
type SourceInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SymbolInfo is a symbol entry as the API lists it.
type SymbolInfo struct {
	Symbol   string `json:"symbol"`
	Name     string `json:"name"`
	Timezone string `json:"timezone"` // IANA name: the zone of its data's times
	// ImportedBy is the user who last imported its bars; nil for sample data, refreshes
	// and imports without accounts.
	ImportedBy *string `json:"imported_by"`
	// Ranges are its stored bars by timeframe, so a page can offer the dates it has.
	Ranges []SymbolRange `json:"ranges"`
}

// SymbolRange is what a symbol holds of one timeframe.
type SymbolRange struct {
	Timeframe string    `json:"timeframe"`
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
	Bars      int64     `json:"bars"`
}

// Sources lists the registered data sources, the default first.
func (svc *Service) Sources(ctx context.Context) ([]SourceInfo, error) {
	rows, err := q.ListDataSources(ctx, svc.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("list data sources: %w", err)
	}
	out := make([]SourceInfo, len(rows))
	for i, r := range rows {
		out[i] = SourceInfo{Name: r.Name, Description: r.Description}
	}
	return out, nil
}

// CheckSource returns a 404 apperr when source is not registered.
func (svc *Service) CheckSource(ctx context.Context, source string) error {
	if _, err := q.GetDataSource(ctx, svc.st.Pool, source); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("Data source not found: %s", source)
		}
		return fmt.Errorf("get data source %s: %w", source, err)
	}
	return nil
}

// Symbols lists up to limit symbols of source whose ticker or name contains search.
func (svc *Service) Symbols(ctx context.Context, source, search string, limit int) ([]SymbolInfo, error) {
	if limit < 1 || limit > MaxSymbolsLimit {
		return nil, apperr.Invalid("limit must be between 1 and %d, got %d", MaxSymbolsLimit, limit)
	}
	if err := svc.CheckSource(ctx, source); err != nil {
		return nil, err
	}
	rows, err := q.ListSymbols(ctx, svc.st.Pool, store.ListSymbolsParams{Source: source, Search: search, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list symbols of %s: %w", source, err)
	}
	out := make([]SymbolInfo, len(rows))
	names := make([]string, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		out[i] = SymbolInfo{Symbol: r.Symbol, Name: r.Name, Timezone: r.Timezone, ImportedBy: r.ImportedBy, Ranges: []SymbolRange{}}
		names[i], at[r.Symbol] = r.Symbol, i
	}
	ranges, err := q.SymbolRanges(ctx, svc.st.Pool, store.SymbolRangesParams{Source: source, Symbols: names})
	if err != nil {
		return nil, fmt.Errorf("bar ranges of %s: %w", source, err)
	}
	for _, r := range ranges {
		s := &out[at[r.Symbol]]
		s.Ranges = append(s.Ranges, SymbolRange{Timeframe: r.Timeframe, First: r.FirstTs.UTC(), Last: r.LastTs.UTC(), Bars: r.Bars})
	}
	return out, nil
}

// Default returns the data source a request without one takes (the one marked default)
// and that source's default symbol (DefaultSymbolOf); store.ErrNotFound when no source is
// marked default. This package owns the rule; tasks and studies ask it.
func Default(ctx context.Context, db store.DBTX) (source, symbol string, err error) {
	d, err := q.DefaultSourceAndSymbol(ctx, db)
	if err != nil {
		return "", "", err
	}
	return d.Name, d.DefaultSymbol, nil
}

// DefaultSymbolOf is the symbol a request on source without one takes: the symbol marked
// default, else the first by name; "" when the source has none.
func DefaultSymbolOf(ctx context.Context, db store.DBTX, source string) (string, error) {
	return q.SourceDefaultSymbol(ctx, db, source)
}

// retrieval is the 400 for a failed historical-data fetch.
func retrieval(format string, a ...any) error {
	return apperr.Invalid("Data retrieval failed: "+format, a...)
}

// ParseDay parses a YYYY-MM-DD query or body date (UTC midnight).
func ParseDay(name, s string) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
	if err != nil {
		return time.Time{}, retrieval("%s '%s' is not a date in YYYY-MM-DD form", name, s)
	}
	return t, nil
}

// Bars returns the bars of symbol in [start, end] (whole days, end inclusive) at timeframe
// tf. A timeframe coarser than the stored bars is aggregated from the coarsest stored one
// that is finer; a finer one than anything stored is a 400, as are unknown symbols and
// timeframes. An unknown source is a 404. Intraday days are those of the symbol's time
// zone, loc, which is returned with the bars.
func (svc *Service) Bars(ctx context.Context, source, symbol string, start, end time.Time, tf string) (bars []engine.Bar, loc *time.Location, err error) {
	return svc.BarsAt(ctx, source, symbol, start, end, tf, 0)
}

// BarsAt is Bars as version of the symbol held them (versions.go); version 0 reads the
// latest bars, a version the symbol does not have is a 400.
func (svc *Service) BarsAt(ctx context.Context, source, symbol string, start, end time.Time, tf string, version int) (bars []engine.Bar, loc *time.Location, err error) {
	if !ValidTimeframe(tf) {
		return nil, nil, retrieval("unsupported timeframe '%s' (use one of %s)", tf, timeframeList())
	}
	if end.Before(start) {
		return nil, nil, retrieval("end_date %s is before start_date %s", end.Format(time.DateOnly), start.Format(time.DateOnly))
	}
	if err := svc.CheckSource(ctx, source); err != nil {
		return nil, nil, err
	}
	if loc, err = svc.symbolZone(ctx, source, symbol); err != nil {
		return nil, nil, err
	}
	if version != 0 {
		if err := CheckVersion(ctx, svc.st.Pool, source, symbol, version); err != nil {
			return nil, nil, err
		}
	}
	stored, err := storedTimeframes(ctx, svc.st.Pool, source, symbol)
	if err != nil {
		return nil, nil, err
	}
	if len(stored) == 0 {
		return []engine.Bar{}, loc, nil
	}
	from, err := readFrom(stored, symbol, tf)
	if err != nil {
		return nil, nil, retrieval("%s", err.Error())
	}
	lo, hi := Span(from, loc, start, end)
	if bars, err = readBarsAt(ctx, svc.st.Pool, source, symbol, from, lo, hi, version); err != nil {
		return nil, nil, err
	}
	if from == tf {
		return bars, loc, nil
	}
	return Aggregate(bars, tf, calendar(from, loc)), loc, nil
}

// symbolZone is the time zone of a symbol's data; an unknown symbol is a retrieval 400.
func (svc *Service) symbolZone(ctx context.Context, source, symbol string) (*time.Location, error) {
	loc, found, err := svc.storedZone(ctx, source, symbol)
	if err == nil && !found {
		return nil, retrieval("unknown symbol '%s' in data source '%s'", symbol, source)
	}
	return loc, err
}

// storedZone is the time zone of a symbol's data; found is false for an unknown symbol.
func (svc *Service) storedZone(ctx context.Context, source, symbol string) (loc *time.Location, found bool, err error) {
	name, err := q.SymbolTimezone(ctx, svc.st.Pool, store.SymbolTimezoneParams{Source: source, Symbol: symbol})
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("time zone of %s/%s: %w", source, symbol, err)
	}
	loc, err = svc.zones.load(name)
	return loc, err == nil, err
}

// storedTimeframes lists the timeframes symbol has bars for, finest first.
func storedTimeframes(ctx context.Context, db store.DBTX, source, symbol string) ([]string, error) {
	has, err := q.StoredTimeframes(ctx, db, store.StoredTimeframesParams{Timeframes: Timeframes, Source: source, Symbol: symbol})
	if err != nil {
		return nil, fmt.Errorf("stored timeframes of %s/%s: %w", source, symbol, err)
	}
	var out []string
	for _, tf := range Timeframes {
		if slices.Contains(has, tf) {
			out = append(out, tf)
		}
	}
	return out, nil
}

// readBars reads the latest bars of one stored timeframe with from <= ts < until.
func readBars(ctx context.Context, db store.DBTX, source, symbol, tf string, from, until time.Time) ([]engine.Bar, error) {
	out := make([]engine.Bar, 0, 1024)
	err := q.EachBar(ctx, db, store.ListBarsParams{Source: source, Symbol: symbol, Timeframe: tf, FromTs: from, UntilTs: until}, func(r store.ListBarsRow) {
		out = append(out, engine.Bar{Time: r.Ts, Open: r.Open, High: r.High, Low: r.Low, Close: r.Close, Volume: r.Volume})
	})
	if err != nil {
		return nil, fmt.Errorf("read bars %s/%s/%s: %w", source, symbol, tf, err)
	}
	return out, nil
}

func asApp(err error) (*apperr.Error, bool) { return apperr.As(err) }
