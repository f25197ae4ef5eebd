-- name: CreateStudy :one
INSERT INTO studies (
    id, name, strategy_id, strategy_version, data_source, symbols, timeframe, timezone, start_date,
    end_date, initial_cash, commission, strategy_params, space, method, samples, seed,
    constraint_expr, objective, direction, blocks, total, excluded, created_by, walk_forward, folds,
    validation
) VALUES (
    'study_' || nextval('study_seq'), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
    $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26
)
RETURNING *;

-- name: CopyStudyTrials :copyfrom
INSERT INTO study_trials (study_id, idx, fold, params) VALUES ($1, $2, $3, $4);

-- name: CopyStudyFolds :copyfrom
INSERT INTO study_folds (study_id, fold, train_start, train_end, test_start, test_end)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: CopyStudyTrialParams :copyfrom
INSERT INTO study_trial_params (study_id, idx, name, num, txt, flag) VALUES ($1, $2, $3, $4, $5, $6);

-- name: GetStudy :one
SELECT * FROM studies WHERE id = $1;

-- name: GetStudyForUpdate :one
-- Locks a study for a change by a user (cancel, retry). The weakest lock that keeps two
-- changes apart: workers storing trials (key-share locks through the foreign key) go on.
SELECT * FROM studies WHERE id = $1 FOR NO KEY UPDATE;

-- name: ListStudies :many
SELECT * FROM studies
WHERE (sqlc.narg('strategy_id')::text IS NULL OR strategy_id = sqlc.narg('strategy_id'))
ORDER BY created_at DESC, id DESC
LIMIT $1 OFFSET $2;

-- name: StudyProgress :many
-- Where each study of ids stands: its trials by status, and its best completed trial (by
-- objective in the study's direction, then plan order; best_objective null and best_idx -1
-- before one completed). A walk-forward study's best is its last fold's: the combination
-- its latest optimisation chose.
SELECT s.id, c.done, c.failed, c.cancelled,
       COALESCE(b.idx, -1)::int AS best_idx, b.params AS best_params, b.objective AS best_objective
FROM studies s
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE t.status = 'completed')::int AS done,
           count(*) FILTER (WHERE t.status = 'failed')::int    AS failed,
           count(*) FILTER (WHERE t.status = 'cancelled')::int AS cancelled
    FROM study_trials t WHERE t.study_id = s.id) c
LEFT JOIN LATERAL (
    SELECT t.idx, t.params, t.objective FROM study_trials t
    WHERE t.study_id = s.id AND t.fold = s.folds - 1 AND t.status = 'completed' AND t.objective IS NOT NULL
    ORDER BY CASE WHEN s.direction = 'min' THEN t.objective END ASC NULLS LAST,
             CASE WHEN s.direction = 'max' THEN t.objective END DESC NULLS LAST,
             t.idx
    LIMIT 1) b ON true
WHERE s.id = ANY(@ids::text[]);

-- name: StudyTrialParams :one
SELECT params FROM study_trials WHERE study_id = $1 AND idx = $2;

-- name: StartStudy :exec
UPDATE studies SET status = 'running', started_at = COALESCE(started_at, now())
WHERE id = $1 AND status = 'pending';

-- name: StudyStatus :one
SELECT status FROM studies WHERE id = $1;

-- name: StudyOwner :one
SELECT created_by FROM studies WHERE id = $1;

-- name: PendingTrials :many
SELECT idx, fold, params FROM study_trials
WHERE study_id = $1 AND idx = ANY(@idx::int[]) AND status = 'pending'
ORDER BY idx;

-- name: CompleteTrial :exec
UPDATE study_trials SET
    status = 'completed', error = NULL, objective = $3, initial_cash = $4, final_value = $5,
    total_return = $6, annual_return = $7, sharpe_ratio = $8, max_drawdown = $9,
    max_drawdown_pct = $10, max_drawdown_duration = $11, total_trades = $12, won = $13, lost = $14,
    win_rate = $15, profit_factor = $16, avg_win = $17, avg_loss = $18, sqn = $19, bars = $20,
    returns = $21, finished_at = now()
WHERE study_id = $1 AND idx = $2 AND status = 'pending';

-- name: FailTrial :exec
UPDATE study_trials SET status = 'failed', error = $3, finished_at = now()
WHERE study_id = $1 AND idx = $2 AND status = 'pending';

