package studies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/store"
)

// errLeaseLost stops a batch whose lease a reaper took (its heartbeats did not reach the
// database in time): its pending trials run in a new job.
var errLeaseLost = errors.New("lease lost: the batch was queued again after this worker's heartbeats stopped")

// hold admits job (a batch's trials, or a fold's out-of-sample run) under its owner's
// fair share and takes its lease, in one transaction: the lease is what counts the job as
// one of the owner's running units (fairshare.Admit), from now until end. It returns
// fairshare.ErrBusy when the owner already runs as many units as allowed. The context it
// returns is the one its runs go on in: cancelled with errCancelled soon after the study
// is cancelled, and with errLeaseLost when a reaper took the lease. end stops them and
// releases the lease.
func (s *Service) hold(ctx context.Context, job int64, st store.Study, trials []int32, fold *int32) (run context.Context, end func(), err error) {
	lease := rand.Int64()
	id := st.ID
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if err := fairshare.Admit(ctx, tx, s.q, s.cfg.UserMaxRunning, st.CreatedBy, fairshare.Unit{Kind: fairshare.Study, Job: job}); err != nil {
			return err
		}
		return s.q.HoldStudyBatch(ctx, tx, store.HoldStudyBatchParams{JobID: job, StudyID: id, Trials: trials,
			Fold: fold, Lease: lease, Worker: jobs.WorkerName()})
	})
	if errors.Is(err, fairshare.ErrBusy) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("take the lease of the job: %w", err)
	}
	run, stop := context.WithCancelCause(ctx)
	go s.watch(run, id, stop)
	go s.holdLease(run, job, lease, stop)
	return run, func() {
		stop(nil)
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.q.ReleaseStudyBatch(c, s.db.Pool, store.ReleaseStudyBatchParams{JobID: job, Lease: lease}); err != nil {
			s.log.Warn("release the lease of a study job", "study", id, "job", job, "err", err)
		}
	}, nil
}

// holdLease renews a running batch's lease until ctx ends (jobs.HoldLease); when the
// lease is gone it stops the batch with errLeaseLost.
func (s *Service) holdLease(ctx context.Context, job, lease int64, stop context.CancelCauseFunc) {
	jobs.HoldLease(ctx, s.log, s.cfg.Lease, func(c context.Context) (bool, error) {
		_, err := s.q.RenewStudyBatch(c, s.db.Pool, store.RenewStudyBatchParams{JobID: job, Lease: lease})
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}, stop, errLeaseLost, "a study job", "job", job)
}

// Reap queues again the pending trials of batches whose worker has not renewed its lease
// within the lease timeout (the worker died or lost the database), and cancels their old
// jobs, which stops them if their worker is alive after all. Trials already stored stay;
// a trial is stored once whoever runs it. Every worker process runs it; the rows are
// locked, so two reapers never take the same batch. It returns how many batches it queued
// again.
//
// A job also runs without a lease for a moment: from River's fetch to hold, and from end
// (a slice used, the lease released) until River has stored the job's snooze or
// completion. A worker that dies then leaves a job River calls running, which no lease
// covers and River rescues only after minutes: Reap hands on such orphans too, once they
// have been running for the lease timeout without a lease.
func (s *Service) Reap(ctx context.Context) (int, error) {
	if s.queue == nil {
		return 0, errors.New("studies: no job queue configured")
	}
	var lost []store.ReapStudyBatchesRow
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		rows, err := s.q.ReapStudyBatches(ctx, tx, s.cfg.Lease.Seconds())
		if err != nil {
			return fmt.Errorf("find study batches whose worker is lost: %w", err)
		}
		orphans, err := s.orphans(ctx, tx)
		if err != nil {
			return err
		}
		rows = append(rows, orphans...)
		for _, r := range rows {
			st, err := s.q.GetStudy(ctx, tx, r.StudyID)
			if err != nil {
				return fmt.Errorf("load %s: %w", r.StudyID, err)
			}
			if r.Fold != nil { // a fold's out-of-sample run: it runs again if it did not end
				f, err := s.q.GetStudyFold(ctx, tx, store.GetStudyFoldParams{StudyID: r.StudyID, Fold: *r.Fold})
				if err != nil {
					return fmt.Errorf("load fold %d of %s: %w", *r.Fold+1, r.StudyID, err)
				}
				if f.Status == foldTesting {
					if _, err := s.queue.InsertTx(ctx, tx, FoldArgs{StudyID: r.StudyID, Fold: *r.Fold}, s.insertOpts(st.CreatedBy)); err != nil {
						return fmt.Errorf("enqueue fold %d of %s again: %w", *r.Fold+1, r.StudyID, err)
					}
				}
			}
			pending, err := s.q.PendingTrials(ctx, tx, store.PendingTrialsParams{StudyID: r.StudyID, Idx: r.Trials})
			if err != nil {
				return fmt.Errorf("pending trials of %s: %w", r.StudyID, err)
			}
			if len(pending) > 0 {
				idx := make([]int32, len(pending))
				for i, p := range pending {
					idx[i] = p.Idx
				}
				if err := s.enqueue(ctx, tx, st, idx); err != nil {
					return err
				}
			}
			if _, err := s.queue.JobCancelTx(ctx, tx, r.JobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return fmt.Errorf("cancel the lost batch job %d of %s: %w", r.JobID, r.StudyID, err)
			}
		}
		lost = rows
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, r := range lost {
		// The lost worker may have stored its last trials or fold without ending the study
		// or moving its folds on: whatever is due now happens here.
		s.finish(ctx, r.StudyID, nil)
		s.log.Warn("study batch queued again: its worker stopped renewing its lease", "study", r.StudyID, "job", r.JobID,
			"worker", r.Worker, "last_heartbeat", r.HeartbeatAt.UTC().Format(time.RFC3339))
	}
	return len(lost), nil
}

