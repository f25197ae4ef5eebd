package studies

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/findings"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
)

// Surface is a study's parameter surface (sweep.SurfaceOf) over its completed combinations,
// with what it says of the best one.
type Surface struct {
	StudyID   string `json:"study_id"`
	Fold      int    `json:"fold"`
	Status    string `json:"status"` // of the study when computed: a running study's surface changes
	Metric    string `json:"metric"`
	Direction string `json:"direction"`
	sweep.Surface
	Findings []findings.Finding `json:"findings"`
}

// Surface computes the objective against each parameter's values with the others at the
// best combination's, and the best's plateau score; a best on a spike (sweep.SpikeBelow) is
// a warning finding. A walk-forward study's surface is one fold's in-sample trials (fold,
// from 1; default the last).
func (s *Service) Surface(ctx context.Context, id, fold string) (Surface, error) {
	st, err := s.Get(ctx, id)
	if err != nil {
		return Surface{}, err
	}
	f, err := foldOf(int32(st.Folds), fold)
	if err != nil {
		return Surface{}, err
	}
	trials, err := s.q.StudyTrialSummaries(ctx, s.db.Pool, store.StudyTrialSummariesParams{StudyID: id, Fold: f})
	if err != nil {
		return Surface{}, fmt.Errorf("load trials of %s: %w", id, err)
	}
	var points []sweep.Point
	for _, t := range trials {
		if Status(t.Status) != StatusCompleted {
			continue
		}
		p := sweep.Point{Objective: t.Objective}
		if err := json.Unmarshal(t.Params, &p.Params); err != nil {
			return Surface{}, fmt.Errorf("params of %s trial %d: %w", id, t.Idx, err)
		}
		points = append(points, p)
	}
	surf := sweep.SurfaceOf(sweep.Space(st.Space), points, sweep.Objective{Metric: st.Objective, Minimize: st.Direction == "min"})
	if surf == nil {
		return Surface{}, apperr.Conflict("Study %s has no completed combination with an objective yet", id)
	}
	out := Surface{StudyID: id, Fold: int(f) + 1, Status: string(st.Status), Metric: st.Objective, Direction: st.Direction, Surface: *surf, Findings: []findings.Finding{}}
	if surf.Spike {
		v, limit := *surf.Plateau, sweep.SpikeBelow
		out.Findings = append(out.Findings, findings.Finding{
			ID: "plateau_spike", Severity: findings.Warning, Title: "The best combination sits on a spike",
			Detail: fmt.Sprintf("Its %d neighbours (one step away in one parameter) keep %.0f%% of its %s on average: a small change of a parameter loses most of it, which fitting to noise does. Prefer a combination on a plateau.",
				surf.Neighbours, 100*v, st.Objective),
			Value: &v, Threshold: &limit,
		})
	}
	return out, nil
}
