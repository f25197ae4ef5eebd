// Package lookahead is the look-ahead check in the service: on demand, for a strategy
// version and the data of a run (data source, symbols, timeframe, dates, parameters), the
// exact check of internal/bias runs in a runner child process, as all strategy code does,
// held to the run time limit as a whole. Its verdict is stored per version and data
// (lookahead_checks), and runs, studies and bi_results of a flagged version say so.
package lookahead

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

// Runner runs the check of strategy code in a confined child (runner.Pool).
type Runner interface {
	Lookahead(ctx context.Context, cfg jsrt.RunConfig) (*bias.Report, error)
}

// Config sets the runner and the limits a check runs under: those of one run.
type Config struct {
	Runner      Runner
	RunTimeout  time.Duration // the whole check's wall time; 0: the runner's default
	MemoryLimit uint64
}

// Service runs checks and answers verdicts.
type Service struct {
	cfg   Config
	db    *store.Store
	tasks *tasks.Service // resolves a check's request exactly as a run's
	feeds *marketdata.Feeds
}

// New returns the service. tasks validates requests (the same rules as a backtest's).
func New(cfg Config, db *store.Store, t *tasks.Service) *Service {
	return &Service{cfg: cfg, db: db, tasks: t, feeds: marketdata.NewFeeds(db, 0)}
}

// Check is api/openapi.yaml's LookaheadCheck: what was checked and the report.
type Check struct {
	StrategyID      string          `json:"strategy_id"`
	StrategyVersion int             `json:"strategy_version"`
	DataSource      string          `json:"data_source"`
	Symbols         []string        `json:"symbols"`
	Timeframe       string          `json:"timeframe"`
	StartDate       string          `json:"start_date"`
	EndDate         string          `json:"end_date"`
	StrategyParams  json.RawMessage `json:"strategy_params"`
	CheckedAt       time.Time       `json:"checked_at"`
	CheckedBy       *string         `json:"checked_by"`
	bias.Report
}

func toCheck(r store.LookaheadCheck) (Check, error) {
	c := Check{StrategyID: r.StrategyID, StrategyVersion: int(r.StrategyVersion), DataSource: r.DataSource, Symbols: r.Symbols,
		Timeframe: r.Timeframe, StartDate: r.StartDate.Format(time.DateOnly), EndDate: r.EndDate.Format(time.DateOnly),
		StrategyParams: r.StrategyParams, CheckedAt: r.CheckedAt, CheckedBy: r.CheckedBy}
	if err := json.Unmarshal(r.Report, &c.Report); err != nil {
		return Check{}, fmt.Errorf("stored look-ahead report of %s v%d: %w", r.StrategyID, r.StrategyVersion, err)
	}
	// Lists are lists, empty or not (gob, between the runner and here, makes empty ones nil).
	if c.Findings == nil {
		c.Findings = []bias.Finding{}
	}
	if c.Warmup == nil {
		c.Warmup = []bias.Warmup{}
	}
	if c.CutBars == nil {
		c.CutBars = []int{}
	}
	return c, nil
}

