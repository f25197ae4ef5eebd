package studies

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/overfit"
	"github.com/backtestd/backtestd/internal/store"
)

// Validation is a study's declared cross-validation (the request's "validation"): N
// groups, k of them tested per split, E bars purged before and embargoed after each test
// group.
type Validation struct {
	Method      string `json:"method"` // cpcv
	Groups      int    `json:"groups"`
	TestGroups  int    `json:"test_groups"`
	EmbargoBars int    `json:"embargo_bars"`
}

// check refuses a validation whose bounds cannot hold whatever the bars.
func (v Validation) check() error {
	if v.Method != "cpcv" {
		return apperr.Invalid("validation.method must be cpcv, got %q", v.Method)
	}
	if err := overfit.CPCVBounds(1<<30, v.Groups, v.TestGroups, v.EmbargoBars); err != nil {
		return apperr.Invalid("validation: %s", strings.TrimPrefix(err.Error(), "cpcv: "))
	}
	return nil
}

// CPCVRequest is a combinatorial purged cross-validation asked of a study: N groups, k of
// them tested per split, E bars purged before and embargoed after each test group (each,
// when not given, the study's declared validation's), on one fold's trials (from 1;
// default the last).
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

// selection is what a CPCV of a study chooses each split's combination by: its objective
// where the objective is one the per-bar returns define on any subset of bars (the Sharpe
// ratio, the compounded return), else the Sharpe ratio.
func selection(objective, direction string) overfit.Selection {
	if direction == "max" {
		switch objective {
		case "total_return", "annual_return", "final_value":
			return overfit.ByReturn
		}
	}
	return overfit.BySharpe
}

// CPCV cross-validates choosing the combination that ranks best in sample (see
// selection), on the per-bar returns of the combinations that completed
// (internal/overfit.CPCV).
func (s *Service) CPCV(ctx context.Context, id string, req CPCVRequest) (CPCV, error) {
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return CPCV{}, err
	}
	var declared *Validation
	if len(row.Validation) > 0 {
		declared = new(Validation)
		if err := json.Unmarshal(row.Validation, declared); err != nil {
			return CPCV{}, fmt.Errorf("validation of %s: %w", id, err)
		}
	}
	num := func(name, v string, def func(Validation) int, fallback int) (int, error) {
		if v == "" {
			switch {
			case declared != nil:
				return def(*declared), nil
			case fallback >= 0:
				return fallback, nil
			}
			return 0, apperr.Invalid("%s is required: the study declares no validation", name)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, apperr.Invalid("%s must be a whole number, got %q", name, v)
		}
		return n, nil
	}
	groups, err := num("groups", req.Groups, func(v Validation) int { return v.Groups }, -1)
	if err != nil {
		return CPCV{}, err
	}
	k, err := num("test_groups", req.TestGroups, func(v Validation) int { return v.TestGroups }, -1)
	if err != nil {
		return CPCV{}, err
	}
	embargo, err := num("embargo_bars", req.Embargo, func(v Validation) int { return v.EmbargoBars }, 0)
	if err != nil {
		return CPCV{}, err
	}
	// The bounds that do not depend on the bars answer before the returns are loaded.
	if err := overfit.CPCVBounds(1<<30, groups, k, embargo); err != nil {
		return CPCV{}, apperr.Invalid("%s", err)
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
	res, err := overfit.CPCV(returns, groups, k, embargo, selection(row.Objective, row.Direction))
	if err != nil { // too few trials or bars for this N, k and E
		return CPCV{}, apperr.Unprocessable("Study %s: %s", id, err)
	}
	out.CPCVResult = res
	return out, nil
}
