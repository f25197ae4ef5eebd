package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/store"
)

// DefaultLease is how long a running task's worker may go without renewing its lease
// before another worker runs the task again: a dead worker's task is running elsewhere
// within about DefaultLease + DefaultLease/3.
const DefaultLease = 15 * time.Second

// errLeaseLost stops a run whose lease another worker took over (its heartbeats did not
// reach the database in time): the task runs elsewhere, and this run must not store
// anything.
var errLeaseLost = errors.New("lease lost: the task was queued again after this worker's heartbeats stopped")

// holdLease renews the lease of the run of t until ctx ends (jobs.HoldLease); when the
// lease is gone it stops the run with errLeaseLost.
func (s *Service) holdLease(ctx context.Context, t store.Task, stop context.CancelCauseFunc) {
	jobs.HoldLease(ctx, s.log, s.cfg.Lease, func(c context.Context) (bool, error) {
		_, err := s.q.RenewLease(c, s.db.Pool, store.RenewLeaseParams{ID: t.ID, Lease: t.Lease})
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}, stop, errLeaseLost, "a running backtest", "task", t.ID)
}

// Reap queues again the running tasks whose worker has not renewed its lease within the
// lease timeout (the worker died, or lost the database): the task is pending with a new
// job, the attempt history records the lost run, its partial log goes (one WARNING line
// says what happened), and the old job is cancelled, which stops its run if its worker is
// alive after all. Every worker process runs it; the rows are locked, so two reapers never
// take the same task. It returns how many tasks it queued again.
func (s *Service) Reap(ctx context.Context) (int, error) {
	if s.queue == nil {
		return 0, errors.New("tasks: no job queue configured")
	}
	type lost struct {
		row  store.ReapLostTasksRow
		line engine.LogEntry
	}
	var reaped []lost
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		rows, err := s.q.ReapLostTasks(ctx, tx, s.cfg.Lease.Seconds())
		if err != nil {
			return fmt.Errorf("find tasks whose worker is lost: %w", err)
		}
		for _, r := range rows {
			worker, beat := "unknown", time.Time{}
			if r.LostWorker != nil {
				worker = *r.LostWorker
			}
			if r.LastHeartbeat != nil {
				beat = *r.LastHeartbeat
			}
			res, err := s.queue.InsertTx(ctx, tx, jobs.RunArgs{TaskID: r.ID, Attempt: int(r.Attempt)}, nil)
			if err != nil {
				return fmt.Errorf("queue %s again: %w", r.ID, err)
			}
			job := res.Job.ID
			if err := s.q.SetTaskJob(ctx, tx, store.SetTaskJobParams{ID: r.ID, JobID: &job}); err != nil {
				return fmt.Errorf("record job of %s: %w", r.ID, err)
			}
			if err := s.q.RecordInterruption(ctx, tx, store.RecordInterruptionParams{JobID: &job, LostWorker: worker,
				LastHeartbeat: beat, TaskID: r.ID, Attempt: r.Attempt}); err != nil {
				return fmt.Errorf("record the lost run of %s: %w", r.ID, err)
			}
			if err := s.q.DeleteTaskAttemptLogs(ctx, tx, store.DeleteTaskAttemptLogsParams{TaskID: r.ID, Attempt: r.Attempt}); err != nil {
				return fmt.Errorf("clear logs of %s: %w", r.ID, err)
			}
			now := time.Now().UTC()
			line := engine.LogEntry{Wall: now, Level: "WARNING", Source: "engine", Message: fmt.Sprintf(
				"worker %s stopped renewing its lease (last heartbeat %s); the backtest starts again on another worker",
				worker, beat.UTC().Format(time.RFC3339))}
			if err := s.storeLine(ctx, tx, r.ID, r.Attempt, now, line.Level, line.Message); err != nil {
				return fmt.Errorf("log the lost run of %s: %w", r.ID, err)
			}
			if r.JobID != nil {
				if _, err := s.queue.JobCancelTx(ctx, tx, *r.JobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
					return fmt.Errorf("cancel the lost job of %s: %w", r.ID, err)
				}
			}
			reaped = append(reaped, lost{r, line})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, l := range reaped {
		s.log.Warn("backtest queued again: "+l.line.Message, "task", l.row.ID, "attempt", l.row.Attempt)
		s.publish(ctx, events.Message{Event: events.KindLog, Task: l.row.ID, Session: l.row.SessionID, Owner: auth.OwnerOf(l.row.CreatedBy),
			Logs: []events.LogLine{{Level: l.line.Level, Message: l.line.Message, Time: events.EpochSeconds(l.line.Wall), Source: l.line.Source}}})
	}
	return len(reaped), nil
}
