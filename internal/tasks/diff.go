package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/rundiff"
	"github.com/backtestd/backtestd/internal/store"
)

// Diff compares the result of task a with that of task b (rundiff.Compare). Unknown tasks
// are a 404 and a task without a result a 409, each naming the task.
func (s *Service) Diff(ctx context.Context, a, b string) (rundiff.Diff, error) {
	ra, err := s.diffSide(ctx, a)
	if err != nil {
		return rundiff.Diff{}, err
	}
	rb, err := s.diffSide(ctx, b)
	if err != nil {
		return rundiff.Diff{}, err
	}
	return rundiff.Compare(ra, rb), nil
}

// diffSide loads what rundiff needs of task id's run.
func (s *Service) diffSide(ctx context.Context, id string) (rundiff.Run, error) {
	rs := results.NewService(s.db.Pool)
	status, has, err := rs.State(ctx, id)
	if err != nil {
		return rundiff.Run{}, err
	}
	if !has {
		return rundiff.Run{}, apperr.Conflict("Task %s has no result (it is %s)", id, status)
	}
	st, err := rs.Load(ctx, id, results.EquityValues|results.Executions|results.RoundTrips)
	if err != nil {
		return rundiff.Run{}, err
	}
	run := rundiff.Run{ID: id, Equity: st.Equity, Executions: st.Executions, Trades: st.Trades,
		Summary: map[string]*float64{}, Prints: map[string][]provenance.Print{}, Zone: time.UTC}
	for i, v := range st.Summary.Values() {
		run.Summary[results.SummaryKeys[i]] = v
	}
	sqn := st.SQN
	run.Summary["sqn"] = &sqn
	if loc, err := time.LoadLocation(st.Run.Timezone); err == nil {
		run.Zone = loc
	}
	code, err := s.q.StrategyVersionCode(ctx, s.db.Pool, store.StrategyVersionCodeParams{StrategyID: st.Run.StrategyID, Version: int32(st.Run.StrategyVersion)})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return rundiff.Run{}, fmt.Errorf("code of %s: %w", id, err)
	}
	run.Code = code
	if run.Provenance, err = s.Provenance(ctx, id); err != nil {
		return rundiff.Run{}, err
	}
	if run.Provenance != nil {
		for _, f := range run.Provenance.Data {
			prints, found, err := marketdata.Prints(ctx, s.db, f.SHA256)
			if err != nil {
				return rundiff.Run{}, err
			}
			if found {
				run.Prints[f.SHA256] = prints
			}
		}
	}
	return run, nil
}
