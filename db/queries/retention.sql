-- name: PinTask :one
-- Pins (or, with pinned false, unpins) a task; no row when there is no such task.
UPDATE tasks SET pinned_at = CASE WHEN @pinned::boolean THEN COALESCE(pinned_at, now()) END
WHERE id = @id
RETURNING pinned_at;

-- name: PinStudy :one
UPDATE studies SET pinned_at = CASE WHEN @pinned::boolean THEN COALESCE(pinned_at, now()) END
WHERE id = @id
RETURNING pinned_at;

-- name: PrunableTasks :many
-- A batch of finished, unpinned tasks created before the cutoff, oldest first, locked for
-- deleting; rows another transaction holds (a retry, a pin) are left for the next batch.
SELECT id FROM tasks
WHERE created_at < @before::timestamptz AND pinned_at IS NULL
  AND status IN ('completed', 'failed', 'cancelled')
ORDER BY created_at, id
LIMIT @lim
FOR UPDATE SKIP LOCKED;

-- name: ExportTasks :many
-- What deleting these tasks removes, one JSON document per task: the task row, its
-- attempts, result, statistics, trades, executions, equity series and log lines.
SELECT jsonb_build_object(
    'kind', 'task',
    'task', to_jsonb(t),
    'attempts', COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.attempt) FROM task_attempts a WHERE a.task_id = t.id), '[]'),
    'result', (SELECT to_jsonb(r) FROM results r WHERE r.task_id = t.id),
    'statistics', (SELECT s.record FROM result_statistics s WHERE s.task_id = t.id),
    'trades', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.seq) FROM result_trades x WHERE x.task_id = t.id), '[]'),
    'executions', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.seq) FROM result_executions x WHERE x.task_id = t.id), '[]'),
    'equity', (SELECT to_jsonb(e) FROM result_equity_series e WHERE e.task_id = t.id),
    'logs', COALESCE((SELECT jsonb_agg(jsonb_build_object('attempt', l.attempt, 'ts', l.ts, 'bar_time', l.bar_time,
                                       'level', l.level, 'source', l.source, 'message', l.message) ORDER BY l.id)
                      FROM task_logs l WHERE l.task_id = t.id), '[]')
)::jsonb AS doc
FROM tasks t
WHERE t.id = ANY(@ids::text[])
ORDER BY t.created_at, t.id;

-- name: DeleteTasks :execrows
-- Deletes the tasks with their attempts, results and logs (cascades and triggers).
DELETE FROM tasks WHERE id = ANY(@ids::text[]);

-- name: PrunableStudies :many
SELECT id FROM studies
WHERE created_at < @before::timestamptz AND pinned_at IS NULL
  AND status IN ('completed', 'failed', 'cancelled')
ORDER BY created_at, id
LIMIT @lim
FOR UPDATE SKIP LOCKED;

-- name: ExportStudies :many
SELECT jsonb_build_object(
    'kind', 'study',
    'study', to_jsonb(s),
    'trials', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.idx) FROM study_trials x WHERE x.study_id = s.id), '[]'),
    'params', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.idx, x.name) FROM study_trial_params x WHERE x.study_id = s.id), '[]'),
    'folds', COALESCE((SELECT jsonb_agg(to_jsonb(x) ORDER BY x.fold) FROM study_folds x WHERE x.study_id = s.id), '[]')
)::jsonb AS doc
FROM studies s
WHERE s.id = ANY(@ids::text[])
ORDER BY s.created_at, s.id;

-- name: DeleteStudies :execrows
-- Deletes the studies with their combinations, parameters, folds and batches (cascades).
DELETE FROM studies WHERE id = ANY(@ids::text[]);

-- name: TryRetentionLock :exec
-- One scheduled prune at a time among the processes sharing the database: run in a
-- transaction kept open for the prune, it fails at once (lock_not_available) while another
-- process holds it; the lock goes when that transaction or its connection ends. A table of
-- the service's private schema, which a BI login cannot lock (it could hold an advisory key).
LOCK TABLE backtestd_private.retention_lock IN EXCLUSIVE MODE NOWAIT;
