package studies

import (
	"context"
	"fmt"
	"strconv"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/overfit"
	"github.com/backtestd/backtestd/internal/store"
)

// CPCVRequest is a combinatorial purged cross-validation asked of a study: N groups, k of
// them tested per split, E bars purged before and embargoed after each test group, on one
// fold's trials (from 1; default the last).
type CPCVRequest struct {
	Groups, TestGroups, Embargo string
	Fold                        string
}

// CPCV is the answer of GET /api/studies/{id}/cpcv.
type CPCV struct {
	StudyID string `json:"study_id"`
	Fold    int    `json:"fold"`
	Status  string `json:"status"` // of the study when computed: a running study's figures change
	overfit.CPCVResult
	// Combinations maps a split's best (an index into the completed combinations) to
	// the combination's index in the study.
	Combinations []int `json:"combinations"`
}

// CPCV cross-validates choosing the combination with the best in-sample Sharpe ratio, on
// the per-bar returns of the combinations that completed (internal/overfit.CPCV).
func (s *Service) CPCV(ctx context.Context, id string, req CPCVRequest) (CPCV, error) {
	num := func(name, v string, def int) (int, error) {
		if v == "" {
			if def >= 0 {
				return def, nil
			}
			return 0, apperr.Invalid("%s is required", name)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, apperr.Invalid("%s must be a whole number, got %q", name, v)
		}
		return n, nil
	}
	groups, err := num("groups", req.Groups, -1)
	if err != nil {
		return CPCV{}, err
	}
	k, err := num("test_groups", req.TestGroups, -1)
	if err != nil {
		return CPCV{}, err
	}
	embargo, err := num("embargo_bars", req.Embargo, 0)
	if err != nil {
		return CPCV{}, err
	}
	// The bounds that do not depend on the bars answer before anything is loaded.
	if err := overfit.CPCVBounds(1<<30, groups, k, embargo); err != nil {
		return CPCV{}, apperr.Invalid("%s", err)
	}
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return CPCV{}, err
	}
	f, err := foldOf(row.Folds, req.Fold)
	if err != nil {
		return CPCV{}, err
	}
	rets, err := s.q.StudyTrialReturns(ctx, s.db.Pool, store.StudyTrialReturnsParams{StudyID: id, Fold: f})
	if err != nil {
		return CPCV{}, fmt.Errorf("load returns of %s: %w", id, err)
	}
	out := CPCV{StudyID: id, Fold: int(f) + 1, Status: row.Status}
	var returns [][]float64
	for _, r := range rets {
		if len(r.Returns) > 0 {
			returns = append(returns, r.Returns)
			out.Combinations = append(out.Combinations, int(r.Idx))
		}
	}
	res, err := overfit.CPCV(returns, groups, k, embargo)
	if err != nil { // too few trials or bars for this N, k and E
		return CPCV{}, apperr.Unprocessable("Study %s: %s", id, err)
	}
	out.CPCVResult = res
	return out, nil
}
