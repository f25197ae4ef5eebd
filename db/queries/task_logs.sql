-- name: CopyTaskLogs :copyfrom
INSERT INTO task_logs (task_id, attempt, ts, bar_time, level, source, message)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: DeleteTaskAttemptLogs :exec
-- Clears the lines of an attempt that is run again after its worker died.
DELETE FROM task_logs WHERE task_id = $1 AND attempt = $2;

-- name: ListTaskLogs :many
-- A page of a task's lines in order, optionally only some levels and one attempt.
SELECT * FROM task_logs
WHERE task_id = @task_id
  AND (sqlc.narg('levels')::text[] IS NULL OR level = ANY (sqlc.narg('levels')::text[]))
  AND (sqlc.narg('attempt')::int IS NULL OR attempt = sqlc.narg('attempt'))
ORDER BY id
OFFSET @skip LIMIT @lim;
