package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
)

// Create validates req, stores the task as pending and enqueues its job in one transaction.
// Everything knowable before running is checked here and answered with a 4xx error: a
// missing field (422), an unknown strategy (404), bad dates, cash or commission (outside
// the bounds above), an unsupported data source, an unknown symbol, an empty bar range and
// invalid strategy parameters (400, with the texts api/openapi.yaml documents).
func (s *Service) Create(ctx context.Context, req Request) (Task, error) {
	r, err := s.Resolve(ctx, req)
	if err != nil {
		return Task{}, err
	}
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = s.q.CreateTask(ctx, tx, r.row()); err != nil {
			return fmt.Errorf("insert task: %w", err)
		}
		if err := s.saveDataVersions(ctx, tx, row.ID, r.DataVersions); err != nil {
			return err
		}
		return s.enqueue(ctx, tx, &row)
	})
	if err != nil {
		return Task{}, err
	}
	return fromRow(row), nil
}

// Resolved is a backtest request checked and completed with its defaults: the task it
// makes, and the parameters its strategy version declares.
type Resolved struct {
	StrategyID      string
	StrategyVersion int32
	DataSource      string
	Symbols         []string // the feeds in order
	Timeframe       string
	Benchmark       string
	Timezone        string // the first feed's
	StartDate       time.Time
	EndDate         time.Time
	InitialCash     float64
	Commission      float64
	StrategyParams  json.RawMessage // merged with the saved values and coerced (strategy.MergeParams)
	SessionID       string
	CreatedBy       *string
	Strategy        jsrt.StrategyInfo // its Params only
	// Effective is StrategyParams with every other declared parameter at its default
	// (strategy.Effective): what the task records, the values its run takes.
	Effective json.RawMessage
	// DataVersions are the bar versions it runs on by symbol (as_of, a reproduction); nil
	// runs on the latest bars.
	DataVersions map[string]int
}

// row is the task r makes, as stored.
func (r Resolved) row() store.CreateTaskParams {
	return store.CreateTaskParams{
		StrategyID: r.StrategyID, StrategyVersion: r.StrategyVersion, DataSource: r.DataSource, Symbol: r.Symbols[0],
		Symbols: r.Symbols, Timeframe: r.Timeframe, Benchmark: r.Benchmark, Timezone: r.Timezone,
		StartDate: r.StartDate, EndDate: r.EndDate, InitialCash: r.InitialCash, Commission: r.Commission,
		StrategyParams: r.Effective, SessionID: r.SessionID, CreatedBy: r.CreatedBy,
	}
}

