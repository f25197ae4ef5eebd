-- name: InsertTaskLogChunk :exec
-- Stores a batch of one attempt's lines, in order, as one chunk. A line without a bar has
-- the zero time (0001-01-01 UTC, Go's zero) as its bar time, stored as NULL.
INSERT INTO task_log_chunks (task_id, attempt, ts, bar_time, level, source, message)
VALUES (@task_id, @attempt, @ts::timestamptz[],
        array_replace(@bar_time::timestamptz[], '0001-01-01 00:00:00+00'::timestamptz, NULL),
        @level::text[], @source::text[], @message::text[]);

-- name: DeleteTaskAttemptLogs :exec
-- Clears the lines of an attempt that is run again after its worker died.
DELETE FROM task_log_chunks WHERE task_id = $1 AND attempt = $2;

-- name: ListTaskLogs :many
-- A page of a task's lines in order, optionally only some levels and one attempt, through
-- the task_logs view (the task's chunks found by their index, then unnested).
SELECT id::bigint AS id, task_id, attempt, ts::timestamptz AS ts,
       (bar_time IS NOT NULL)::boolean AS has_bar, COALESCE(bar_time, ts)::timestamptz AS bar_time, -- sqlc cannot tell a view's column may be NULL
       level::text AS level, source::text AS source, message::text AS message
FROM task_logs
WHERE task_id = @task_id
  AND (sqlc.narg('levels')::text[] IS NULL OR level = ANY (sqlc.narg('levels')::text[]))
  AND (sqlc.narg('attempt')::int IS NULL OR attempt = sqlc.narg('attempt'))
ORDER BY id
OFFSET @skip LIMIT @lim;
