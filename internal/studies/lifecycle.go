package studies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/store"
)

func fromRow(r store.Study, p store.StudyProgressRow) Study {
	var best *Best
	if p.BestObjective != nil {
		best = &Best{Index: int(p.BestIdx), Params: p.BestParams, Objective: *p.BestObjective}
	}
	var space map[string][]any
	_ = json.Unmarshal(r.Space, &space)
	return Study{
		ID: r.ID, Name: r.Name, Status: Status(r.Status), CanCancel: Status(r.Status).Can(ActCancel), CanRetry: Status(r.Status).Can(ActRetry) && p.Failed+p.Cancelled > 0, StrategyID: r.StrategyID, StrategyVersion: int(r.StrategyVersion),
		DataSource: r.DataSource, Symbols: r.Symbols, Timeframe: r.Timeframe,
		StartDate: r.StartDate.Format(time.DateOnly), EndDate: r.EndDate.Format(time.DateOnly),
		InitialCash: r.InitialCash, Commission: r.Commission, StrategyParams: r.StrategyParams, Space: space,
		Method: r.Method, Samples: r.Samples, Seed: r.Seed, Constraint: r.ConstraintExpr,
		Objective: r.Objective, Direction: r.Direction, Blocks: int(r.Blocks), WalkForward: r.WalkForward, Validation: r.Validation, Folds: int(r.Folds),
		Total: int(r.Total), Excluded: int(r.Excluded), Done: int(p.Done), Failed: int(p.Failed), Cancelled: int(p.Cancelled),
		Best: best, Error: r.Error, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
		PinnedAt: r.PinnedAt,
	}
}

// Get returns a study with its counts and best combination so far.
func (s *Service) Get(ctx context.Context, id string) (Study, error) {
	var out Study
	// One snapshot: the counts and the best agree with the status.
	err := s.db.WithSnapshot(ctx, func(tx pgx.Tx) error {
		row, err := s.load(ctx, tx, id)
		if err != nil {
			return err
		}
		p, err := s.progress(ctx, tx, id)
		if err != nil {
			return err
		}
		out = fromRow(row, p[id])
		return nil
	})
	return out, err
}

// load reads study id's row; a 404 for an unknown id.
func (s *Service) load(ctx context.Context, db store.DBTX, id string) (store.Study, error) {
	row, err := s.q.GetStudy(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return row, NotFound(id)
	}
	if err != nil {
		return row, fmt.Errorf("load %s: %w", id, err)
	}
	return row, nil
}