// Resolve checks req as Create does and returns what the task would be, without storing
// anything: parameter studies run such requests with many parameter sets.
func (s *Service) Resolve(ctx context.Context, req Request) (Resolved, error) {
	if req.StrategyID == nil || *req.StrategyID == "" {
		return Resolved{}, apperr.Unprocessable("Field 'strategy_id' is required")
	}
	if req.StartDate == nil {
		return Resolved{}, apperr.Unprocessable("Field 'start_date' is required")
	}
	if req.EndDate == nil {
		return Resolved{}, apperr.Unprocessable("Field 'end_date' is required")
	}
	var version *int32
	if req.StrategyVersion != nil {
		if *req.StrategyVersion < 1 || *req.StrategyVersion > math.MaxInt32 {
			return Resolved{}, apperr.Invalid("strategy_version must be a version number from 1, got %d", *req.StrategyVersion)
		}
		v := int32(*req.StrategyVersion)
		version = &v
	}
	sv, err := s.q.TaskStrategyVersion(ctx, s.db.Pool, store.TaskStrategyVersionParams{ID: *req.StrategyID, Version: version})
	if errors.Is(err, store.ErrNotFound) && version != nil {
		// Tell a missing version from a missing strategy.
		if _, err := s.q.TaskStrategyVersion(ctx, s.db.Pool, store.TaskStrategyVersionParams{ID: *req.StrategyID}); err == nil {
			return Resolved{}, apperr.NotFound("Strategy %s has no version %d", *req.StrategyID, *version)
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Resolved{}, apperr.NotFound("Strategy not found: %s", *req.StrategyID)
		}
		return Resolved{}, fmt.Errorf("load strategy %s: %w", *req.StrategyID, err)
	}
	start, err := parseDate("start_date", *req.StartDate)
	if err != nil {
		return Resolved{}, err
	}
	end, err := parseDate("end_date", *req.EndDate)
	if err != nil {
		return Resolved{}, err
	}
	if end.Before(start) {
		return Resolved{}, apperr.Invalid("start_date %s is after end_date %s", start.Format(time.DateOnly), end.Format(time.DateOnly))
	}
	cash := float64(DefaultCash)
	if req.InitialCash != nil {
		cash = *req.InitialCash
	}
	if err := checkCash(cash); err != nil {
		return Resolved{}, err
	}
	comm := DefaultCommission
	if req.Commission != nil {
		comm = *req.Commission
	}
	if err := checkCommission(comm); err != nil {
		return Resolved{}, err
	}
	tf := marketdata.DefaultTimeframe
	if req.Timeframe != nil && strings.TrimSpace(*req.Timeframe) != "" {
		tf = strings.TrimSpace(*req.Timeframe)
	}
	if err := marketdata.CheckTimeframe(tf); err != nil {
		return Resolved{}, err
	}
	source, symbols, err := s.resolveData(ctx, req)
	if err != nil {
		return Resolved{}, err
	}
	bench, err := s.resolveBenchmark(ctx, source, symbols, req.Benchmark)
	if err != nil {
		return Resolved{}, err
	}
	var empty []string
	for _, sym := range withBenchmark(symbols, bench) {
		has, err := s.feeds.AnyAt(ctx, source, sym, tf, start, end)
		if err != nil {
			return Resolved{}, err
		}
		if !has {
			empty = append(empty, sym)
		}
	}
	if len(empty) > 0 {
		return Resolved{}, apperr.Invalid("No data for %s in data source %s between %s and %s",
			strings.Join(empty, ", "), source, start.Format(time.DateOnly), end.Format(time.DateOnly))
	}
	zone, err := s.feeds.Zone(ctx, source, symbols[0])
	if err != nil {
		return Resolved{}, err
	}
	versions, err := s.asOfVersions(ctx, req.AsOf, source, withBenchmark(symbols, bench))
	if err != nil {
		return Resolved{}, err
	}
	if req.AsOf == nil && len(req.Versions) > 0 {
		versions = req.Versions
	}
	params, err := strategy.MergeParams(sv.Params, sv.ParamValues, req.StrategyParams)
	if err != nil {
		return Resolved{}, err
	}
	session := ""
	if req.SessionID != nil {
		session = strings.TrimSpace(*req.SessionID)
		if len(session) > 200 {
			return Resolved{}, apperr.Invalid("session_id is too long: at most 200 characters")
		}
	}
	r := Resolved{
		StrategyID: sv.ID, StrategyVersion: sv.Version, DataSource: source,
		Symbols: symbols, Timeframe: tf, Benchmark: bench, Timezone: zone.String(),
		StartDate: start, EndDate: end, InitialCash: cash, Commission: comm,
		StrategyParams: params, SessionID: session, CreatedBy: req.By, DataVersions: versions,
	}
	if len(sv.Params) > 0 {
		if err := json.Unmarshal(sv.Params, &r.Strategy.Params); err != nil {
			return Resolved{}, fmt.Errorf("stored strategy params: %w", err)
		}
	}
	if r.Effective, err = strategy.Effective(r.Strategy.Params, params); err != nil {
		return Resolved{}, err
	}
	return r, nil
}

// enqueue inserts the job of t's current attempt and records it, inside tx.
func (s *Service) enqueue(ctx context.Context, tx pgx.Tx, t *store.Task) error {
	if s.queue == nil {
		return errors.New("tasks: no job queue configured")
	}
	res, err := s.queue.InsertTx(ctx, tx, jobs.RunArgs{TaskID: t.ID, Attempt: int(t.Attempt)}, nil)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", t.ID, err)
	}
	id := res.Job.ID
	t.JobID = &id
	if err := s.q.RecordTaskJob(ctx, tx, store.RecordTaskJobParams{TaskID: t.ID, Attempt: t.Attempt, JobID: &id}); err != nil {
		return fmt.Errorf("record job of %s: %w", t.ID, err)
	}
	return nil
}

