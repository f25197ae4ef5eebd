package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// Delete removes a task that has ended, with its attempts, result and logs. A pending or
// running task is a conflict: it must be cancelled first.
func (s *Service) Delete(ctx context.Context, id string) error {
	if _, err := s.q.DeleteFinishedTask(ctx, s.db.Pool, id); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	t, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return TaskNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("get task %s: %w", id, err)
	}
	return apperr.Conflict("Task %s is %s: cancel it before deleting it", id, t.Status)
}

// Cancel cancels a pending or running task: the status becomes cancelled and its job is
// removed (pending) or cancelled (running: River tells the process running it, whose job
// context ends and interrupts the engine). Completed, failed and cancelled tasks are left
// as they are; changed reports which case it was.
func (s *Service) Cancel(ctx context.Context, id string) (t Task, changed bool, err error) {
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.q.GetTaskForUpdate(ctx, tx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return TaskNotFound(id)
			}
			return fmt.Errorf("get task %s: %w", id, err)
		}
		if cur.Status != StatusPending && cur.Status != StatusRunning {
			row = cur
			return nil
		}
		if row, err = s.q.CancelTask(ctx, tx, id); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		changed = true
		if err := s.q.FinishTaskAttempt(ctx, tx, store.FinishTaskAttemptParams{
			Status: StatusCancelled, TaskID: id, Attempt: cur.Attempt,
		}); err != nil {
			return fmt.Errorf("cancel attempt of %s: %w", id, err)
		}
		if cur.JobID == nil || s.queue == nil {
			return nil
		}
		if cur.Status == StatusPending {
			_, err = s.queue.JobDeleteTx(ctx, tx, *cur.JobID)
			if err == nil || errors.Is(err, rivertype.ErrNotFound) {
				return nil
			}
			if !errors.Is(err, rivertype.ErrJobRunning) {
				return fmt.Errorf("remove job of %s: %w", id, err)
			}
			// A worker has just picked it up: cancel it like a running one.
		}
		if _, err := s.queue.JobCancelTx(ctx, tx, *cur.JobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("cancel job of %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Task{}, false, err
	}
	if changed {
		s.publishDone(ctx, row.ID, row.SessionID, int(row.Attempt), StatusCancelled, nil, nil)
	}
	return FromRow(row), changed, nil
}

// Retry runs a failed or cancelled task again as a new attempt: it goes back to pending
// with attempt+1 and a new job, in one transaction. Other states give 409.
func (s *Service) Retry(ctx context.Context, id string) (Task, error) {
	var row store.Task
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = s.q.RetryTask(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			cur, err := s.q.GetTask(ctx, tx, id)
			if errors.Is(err, store.ErrNotFound) {
				return TaskNotFound(id)
			}
			if err != nil {
				return fmt.Errorf("get task %s: %w", id, err)
			}
			return apperr.Conflict("Task %s is %s: only failed or cancelled tasks can be retried", id, cur.Status)
		}
		if err != nil {
			return fmt.Errorf("retry %s: %w", id, err)
		}
		return s.enqueue(ctx, tx, &row)
	})
	if err != nil {
		return Task{}, err
	}
	return FromRow(row), nil
}
