package studies

import (
	"context"
	"fmt"

	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
)

// Convergence is how a study's search converged: the objective of each finished trial in
// the order the trials were planned (for a bayes study, the order they were proposed) and
// the best of them so far.
type Convergence struct {
	StudyID   string `json:"study_id"`
	Fold      int    `json:"fold"` // of a walk-forward study, the fold (from 1); 1 otherwise
	Method    string `json:"method"`
	Objective string `json:"objective"`
	Direction string `json:"direction"`
	// Trials are the finished trials' idx; Values their objective (null: failed or
	// undefined) and Best the best value among them up to each (null before one).
	Trials []int      `json:"trials"`
	Values []*float64 `json:"values"`
	Best   []*float64 `json:"best"`
}

// Convergence reads the objective of the study's finished trials in plan order, with the
// best so far: with a bayes study it shows how fast the search found its best. A
// walk-forward study shows one fold (from 1; default the last).
func (s *Service) Convergence(ctx context.Context, id, fold string) (Convergence, error) {
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return Convergence{}, err
	}
	f, err := foldOf(row.Folds, fold)
	if err != nil {
		return Convergence{}, err
	}
	trials, err := s.q.StudyTrialSummaries(ctx, s.db.Pool, store.StudyTrialSummariesParams{StudyID: id, Fold: f})
	if err != nil {
		return Convergence{}, fmt.Errorf("load trials of %s: %w", id, err)
	}
	out := Convergence{StudyID: id, Fold: int(f) + 1, Method: row.Method, Objective: row.Objective, Direction: row.Direction,
		Trials: []int{}, Values: []*float64{}, Best: []*float64{}}
	obj := sweep.Objective{Minimize: row.Direction == "min"}
	var best *float64
	for _, t := range trials {
		if Status(t.Status) != StatusCompleted && Status(t.Status) != StatusFailed {
			continue
		}
		v := t.Objective
		if Status(t.Status) != StatusCompleted {
			v = nil
		}
		if v != nil && (best == nil || obj.Better(*v, *best)) {
			best = v
		}
		out.Trials = append(out.Trials, int(t.Idx))
		out.Values = append(out.Values, v)
		out.Best = append(out.Best, best)
	}
	return out, nil
}
