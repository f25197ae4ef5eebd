package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// Reproduction is a reproduction's verdict (api/openapi.yaml's Reproduction): the run it
// repeats and, once it completed, whether its results are identical to the bit and what
// differs in the provenance of both.
type Reproduction struct {
	Of string `json:"of"`
	// Outcome is "identical" or "differs"; "pending" until the reproduction completed and
	// was compared.
	Outcome   string     `json:"outcome"`
	Causes    []string   `json:"causes"`
	CheckedAt *time.Time `json:"checked_at"`
}

// Outcomes of a reproduction.
const (
	OutcomeIdentical = "identical"
	OutcomeDiffers   = "differs"
	OutcomePending   = "pending"
)

// Reproduce starts a new task for by that repeats the completed task id exactly: the same
// strategy version, parameters (its recorded ones, declared defaults included), data source,
// symbols, benchmark, timeframe, dates, cash and commission. When it completes, it is
// compared with id (Reproduction).
func (s *Service) Reproduce(ctx context.Context, by *string, id string) (Task, error) {
	orig, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return Task{}, TaskNotFound(id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	if Status(orig.Status) != StatusCompleted {
		return Task{}, apperr.Conflict("Task %s is %s: only a completed run can be reproduced", id, orig.Status)
	}
	params := map[string]any{}
	if len(orig.StrategyParams) > 0 {
		if err := json.Unmarshal(orig.StrategyParams, &params); err != nil {
			return Task{}, fmt.Errorf("parameters of %s: %w", id, err)
		}
	}
	prov, err := s.Provenance(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if prov != nil {
		// Every parameter explicit: values saved on the strategy since must not slip in.
		params = prov.Parameters
	}
	version := int(orig.StrategyVersion)
	start, end := orig.StartDate.Format(time.DateOnly), orig.EndDate.Format(time.DateOnly)
	req := Request{
		StrategyID: &orig.StrategyID, StrategyVersion: &version, StrategyParams: params,
		DataSource: &orig.DataSource, Symbols: orig.Symbols, Timeframe: &orig.Timeframe, Benchmark: &orig.Benchmark,
		StartDate: &start, EndDate: &end, InitialCash: &orig.InitialCash, Commission: &orig.Commission, By: by,
	}
	r, err := s.Resolve(ctx, req)
	if err != nil {
		return Task{}, err
	}
	r.DataVersions = recordedVersions(prov) // the bars the original read, whatever was imported since
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = s.q.CreateTask(ctx, tx, r.row()); err != nil {
			return fmt.Errorf("insert task: %w", err)
		}
		if err := s.q.InsertReproduction(ctx, tx, store.InsertReproductionParams{TaskID: row.ID, OfTask: id}); err != nil {
			return fmt.Errorf("record reproduction of %s: %w", id, err)
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

// checkReproduction compares a completed task that reproduces another with it and stores
// the verdict; a task that is no reproduction is left alone. Failures are logged: reading
// the reproduction compares again.
func (s *Service) checkReproduction(ctx context.Context, id string) {
	if _, err := s.verdict(ctx, id); err != nil {
		s.log.Warn("compare reproduction", "task", id, "err", err)
	}
}

// verdict compares task id with the run it reproduces and stores the answer; nil when id
// is no reproduction.
func (s *Service) verdict(ctx context.Context, id string) (*Reproduction, error) {
	rep, err := s.q.TaskReproduction(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reproduction %s: %w", id, err)
	}
	d, err := s.Diff(ctx, rep.OfTask, id)
	var out Reproduction
	switch {
	case err == nil:
		out = Reproduction{Of: rep.OfTask, Outcome: OutcomeDiffers, Causes: d.Causes}
		if d.Identical {
			out.Outcome = OutcomeIdentical
		}
	case isNotFound(err):
		// The original was deleted, or it has no result any more: nothing to be identical to.
		out = Reproduction{Of: rep.OfTask, Outcome: OutcomeDiffers, Causes: []string{"original: " + err.Error()}}
	default:
		return nil, err
	}
	causes, err := json.Marshal(out.Causes)
	if err != nil {
		return nil, fmt.Errorf("causes of %s: %w", id, err)
	}
	if err := s.q.SetReproductionVerdict(ctx, s.db.Pool, store.SetReproductionVerdictParams{TaskID: id, Outcome: &out.Outcome, Causes: causes}); err != nil {
		return nil, fmt.Errorf("store verdict of %s: %w", id, err)
	}
	now := time.Now()
	out.CheckedAt = &now
	return &out, nil
}

func isNotFound(err error) bool {
	ae, ok := apperr.As(err)
	return ok && (ae.Kind == apperr.KindNotFound || ae.Kind == apperr.KindConflict)
}

// Reproduction returns task id's reproduction record: nil when id is no reproduction. A
// completed reproduction not compared yet (its worker stopped in between) is compared now.
func (s *Service) Reproduction(ctx context.Context, id string) (*Reproduction, error) {
	rep, err := s.q.TaskReproduction(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reproduction %s: %w", id, err)
	}
	if rep.Outcome == nil {
		t, err := s.q.GetTask(ctx, s.db.Pool, id)
		if err != nil {
			return nil, fmt.Errorf("get task %s: %w", id, err)
		}
		if Status(t.Status) == StatusCompleted {
			return s.verdict(ctx, id)
		}
		return &Reproduction{Of: rep.OfTask, Outcome: OutcomePending, Causes: []string{}}, nil
	}
	out := &Reproduction{Of: rep.OfTask, Outcome: *rep.Outcome, Causes: []string{}, CheckedAt: rep.CheckedAt}
	if len(rep.Causes) > 0 {
		if err := json.Unmarshal(rep.Causes, &out.Causes); err != nil {
			return nil, fmt.Errorf("causes of %s: %w", id, err)
		}
	}
	return out, nil
}
