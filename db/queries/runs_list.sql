-- The runs list (GET /api/backtests). Every order is an index of tasks (migration 00042),
-- and a page goes on from a cursor (the last row of the previous page: keyset paging) or
-- skips rows (offset paging). The orders by a key figure are built in internal/tasks
-- (figureQuery) from one shape for the four figures and both directions, with only the
-- filters given. Here the filters are "$1 IS NULL OR ...": the store runs these queries with
-- plan_cache_mode force_custom_plan (ListPlansCustom), so each is planned for its own
-- values, never as a generic plan that scans for every filter at once.
-- Each query finds the page's ids first, skipping what it skips in an index (index-only
-- where the filters are columns of it: the visibility map lets it leave the table alone),
-- and reads the page's rows of tasks last, so an offset costs index entries, not rows.

-- name: ListPlansCustom :exec
-- Plans the transaction's next queries for their parameters' values.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: ListTasks :many
-- Newest first; after a cursor, the rows older than it.
SELECT sqlc.embed(t), 0::integer AS part
FROM (
  SELECT a.id, a.created_at FROM tasks a
  WHERE (sqlc.narg('after_created')::timestamptz IS NULL OR (a.created_at, a.id) < (sqlc.narg('after_created')::timestamptz, sqlc.arg('after_id')::text))
    AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
    AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
    AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
  ORDER BY a.created_at DESC, a.id DESC
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.created_at DESC, x.id DESC;

-- name: ListTasksOldest :many
-- Oldest first; after a cursor, the rows newer than it.
SELECT sqlc.embed(t), 0::integer AS part
FROM (
  SELECT a.id, a.created_at FROM tasks a
  WHERE (sqlc.narg('after_created')::timestamptz IS NULL OR (a.created_at, a.id) > (sqlc.narg('after_created')::timestamptz, sqlc.arg('after_id')::text))
    AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
    AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
    AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
  ORDER BY a.created_at ASC, a.id ASC
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.created_at ASC, x.id ASC;

-- name: CountTasks :one
-- How many tasks the list pages through, counted up to sqlc.arg('cap') (so a list polled every few
-- seconds never counts a million rows).
SELECT count(*) FROM (
  SELECT 1 FROM tasks t
  WHERE true
  AND (sqlc.narg('status')::text IS NULL OR t.status = sqlc.narg('status'))
  AND (sqlc.narg('strategy_id')::text IS NULL OR t.strategy_id = sqlc.narg('strategy_id'))
  AND (sqlc.narg('symbol')::text IS NULL OR t.symbols @> ARRAY[sqlc.narg('symbol')::text])
  LIMIT sqlc.arg('cap')
) c;
