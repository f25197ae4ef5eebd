package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pnlmonths"
	"github.com/backtestd/backtestd/internal/store"
)

// lockForChange locks task id in tx for a change by caller: a 404 when there is no such
// task, a 403 when caller may not change it (auth.MayModify, decided on the locked row, so
// the owner cannot change between the check and the change).
func (s *Service) lockForChange(ctx context.Context, tx pgx.Tx, caller auth.Identity, id string) (store.Task, error) {
	cur, err := s.q.GetTaskForUpdate(ctx, tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return cur, TaskNotFound(id)
	}
	if err != nil {
		return cur, fmt.Errorf("get task %s: %w", id, err)
	}
	return cur, auth.MayModify(caller, "task "+id, auth.OwnerOf(cur.CreatedBy))
}

// Delete removes a task that has ended, with its attempts, result and logs. A pending or
// running task is a conflict: it must be cancelled first.
func (s *Service) Delete(ctx context.Context, caller auth.Identity, id string) error {
	return s.db.WithTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.lockForChange(ctx, tx, caller, id)
		if err != nil {
			return err
		}
		if !Status(cur.Status).Can(ActDelete) {
			return apperr.Conflict("Task %s is %s: cancel it before deleting it", id, cur.Status)
		}
		if err := pnlmonths.Remove(ctx, tx, id); err != nil {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
		if _, err := s.q.DeleteFinishedTask(ctx, tx, id); err != nil {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
		return nil
	})
}

// Cancel cancels a pending or running task: the status becomes cancelled and its job is
// removed (pending) or cancelled (running: River tells the process running it, whose job
// context ends and interrupts the engine). A task in a state cancel does not apply to is
// left as it is; changed reports which case it was.
func (s *Service) Cancel(ctx context.Context, caller auth.Identity, id string) (t Task, changed bool, err error) {
	var row store.Task
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.lockForChange(ctx, tx, caller, id)
		if err != nil {
			return err
		}
		if !Status(cur.Status).Can(ActCancel) {
			row = cur
			return nil
		}
		if row, err = s.q.CancelTask(ctx, tx, id); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		changed = true
		if err := s.q.FinishTaskAttempt(ctx, tx, store.FinishTaskAttemptParams{
			Status: string(StatusCancelled), TaskID: id, Attempt: cur.Attempt,
		}); err != nil {
			return fmt.Errorf("cancel attempt of %s: %w", id, err)
		}
		if cur.JobID == nil || s.queue == nil {
			return nil
		}
		if Status(cur.Status) == StatusPending {
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
	return fromRow(row), changed, nil
}

// Retry runs a failed or cancelled task again as a new attempt: it goes back to pending
// with attempt+1 and a new job, in one transaction. Other states give 409.
func (s *Service) Retry(ctx context.Context, caller auth.Identity, id string) (Task, error) {
	var row store.Task
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.lockForChange(ctx, tx, caller, id)
		if err != nil {
			return err
		}
		if !Status(cur.Status).Can(ActRetry) {
			return apperr.Conflict("Task %s is %s: only %s tasks can be retried", id, cur.Status, Machine.FromText(ActRetry))
		}
		if row, err = s.q.RetryTask(ctx, tx, id); err != nil {
			return fmt.Errorf("retry %s: %w", id, err)
		}
		return s.enqueue(ctx, tx, &row)
	})
	if err != nil {
		return Task{}, err
	}
	return fromRow(row), nil
}
