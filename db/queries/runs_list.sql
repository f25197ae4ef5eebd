-- The runs list (GET /api/backtests). Every order is an index of tasks (migration 00042),
-- and a page goes on from a cursor (the last row of the previous page: keyset paging) or
-- skips rows (the spec's offset paging). The filters are "$1 IS NULL OR ...": the store runs
-- these queries with plan_cache_mode force_custom_plan (ListPlansCustom), so each is planned
-- for its own values, never as a generic plan that scans for every filter at once.
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

-- name: ListTasksByTotalReturnDesc :many
-- Part 0: the runs with the figure, highest first (ties newest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_total_return DESC, a.created_at DESC, a.id DESC) AS ord
   FROM tasks a
   WHERE a.fig_total_return IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_total_return, a.created_at, a.id) < (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_total_return DESC, a.created_at DESC, a.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_total_return IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksByTotalReturnAsc :many
-- Part 0: the runs with the figure, lowest first (ties oldest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_total_return ASC, a.created_at ASC, a.id ASC) AS ord
   FROM tasks a
   WHERE a.fig_total_return IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_total_return, a.created_at, a.id) > (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_total_return ASC, a.created_at ASC, a.id ASC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_total_return IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksByMaxDrawdownDesc :many
-- Part 0: the runs with the figure, highest first (ties newest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_max_drawdown_pct DESC, a.created_at DESC, a.id DESC) AS ord
   FROM tasks a
   WHERE a.fig_max_drawdown_pct IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_max_drawdown_pct, a.created_at, a.id) < (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_max_drawdown_pct DESC, a.created_at DESC, a.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_max_drawdown_pct IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksByMaxDrawdownAsc :many
-- Part 0: the runs with the figure, lowest first (ties oldest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_max_drawdown_pct ASC, a.created_at ASC, a.id ASC) AS ord
   FROM tasks a
   WHERE a.fig_max_drawdown_pct IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_max_drawdown_pct, a.created_at, a.id) > (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_max_drawdown_pct ASC, a.created_at ASC, a.id ASC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_max_drawdown_pct IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksBySharpeRatioDesc :many
-- Part 0: the runs with the figure, highest first (ties newest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_sharpe_ratio DESC, a.created_at DESC, a.id DESC) AS ord
   FROM tasks a
   WHERE a.fig_sharpe_ratio IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_sharpe_ratio, a.created_at, a.id) < (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_sharpe_ratio DESC, a.created_at DESC, a.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_sharpe_ratio IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksBySharpeRatioAsc :many
-- Part 0: the runs with the figure, lowest first (ties oldest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_sharpe_ratio ASC, a.created_at ASC, a.id ASC) AS ord
   FROM tasks a
   WHERE a.fig_sharpe_ratio IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_sharpe_ratio, a.created_at, a.id) > (sqlc.narg('after_fig')::float8, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_sharpe_ratio ASC, a.created_at ASC, a.id ASC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_sharpe_ratio IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksByTotalTradesDesc :many
-- Part 0: the runs with the figure, highest first (ties newest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_total_trades DESC, a.created_at DESC, a.id DESC) AS ord
   FROM tasks a
   WHERE a.fig_total_trades IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_total_trades, a.created_at, a.id) < (round(sqlc.narg('after_fig')::float8)::integer, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_total_trades DESC, a.created_at DESC, a.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_total_trades IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

-- name: ListTasksByTotalTradesAsc :many
-- Part 0: the runs with the figure, lowest first (ties oldest first); part 1: those
-- without it, newest first. A cursor in part 1 (after_tail) skips part 0.
SELECT sqlc.embed(t), x.part::integer AS part
FROM (
  SELECT u.id, u.part, u.ord FROM (
  (SELECT a.id, 0 AS part, row_number() OVER (ORDER BY a.fig_total_trades ASC, a.created_at ASC, a.id ASC) AS ord
   FROM tasks a
   WHERE a.fig_total_trades IS NOT NULL AND NOT sqlc.arg('after_tail')::boolean
     AND (sqlc.narg('after_fig')::float8 IS NULL OR (a.fig_total_trades, a.created_at, a.id) > (round(sqlc.narg('after_fig')::float8)::integer, sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR a.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR a.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR a.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY a.fig_total_trades ASC, a.created_at ASC, a.id ASC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
  UNION ALL
  (SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b
   WHERE b.fig_total_trades IS NULL
     AND (NOT sqlc.arg('after_tail')::boolean OR (b.created_at, b.id) < (sqlc.arg('after_created')::timestamptz, sqlc.arg('after_id')::text))
     AND (sqlc.narg('status')::text IS NULL OR b.status = sqlc.narg('status'))
     AND (sqlc.narg('strategy_id')::text IS NULL OR b.strategy_id = sqlc.narg('strategy_id'))
     AND (sqlc.narg('symbol')::text IS NULL OR b.symbols @> ARRAY[sqlc.narg('symbol')::text])
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT sqlc.arg('skip')::integer + sqlc.arg('lim')::integer)
) u
  ORDER BY u.part, u.ord
  OFFSET sqlc.arg('skip') LIMIT sqlc.arg('lim')
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord;

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