// progress reads where the studies ids stand, by id, in one query.
func (s *Service) progress(ctx context.Context, db store.DBTX, ids ...string) (map[string]store.StudyProgressRow, error) {
	rows, err := s.q.StudyProgress(ctx, db, ids)
	if err != nil {
		return nil, fmt.Errorf("progress of studies %v: %w", ids, err)
	}
	out := make(map[string]store.StudyProgressRow, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// ListFilter selects studies for List.
type ListFilter struct {
	StrategyID  *string
	Limit, Skip int
}

// List returns studies newest first, with their counts and best combinations.
func (s *Service) List(ctx context.Context, f ListFilter) ([]Study, error) {
	var out []Study
	err := s.db.WithSnapshot(ctx, func(tx pgx.Tx) error {
		rows, err := s.q.ListStudies(ctx, tx, store.ListStudiesParams{StrategyID: f.StrategyID, Limit: int32(f.Limit), Offset: int32(f.Skip)})
		if err != nil {
			return fmt.Errorf("list studies: %w", err)
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		p, err := s.progress(ctx, tx, ids...)
		if err != nil {
			return err
		}
		out = make([]Study, len(rows))
		for i, r := range rows {
			out[i] = fromRow(r, p[r.ID])
		}
		return nil
	})
	return out, err
}

// lockFor locks study id in tx for action by caller: a 404 when there is no such study, a
// 403 when caller may not change it (auth.MayModify, decided on the locked row), a 409
// naming the state when the machine does not allow action in it.
func (s *Service) lockFor(ctx context.Context, tx pgx.Tx, caller auth.Identity, id, action string) (store.Study, error) {
	row, err := s.q.GetStudyForUpdate(ctx, tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return row, NotFound(id)
	}
	if err != nil {
		return row, fmt.Errorf("load %s: %w", id, err)
	}
	if err := auth.MayModify(caller, "study "+id, auth.OwnerOf(row.CreatedBy)); err != nil {
		return row, err
	}
	if !Status(row.Status).Can(action) {
		return row, apperr.Conflict("Study %s is %s: only a %s study can be %s", id, row.Status, Machine.FromText(action), pastTense[action])
	}
	return row, nil
}

var pastTense = map[string]string{ActCancel: "cancelled", ActRetry: "retried"}

// Cancel cancels a pending or running study: its trials not yet run are cancelled, and the
// workers running its batches stop within a moment (they look at the study's status as
// they store what they ran). A study already finished is a 409.
func (s *Service) Cancel(ctx context.Context, caller auth.Identity, id string) (Study, error) {
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.lockFor(ctx, tx, caller, id, ActCancel); err != nil {
			return err
		}
		if _, err := s.q.CancelStudy(ctx, tx, id); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		if err := s.q.CancelStudyFolds(ctx, tx, id); err != nil {
			return fmt.Errorf("cancel the folds of %s: %w", id, err)
		}
		return s.q.CancelStudyTrials(ctx, tx, id)
	})
	if err != nil {
		return Study{}, err
	}
	s.publishProgress(ctx, id)
	return s.Get(ctx, id)
}

// Retry runs the failed and cancelled combinations of a finished study again, and the
// failed and cancelled folds of a walk-forward analysis; the study is pending again until
// they have run. A study still running, or with nothing to run again, is a 409.
func (s *Service) Retry(ctx context.Context, caller auth.Identity, id string) (Study, error) {
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.lockFor(ctx, tx, caller, id, ActRetry); err != nil {
			return err
		}
		row, err := s.q.ReopenStudy(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("reopen %s: %w", id, err)
		}
		idx, err := s.q.RetryStudyTrials(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("retry trials of %s: %w", id, err)
		}
		folds, err := s.q.RetryStudyFolds(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("retry folds of %s: %w", id, err)
		}
		proposed := false // a bayes study cancelled between rounds goes on with its next one
		if bayes, err := s.lockRound(ctx, tx, id); err != nil {
			return err
		} else if bayes != nil && len(idx) == 0 {
			if proposed, err = s.nextRound(ctx, tx, *bayes); err != nil {
				return err
			}
		}
		if len(idx) == 0 && len(folds) == 0 && !proposed {
			return apperr.Conflict("Study %s has no failed or cancelled combination or fold to run again", id)
		}
		if err := s.q.ClearStudyOverfitting(ctx, tx, id); err != nil {
			return err
		}
		if len(idx) > 0 {
			if err := s.enqueue(ctx, tx, row, idx); err != nil {
				return err
			}
		}
		return s.advance(ctx, tx, id) // folds whose trials all completed test again at once
	})
	if err != nil {
		return Study{}, err
	}
	s.publishProgress(ctx, id)
	return s.Get(ctx, id)
}

// Progress is the data of a `study` event on /ws/study_<n>: where the study stands.
type Progress struct {
	StudyID   string `json:"study_id"`
	Status    string `json:"status"`
	CanCancel bool   `json:"can_cancel"`
	CanRetry  bool   `json:"can_retry"`
	Total     int    `json:"total"`
	Done      int    `json:"done"`
	Failed    int    `json:"failed"`
	Cancelled int    `json:"cancelled"`
	Best      *Best  `json:"best"`
}

// State is the `study` frame a WebSocket subscriber joining now gets.
func (s *Service) State(ctx context.Context, id string) ([]byte, error) {
	st, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return events.Encode(events.KindStudy, progressOf(st)), nil
}

func progressOf(st Study) Progress {
	return Progress{StudyID: st.ID, Status: string(st.Status), CanCancel: st.CanCancel, CanRetry: st.CanRetry, Total: st.Total, Done: st.Done, Failed: st.Failed, Cancelled: st.Cancelled, Best: st.Best}
}

// publishProgress tells the study's WebSocket subscribers, in every API process, where it
// stands.
func (s *Service) publishProgress(ctx context.Context, id string) {
	if ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		ctx = c
	}
	frame, err := s.State(ctx, id)
	if err == nil {
		err = s.pub.Publish(ctx, events.Message{Event: events.KindStudy, Task: id, Frame: frame})
	}
	if err != nil {
		s.log.Warn("publish study progress", "study", id, "err", err)
	}
}