-- name: FinishStudy :one
-- Ends a running study whose trials (and walk-forward folds) have all run: failed if every
-- trial failed.
UPDATE studies s SET
    status = CASE WHEN EXISTS (SELECT 1 FROM study_trials t WHERE t.study_id = s.id AND t.status = 'completed')
                  THEN 'completed' ELSE 'failed' END,
    error = CASE WHEN EXISTS (SELECT 1 FROM study_trials t WHERE t.study_id = s.id AND t.status = 'completed')
                 THEN NULL
                 ELSE 'every combination failed: ' || (SELECT t.error FROM study_trials t WHERE t.study_id = s.id ORDER BY t.idx LIMIT 1) END,
    completed_at = now()
WHERE s.id = $1 AND s.status = 'running'
  AND NOT EXISTS (SELECT 1 FROM study_trials t WHERE t.study_id = s.id AND t.status = 'pending')
  AND NOT EXISTS (SELECT 1 FROM study_folds f WHERE f.study_id = s.id AND f.status IN ('optimising', 'testing'))
RETURNING s.status;

-- name: CancelStudy :one
UPDATE studies SET status = 'cancelled', completed_at = now()
WHERE id = $1 AND status IN ('pending', 'running')
RETURNING *;

-- name: CancelStudyTrials :exec
UPDATE study_trials SET status = 'cancelled', finished_at = now()
WHERE study_id = $1 AND status = 'pending';

-- name: RetryStudyTrials :many
UPDATE study_trials SET status = 'pending', error = NULL, finished_at = NULL
WHERE study_id = $1 AND status IN ('failed', 'cancelled')
RETURNING idx;

-- name: CancelStudyFolds :exec
UPDATE study_folds SET status = 'cancelled', finished_at = now()
WHERE study_id = $1 AND status IN ('optimising', 'testing');

-- name: RetryStudyFolds :many
-- Failed and cancelled folds optimise again (their retried trials run first).
UPDATE study_folds SET status = 'optimising', error = NULL, best_idx = NULL, params = NULL,
    is_objective = NULL, is_annual_return = NULL, oos_objective = NULL, oos_total_return = NULL,
    oos_annual_return = NULL, oos_sharpe_ratio = NULL, oos_max_drawdown_pct = NULL,
    oos_total_trades = NULL, oos_times = NULL, oos_values = NULL, finished_at = NULL
WHERE study_id = $1 AND status IN ('failed', 'cancelled')
RETURNING fold;

-- name: ReopenStudy :one
UPDATE studies SET status = 'pending', error = NULL, completed_at = NULL
WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled')
RETURNING *;

-- name: StudyTrialSummaries :many
SELECT idx, params, status, error, objective, initial_cash, final_value, total_return, annual_return,
       sharpe_ratio, max_drawdown, max_drawdown_pct, max_drawdown_duration, total_trades, won, lost,
       win_rate, profit_factor, avg_win, avg_loss, sqn, bars
FROM study_trials WHERE study_id = $1 AND fold = $2
ORDER BY idx;

-- name: SetStudyOverfitting :exec
UPDATE studies SET overfitting = $2 WHERE id = $1 AND status IN ('completed', 'failed');

-- name: ClearStudyOverfitting :exec
UPDATE studies SET overfitting = NULL WHERE id = $1;

-- name: StudyTrialReturns :many
SELECT idx, objective, returns FROM study_trials
WHERE study_id = $1 AND fold = $2 AND status = 'completed'
ORDER BY idx;

-- name: HoldStudyBatch :exec
-- The worker running a batch job takes its lease (again, when River runs the job again).
INSERT INTO study_batches (job_id, study_id, trials, fold, lease, worker, heartbeat_at)
VALUES (@job_id, @study_id, @trials, sqlc.narg('fold'), @lease, @worker, now())
ON CONFLICT (job_id) DO UPDATE SET trials = EXCLUDED.trials, fold = EXCLUDED.fold, lease = EXCLUDED.lease,
    worker = EXCLUDED.worker, heartbeat_at = now();

-- name: RenewStudyBatch :one
-- The lease holder's heartbeat; no row when the lease was lost.
UPDATE study_batches SET heartbeat_at = now() WHERE job_id = @job_id AND lease = @lease
RETURNING job_id;

-- name: ReleaseStudyBatch :exec
DELETE FROM study_batches WHERE job_id = @job_id AND lease = @lease;

-- name: ReapStudyBatches :many
-- Batches whose worker stopped renewing the lease: the lease goes, the caller queues their
-- pending trials again. Locked rows are another reaper's.
DELETE FROM study_batches
WHERE job_id IN (
    SELECT b.job_id FROM study_batches b
    WHERE b.heartbeat_at < now() - make_interval(secs => @lease_seconds::float8)
    FOR UPDATE SKIP LOCKED)
