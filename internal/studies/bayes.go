package studies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
)

// A model-based study (method bayes) runs in rounds (sweep.BayesRound): its first round is
// stored and enqueued with the study, and each next one is proposed from every trial run
// before, stored as pending trials and enqueued in the transaction that stores the last
// trial of the round before. Whoever stores that trial, and whenever: the study row is
// locked first (LockBayesStudy), so a round is proposed exactly once, and a worker that
// dies leaves its round's trials pending for the reaper like any batch's. The proposals
// depend on the seed and the trials' figures only, so a seed gives the same study.

// checkBayesSpace checks each value of each parameter of space by the strategy's
// parameter rules, keeping the checked values: a bayes study's combinations are only
// known as it runs, and the rules are per parameter, so every combination is valid.
func checkBayesSpace(space sweep.Space, info *jsrt.StrategyInfo) error {
	for name, vals := range space {
		for i, v := range vals {
			checked, err := jsrt.ValidateParams(info, map[string]any{name: v})
			if err != nil {
				return apperr.Invalid("space.%s: %s", name, err)
			}
			vals[i] = checked[name]
		}
	}
	return nil
}

// bayesAllowed is the constraint's verdicts on proposals, completed with the shared values
// fixed, evaluated in a runner process (nil without a constraint).
func (s *Service) bayesAllowed(ctx context.Context, expr *string, fixed map[string]any) func([]map[string]any) ([]bool, error) {
	if expr == nil {
		return nil
	}
	return func(combos []map[string]any) ([]bool, error) {
		keep, err := s.cfg.Runner.Constraint(ctx, *expr, withFixed(combos, fixed))
		var pe *jsrt.ParamError
		if errors.As(err, &pe) {
			return nil, apperr.Invalid("%s", pe.Message)
		}
		if err != nil {
			return nil, fmt.Errorf("evaluate the constraint: %w", err)
		}
		return keep, nil
	}
}

// withFixed is each combination with the shared values it does not set.
func withFixed(combos []map[string]any, fixed map[string]any) []map[string]any {
	out := make([]map[string]any, len(combos))
	for i, c := range combos {
		m := maps.Clone(fixed)
		if m == nil {
			m = map[string]any{}
		}
		maps.Copy(m, c)
		out[i] = m
	}
	return out
}

// firstRound is a new bayes study's first round of combinations, complete with the shared
// values: what Create stores and enqueues.
func (s *Service) firstRound(ctx context.Context, space sweep.Space, fixed map[string]any, constraint *string, obj sweep.Objective, seed int64, samples int) ([]map[string]any, error) {
	search, err := space.Bayes(obj, uint64(seed))
	if err != nil {
		return nil, apperr.Invalid("space: %s", err)
	}
	combos, err := search.Next(nil, sweep.BayesRound(0, samples), s.bayesAllowed(ctx, constraint, fixed))
	if err != nil {
		return nil, err
	}
	if len(combos) == 0 {
		return nil, apperr.Invalid("the constraint leaves no combination")
	}
	return withFixed(combos, fixed), nil
}

// lockRound locks study id's row when it is a bayes study still to run (nil otherwise),
// for nextRound: to be called first in a transaction that stores the study's trials.
func (s *Service) lockRound(ctx context.Context, tx pgx.Tx, id string) (*store.Study, error) {
	st, err := s.q.LockBayesStudy(ctx, tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", id, err)
	}
	return &st, nil
}

// nextRound proposes, stores and enqueues the next round of bayes study st (locked by
// lockRound in tx) when none of its trials is pending and its budget is not spent. When
// no more combinations can be found (a small space, or a constraint that allows little),
// the study's total becomes the trials it has, and it ends as they finish. It says
// whether it proposed a round.
func (s *Service) nextRound(ctx context.Context, tx pgx.Tx, st store.Study) (bool, error) {
	rows, err := s.q.StudyTrialHistory(ctx, tx, st.ID)
	if err != nil {
		return false, fmt.Errorf("trials of %s: %w", st.ID, err)
	}
	hist := make([]sweep.Observed, len(rows))
	for i, r := range rows {
		if Status(r.Status) == StatusPending {
			return false, nil // the round runs
		}
		if err := json.Unmarshal(r.Params, &hist[i].Params); err != nil {
			return false, fmt.Errorf("stored params of %s #%d: %w", st.ID, r.Idx, err)
		}
		if Status(r.Status) == StatusCompleted {
			hist[i].Value = r.Objective
		}
	}
	if st.Samples == nil || st.Seed == nil {
		return false, fmt.Errorf("bayes study %s has no samples or seed", st.ID)
	}
	n := sweep.BayesRound(len(rows), int(*st.Samples))
	if n == 0 {
		return false, nil
	}
	var space sweep.Space
	var fixed map[string]any
	if err := json.Unmarshal(st.Space, &space); err != nil {
		return false, fmt.Errorf("space of %s: %w", st.ID, err)
	}
	if err := json.Unmarshal(st.StrategyParams, &fixed); err != nil {
		return false, fmt.Errorf("strategy_params of %s: %w", st.ID, err)
	}
	search, err := space.Bayes(sweep.Objective{Minimize: st.Direction == "min"}, uint64(*st.Seed))
	if err != nil {
		return false, fmt.Errorf("space of %s: %w", st.ID, err)
	}
	combos, err := search.Next(hist, n, s.bayesAllowed(ctx, st.ConstraintExpr, fixed))
	if err != nil {
		return false, fmt.Errorf("propose the next round of %s: %w", st.ID, err)
	}
	if len(combos) == 0 {
		return false, s.q.SetStudyTotal(ctx, tx, store.SetStudyTotalParams{ID: st.ID, Total: int32(len(rows))})
	}
	if err := s.insertTrials(ctx, tx, st.ID, len(rows), space, withFixed(combos, fixed), 1); err != nil {
		return false, err
	}
	idx := make([]int32, len(combos))
	for i := range idx {
		idx[i] = int32(len(rows) + i)
	}
	return true, s.enqueue(ctx, tx, st, idx)
}