// orphans finds, in tx, the study jobs River has had running for the lease timeout that
// hold no lease and that no reaper has cancelled yet, under a lock for this reaper until
// tx ends (another reaper meanwhile skips them all: it would find the same ones). They are
// returned as lost batches.
func (s *Service) orphans(ctx context.Context, tx pgx.Tx) ([]store.ReapStudyBatchesRow, error) {
	if ok, err := s.q.TryLockStudyOrphans(ctx, tx); err != nil || !ok {
		if err != nil {
			return nil, fmt.Errorf("lock the orphaned study jobs: %w", err)
		}
		return nil, nil
	}
	res, err := s.queue.JobListTx(ctx, tx, river.NewJobListParams().
		Kinds(BatchArgs{}.Kind(), FoldArgs{}.Kind()).
		States(rivertype.JobStateRunning).
		Where(`attempted_at < now() - make_interval(secs => @lease_seconds) AND NOT (metadata ? 'cancel_attempted_at')
			AND NOT EXISTS (SELECT 1 FROM study_batches b WHERE b.job_id = river_job.id)`,
			river.NamedArgs{"lease_seconds": s.cfg.Lease.Seconds()}).
		First(100))
	if err != nil {
		return nil, fmt.Errorf("find study jobs running without a lease: %w", err)
	}
	var out []store.ReapStudyBatchesRow
	for _, j := range res.Jobs {
		// Again, row by row: another reaper may have handed it on since the list was
		// read, or its worker may have taken its lease after all.
		cur, err := s.queue.JobGetTx(ctx, tx, j.ID)
		if err != nil {
			return nil, fmt.Errorf("get study job %d: %w", j.ID, err)
		}
		var meta map[string]any
		_ = json.Unmarshal(cur.Metadata, &meta)
		if _, cancelled := meta["cancel_attempted_at"]; cur.State != rivertype.JobStateRunning || cancelled {
			continue
		}
		if held, err := s.q.StudyJobHasLease(ctx, tx, j.ID); err != nil || held {
			if err != nil {
				return nil, fmt.Errorf("lease of study job %d: %w", j.ID, err)
			}
			continue
		}
		r := store.ReapStudyBatchesRow{JobID: j.ID}
		if cur.AttemptedAt != nil {
			r.HeartbeatAt = *cur.AttemptedAt
		}
		if n := len(cur.AttemptedBy); n > 0 {
			r.Worker = cur.AttemptedBy[n-1]
		}
		switch cur.Kind {
		case BatchArgs{}.Kind():
			var a BatchArgs
			if err := json.Unmarshal(cur.EncodedArgs, &a); err != nil {
				return nil, fmt.Errorf("arguments of study job %d: %w", j.ID, err)
			}
			r.StudyID, r.Trials = a.StudyID, a.Trials
		case FoldArgs{}.Kind():
			var a FoldArgs
			if err := json.Unmarshal(cur.EncodedArgs, &a); err != nil {
				return nil, fmt.Errorf("arguments of study job %d: %w", j.ID, err)
			}
			r.StudyID, r.Fold = a.StudyID, &a.Fold
		}
		out = append(out, r)
	}
	return out, nil
}
