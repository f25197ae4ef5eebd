package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/store"
)

// Replay is what reruns completed task id's strategy as it ran: its strategy version's
// code, its parameters, the bars of its symbols (the versions its provenance records, so
// bars imported since do not slip in; the benchmark is not a feed) and its broker
// settings, in a run configuration without limits or callbacks. Reruns on other bars
// (Monte Carlo on price paths) replace Feeds. A task that is not completed is a conflict;
// an unknown one is not found; data or a version that is gone is unprocessable.
func (s *Service) Replay(ctx context.Context, id string) (jsrt.RunConfig, error) {
	t, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return jsrt.RunConfig{}, TaskNotFound(id)
	}
	if err != nil {
		return jsrt.RunConfig{}, fmt.Errorf("get task %s: %w", id, err)
	}
	if Status(t.Status) != StatusCompleted {
		return jsrt.RunConfig{}, apperr.Conflict("Task %s is %s: only a completed run can be rerun", id, t.Status)
	}
	ver, err := s.q.TaskRunVersion(ctx, s.db.Pool, store.TaskRunVersionParams{DataSource: t.DataSource, TaskID: t.ID, StrategyID: t.StrategyID, Version: t.StrategyVersion})
	if err != nil {
		return jsrt.RunConfig{}, fmt.Errorf("look up data source and strategy version of %s: %w", id, err)
	}
	if !ver.SourceExists || !ver.Found {
		return jsrt.RunConfig{}, apperr.Unprocessable("Task %s cannot be rerun: its data source or strategy version is gone", id)
	}
	prov, err := s.Provenance(ctx, id)
	if err != nil {
		return jsrt.RunConfig{}, err
	}
	versions := recordedVersions(prov)
	if versions == nil {
		if err := json.Unmarshal(ver.DataVersions, &versions); err != nil {
			return jsrt.RunConfig{}, fmt.Errorf("data versions of %s: %w", id, err)
		}
	}
	feeds := make([]engine.Feed, len(t.Symbols))
	for i, sym := range t.Symbols {
		bars, err := s.feeds.AtVersion(ctx, t.DataSource, sym, t.Timeframe, t.StartDate, t.EndDate, versions[sym])
		if ae, ok := apperr.As(err); ok {
			return jsrt.RunConfig{}, apperr.Unprocessable("Task %s cannot be rerun: %s", id, ae.Detail)
		}
		if err != nil {
			return jsrt.RunConfig{}, fmt.Errorf("load bars of %s: %w", sym, err)
		}
		if len(bars) == 0 {
			return jsrt.RunConfig{}, apperr.Unprocessable("Task %s cannot be rerun: no data for %s in data source %s between %s and %s",
				id, sym, t.DataSource, t.StartDate.Format(time.DateOnly), t.EndDate.Format(time.DateOnly))
		}
		feeds[i] = engine.Feed{Symbol: sym, Bars: bars}
	}
	var params map[string]any
	if len(t.StrategyParams) > 0 {
		if err := json.Unmarshal(t.StrategyParams, &params); err != nil {
			return jsrt.RunConfig{}, fmt.Errorf("strategy_params of %s: %w", id, err)
		}
	}
	return jsrt.RunConfig{Code: ver.Code, Params: params, Feeds: feeds, Cash: t.InitialCash, Commission: t.Commission,
		TimeZone: t.Timezone, Owner: auth.OwnerOf(t.CreatedBy)}, nil
}