RETURNING job_id, study_id, trials, fold, worker, heartbeat_at;

-- name: AdvanceStudyFolds :many
-- Folds of a running study whose in-sample trials have all run: their winner (by objective in
-- the study's direction, then plan order) goes out of sample ('testing'), or the fold fails
-- when no combination completed. A fold advances once: a concurrent caller finds it moved on.
WITH ready AS (
    SELECT f.fold, b.idx, b.params, b.objective, b.annual_return
    FROM study_folds f
    JOIN studies s ON s.id = f.study_id
    LEFT JOIN LATERAL (
        SELECT t.idx, t.params, t.objective, t.annual_return FROM study_trials t
        WHERE t.study_id = f.study_id AND t.fold = f.fold AND t.status = 'completed' AND t.objective IS NOT NULL
        ORDER BY CASE WHEN s.direction = 'min' THEN t.objective END ASC NULLS LAST,
                 CASE WHEN s.direction = 'max' THEN t.objective END DESC NULLS LAST,
                 t.idx
        LIMIT 1) b ON true
    WHERE f.study_id = @study_id AND f.status = 'optimising' AND s.status IN ('pending', 'running')
      AND NOT EXISTS (SELECT 1 FROM study_trials t WHERE t.study_id = f.study_id AND t.fold = f.fold AND t.status = 'pending')
)
UPDATE study_folds f SET
    status = CASE WHEN r.idx IS NULL THEN 'failed' ELSE 'testing' END,
    error = CASE WHEN r.idx IS NULL THEN 'no combination completed in sample, so there is no winner to test' END,
    best_idx = r.idx, params = r.params, is_objective = r.objective, is_annual_return = r.annual_return,
    finished_at = CASE WHEN r.idx IS NULL THEN now() END
FROM ready r
WHERE f.study_id = @study_id AND f.fold = r.fold AND f.status = 'optimising'
RETURNING f.fold, f.status;

-- name: GetStudyFold :one
SELECT * FROM study_folds WHERE study_id = $1 AND fold = $2;

-- name: StudyFolds :many
SELECT * FROM study_folds WHERE study_id = $1 ORDER BY fold;

-- name: CompleteStudyFold :exec
UPDATE study_folds SET status = 'completed', error = NULL, oos_objective = $3, oos_total_return = $4,
    oos_annual_return = $5, oos_sharpe_ratio = $6, oos_max_drawdown_pct = $7, oos_total_trades = $8,
    oos_times = $9, oos_values = $10, finished_at = now()
WHERE study_id = $1 AND fold = $2 AND status = 'testing';

-- name: FailStudyFold :exec
UPDATE study_folds SET status = 'failed', error = $3, finished_at = now()
WHERE study_id = $1 AND fold = $2 AND status = 'testing';

-- name: TryLockStudyOrphans :one
-- Keeps two reapers from handing on the same orphaned study jobs (jobs River has running
-- that hold no lease) until the end of the transaction; false when another reaper has
-- them. One lock for all of them: a row of the service's private schema, which a BI login
-- cannot take (an advisory key per job could be held by any role).
SELECT count(*) > 0 FROM (
    SELECT name FROM backtestd_private.service_locks WHERE name = 'study-orphans' FOR UPDATE SKIP LOCKED
) l;

-- name: StudyJobHasLease :one
SELECT EXISTS (SELECT 1 FROM study_batches WHERE job_id = @job_id)::bool;

-- name: LockBayesStudy :one
-- A model-based study still to run, locked so that its next round is proposed once: every
-- transaction that stores its trials takes this lock first (then sees the others' trials).
SELECT * FROM studies WHERE id = $1 AND method = 'bayes' AND status IN ('pending', 'running')
FOR NO KEY UPDATE;

-- name: StudyTrialHistory :many
-- Every trial of a study in the order proposed: what a model-based study learns from.
SELECT idx, params, status, objective FROM study_trials WHERE study_id = $1 ORDER BY idx;

-- name: SetStudyTotal :exec
UPDATE studies SET total = $2 WHERE id = $1;

-- name: InsertStudyDataVersions :exec
-- The bar versions a study with as_of runs on (migration 00098).
INSERT INTO study_data_versions (study_id, symbol, version)
SELECT @study_id::text, unnest(@symbols::text[]), unnest(@versions::int[]);

-- name: StudyDataVersions :many
SELECT symbol, version FROM study_data_versions WHERE study_id = $1;
