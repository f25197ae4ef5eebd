-- name: ApplyPnlMonths :exec
-- Adds (sign 1) or takes away (sign -1) the closed round trips of these tasks' results to
-- pnl_months: after a result's trades are stored, and before results are deleted. The
-- rows are this connection's shard (00085): concurrent writers mostly touch different
-- rows, and rows are written in key order, so those that meet on a shard wait for each
-- other instead of deadlocking.
-- The grouping is migration 00085's backfill's. The ids are given to each table, so each
-- is read by its key (on the joins alone, a plan from stale statistics scanned results and
-- tasks whole).
INSERT INTO pnl_months AS m (strategy_id, strategy, strategy_class, month, shard, trades, won, pnl_gross, pnl_net, commission)
SELECT t.strategy_id, x.strategy, COALESCE(r.by_strategy -> x.strategy::int ->> 'name', '')::text,
       date_trunc('month', x.close_ts AT TIME ZONE t.timezone)::date, (pg_backend_pid() % 16)::smallint,
       k.sign * count(*), k.sign * count(*) FILTER (WHERE x.pnl_net >= 0),
       k.sign * sum(x.pnl_gross::numeric), k.sign * sum(x.pnl_net::numeric), k.sign * sum(x.commission::numeric)
FROM (SELECT @sign::int AS sign) k
CROSS JOIN result_trades x
JOIN results r ON r.task_id = x.task_id
JOIN tasks t ON t.id = x.task_id
WHERE x.task_id = ANY(@task_ids::text[]) AND r.task_id = ANY(@task_ids::text[]) AND t.id = ANY(@task_ids::text[])
  AND NOT x.is_open AND x.close_ts IS NOT NULL
GROUP BY 1, 2, 3, 4, k.sign
ORDER BY 1, 2, 3, 4
ON CONFLICT (strategy_id, strategy, strategy_class, month, shard) DO UPDATE
SET trades = m.trades + EXCLUDED.trades, won = m.won + EXCLUDED.won, pnl_gross = m.pnl_gross + EXCLUDED.pnl_gross,
    pnl_net = m.pnl_net + EXCLUDED.pnl_net, commission = m.commission + EXCLUDED.commission;