// resolveData applies the defaults (the built-in source and its default symbol) and checks
// the request's feeds: symbol or symbols (not both, unless symbol is the first of them), at
// most MaxFeeds, none twice, all in the source (an error names every unknown one).
func (s *Service) resolveData(ctx context.Context, req Request) (source string, symbols []string, err error) {
	if req.Symbols == nil {
		source, symbol, err := s.resolveSource(ctx, req.DataSource, req.Symbol)
		return source, []string{symbol}, err
	}
	if len(req.Symbols) == 0 {
		return "", nil, apperr.Invalid("symbols is empty: give at least one symbol")
	}
	if len(req.Symbols) > MaxFeeds {
		return "", nil, apperr.Invalid("symbols has %d entries: at most %d feeds per backtest", len(req.Symbols), MaxFeeds)
	}
	seen := map[string]bool{}
	for _, sym := range req.Symbols {
		sym = strings.TrimSpace(sym)
		if sym == "" {
			return "", nil, apperr.Invalid("symbols contains an empty symbol")
		}
		if seen[sym] {
			return "", nil, apperr.Invalid("symbols names %s twice: each feed once", sym)
		}
		seen[sym] = true
		symbols = append(symbols, sym)
	}
	if req.Symbol != nil && strings.TrimSpace(*req.Symbol) != "" && strings.TrimSpace(*req.Symbol) != symbols[0] {
		return "", nil, apperr.Invalid("Give symbol or symbols, not both (symbol %s is not the first of symbols)", strings.TrimSpace(*req.Symbol))
	}
	if source, _, err = s.source(ctx, req.DataSource); err != nil {
		return "", nil, err
	}
	var unknown []string
	for _, sym := range symbols {
		ok, err := s.symbolExists(ctx, source, sym)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			unknown = append(unknown, sym)
		}
	}
	if len(unknown) > 0 {
		return "", nil, apperr.Invalid("Unknown symbol %s in data source %s", strings.Join(unknown, ", "), source)
	}
	return source, symbols, nil
}

// resolveBenchmark returns the request's benchmark: a symbol of source, by default the
// first feed.
func (s *Service) resolveBenchmark(ctx context.Context, source string, feeds []string, req *string) (string, error) {
	if req == nil || strings.TrimSpace(*req) == "" {
		return feeds[0], nil
	}
	bench := strings.TrimSpace(*req)
	if slices.Contains(feeds, bench) {
		return bench, nil
	}
	ok, err := s.symbolExists(ctx, source, bench)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apperr.Invalid("Unknown benchmark %s in data source %s", bench, source)
	}
	return bench, nil
}

// symbolExists tells whether source has symbol.
func (s *Service) symbolExists(ctx context.Context, source, symbol string) (bool, error) {
	ok, err := s.q.TaskSymbolExists(ctx, s.db.Pool, store.TaskSymbolExistsParams{Source: source, Symbol: symbol})
	if err != nil {
		return false, fmt.Errorf("look up symbol %s: %w", symbol, err)
	}
	return ok, nil
}

// withBenchmark is the symbols whose bars a task needs: its feeds, then its benchmark when
// that is not one of them.
func withBenchmark(feeds []string, bench string) []string {
	if slices.Contains(feeds, bench) {
		return feeds
	}
	return append(slices.Clip(feeds), bench)
}

// resolveSource is resolveData for one symbol.
func (s *Service) resolveSource(ctx context.Context, reqSource, reqSymbol *string) (source, symbol string, err error) {
	source, symbol, err = s.source(ctx, reqSource)
	if err != nil {
		return "", "", err
	}
	if reqSymbol != nil && strings.TrimSpace(*reqSymbol) != "" {
		symbol = strings.TrimSpace(*reqSymbol)
	}
	if symbol == "" {
		return "", "", apperr.Invalid("Data source %s has no symbols: give symbol", source)
	}
	ok, err := s.symbolExists(ctx, source, symbol)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", apperr.Invalid("Unknown symbol %s in data source %s", symbol, source)
	}
	return source, symbol, nil
}

// source returns the request's data source (the built-in one when none is given) and its
// default symbol ("" when it has none).
func (s *Service) source(ctx context.Context, reqSource *string) (source, defSymbol string, err error) {
	if reqSource == nil || strings.TrimSpace(*reqSource) == "" {
		source, defSymbol, err := marketdata.Default(ctx, s.db.Pool)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", "", apperr.Invalid("No built-in data source is configured: give data_source")
			}
			return "", "", fmt.Errorf("default data source: %w", err)
		}
		return source, defSymbol, nil
	}
	source = strings.TrimSpace(*reqSource)
	ok, err := s.q.TaskSourceExists(ctx, s.db.Pool, source)
	if err != nil {
		return "", "", fmt.Errorf("look up data source: %w", err)
	}
	if !ok {
		return "", "", apperr.Invalid("Unsupported data source: %s", source)
	}
	if defSymbol, err = marketdata.DefaultSymbolOf(ctx, s.db.Pool, source); err != nil {
		return "", "", fmt.Errorf("default symbol: %w", err)
	}
	return source, defSymbol, nil
}