// Run checks version of strategy id on the data req names (its strategy_id and
// strategy_version are the route's), stores the verdict and returns it. A strategy that
// fails, or a check past the run time limit, is a 422 with the reason.
func (s *Service) Run(ctx context.Context, id string, version int, req tasks.Request) (Check, error) {
	req.StrategyID, req.StrategyVersion = &id, &version
	r, err := s.tasks.Resolve(ctx, req)
	if err != nil {
		return Check{}, err
	}
	ver, err := s.db.Queries.TaskRecordedVersion(ctx, s.db.Pool, store.TaskRecordedVersionParams{StrategyID: r.StrategyID, Version: r.StrategyVersion})
	if err != nil {
		return Check{}, fmt.Errorf("load %s v%d: %w", r.StrategyID, r.StrategyVersion, err)
	}
	feeds := make([]engine.Feed, len(r.Symbols))
	for i, sym := range r.Symbols {
		bars, err := s.feeds.At(ctx, r.DataSource, sym, r.Timeframe, r.StartDate, r.EndDate)
		if err != nil {
			return Check{}, err
		}
		if len(bars) == 0 {
			return Check{}, apperr.NotFound("No data for %s in data source %s between %s and %s", sym, r.DataSource,
				r.StartDate.Format(time.DateOnly), r.EndDate.Format(time.DateOnly))
		}
		feeds[i] = engine.Feed{Symbol: sym, Bars: bars}
	}
	var params map[string]any
	if len(r.StrategyParams) > 0 {
		if err := json.Unmarshal(r.StrategyParams, &params); err != nil {
			return Check{}, fmt.Errorf("resolved parameters: %w", err)
		}
	}
	owner := ""
	if req.By != nil {
		owner = *req.By
	}
	rep, err := s.cfg.Runner.Lookahead(ctx, jsrt.RunConfig{Code: ver.Code, Params: params, Feeds: feeds,
		Cash: r.InitialCash, Commission: r.Commission, TimeZone: r.Timezone, Owner: owner,
		WallTimeLimit: s.cfg.RunTimeout, MemoryLimit: s.cfg.MemoryLimit})
	var re *jsrt.RunError
	if errors.As(err, &re) {
		if re.Kind == jsrt.KindCancelled {
			return Check{}, fmt.Errorf("look-ahead check: %w", ctx.Err())
		}
		return Check{}, apperr.Unprocessable("Look-ahead check failed: %s", re.Message)
	}
	if err != nil {
		return Check{}, fmt.Errorf("look-ahead check of %s v%d: %w", r.StrategyID, r.StrategyVersion, err)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return Check{}, fmt.Errorf("encode look-ahead report: %w", err)
	}
	row, err := s.db.Queries.UpsertLookaheadCheck(ctx, s.db.Pool, store.UpsertLookaheadCheckParams{
		StrategyID: r.StrategyID, StrategyVersion: r.StrategyVersion, DataSource: r.DataSource, Symbols: r.Symbols,
		Timeframe: r.Timeframe, StartDate: r.StartDate, EndDate: r.EndDate, StrategyParams: r.StrategyParams,
		Lookahead: rep.Lookahead, Cuts: int32(rep.Cuts), Bars: int32(rep.Bars), Report: body, CheckedBy: req.By,
	})
	if err != nil {
		return Check{}, fmt.Errorf("store look-ahead verdict: %w", err)
	}
	return toCheck(row)
}

// Checks is the stored checks of a strategy version, latest first.
func (s *Service) Checks(ctx context.Context, id string, version int) ([]Check, error) {
	rows, err := s.db.Queries.LookaheadChecks(ctx, s.db.Pool, store.LookaheadChecksParams{StrategyID: id, StrategyVersion: int32(version)})
	if err != nil {
		return nil, fmt.Errorf("look-ahead checks of %s v%d: %w", id, version, err)
	}
	out := make([]Check, 0, len(rows))
	for _, r := range rows {
		c, err := toCheck(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Verdict says whether a check of the version found look-ahead (on any data): true, false,
// or nil when it was never checked.
func (s *Service) Verdict(ctx context.Context, id string, version int) (*bool, error) {
	v, err := s.db.Queries.LookaheadVerdict(ctx, s.db.Pool, store.LookaheadVerdictParams{StrategyID: id, StrategyVersion: int32(version)})
	if err != nil {
		return nil, fmt.Errorf("look-ahead verdict of %s v%d: %w", id, version, err)
	}
	if v.Checks == 0 {
		return nil, nil
	}
	return &v.Lookahead, nil
}

// Version names a strategy version, the key of Verdicts.
type Version struct {
	StrategyID string
	Version    int
}

// Verdicts are the verdicts of several versions in one query (a runs list page's): true or
// false for each checked version; a version missing from the map was never checked.
func (s *Service) Verdicts(ctx context.Context, versions []Version) (map[Version]bool, error) {
	out := make(map[Version]bool, len(versions))
	if len(versions) == 0 {
		return out, nil
	}
	p := store.LookaheadVerdictsParams{StrategyIds: make([]string, len(versions)), Versions: make([]int32, len(versions))}
	for i, v := range versions {
		p.StrategyIds[i], p.Versions[i] = v.StrategyID, int32(v.Version)
	}
	rows, err := s.db.Queries.LookaheadVerdicts(ctx, s.db.Pool, p)
	if err != nil {
		return nil, fmt.Errorf("look-ahead verdicts of %d versions: %w", len(versions), err)
	}
	for _, r := range rows {
		out[Version{StrategyID: r.StrategyID, Version: int(r.StrategyVersion)}] = r.Lookahead
	}
	return out, nil
}
