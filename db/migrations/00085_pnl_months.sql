-- +goose Up
-- The realised pnl per strategy and month (docs/sql.md) summed every closed round trip of
-- every result: 21 million rows and 4 to 6 s at 300,000 results. pnl_months keeps those
-- sums, one row per (task's strategy, strategy within the run, month), written in the
-- transaction that stores or deletes a result (internal/pnlmonths), so the question reads
-- a few thousand rows.
--
-- strategy and strategy_class are bi_trades' strategy (the index of the strategy whose
-- orders made the trade in a run of several, 0 otherwise) and that strategy's class name
-- (results.by_strategy; '' for a run of one). month is the first day of the month the
-- trade closed in, in the run's time zone (tasks.timezone, UTC unless its first feed has
-- another). The sums are numeric: each float8 pnl is converted the same way when it is
-- added and when it is taken away, so a row is always exactly the numeric sum of the
-- trades stored now, whatever the order of saves and deletes.
--
-- Each (strategy, month) is kept in up to 16 rows (shard: the writing connection's process
-- id modulo 16) that bi_pnl_months adds up: workers completing runs of one strategy at once
-- each lock the months they add to until they commit, and with one row per month they all
-- queued on the same rows (a flood of 1,000 runs of one strategy took 7 times as long).
-- Which shard a result's trades went to does not matter: removing them from another one
-- leaves every sum right. A month whose trades all went is left out by the view.
CREATE TABLE pnl_months (
    strategy_id    text NOT NULL,
    strategy       smallint NOT NULL,
    strategy_class text NOT NULL,
    month          date NOT NULL,
    shard          smallint NOT NULL,
    trades         bigint NOT NULL,
    won            bigint NOT NULL,
    pnl_gross      numeric NOT NULL,
    pnl_net        numeric NOT NULL,
    commission     numeric NOT NULL,
    PRIMARY KEY (strategy_id, strategy, strategy_class, month, shard)
);

-- The same grouping as db/queries/pnl_months.sql's ApplyPnlMonths, over every result.
INSERT INTO pnl_months (strategy_id, strategy, strategy_class, month, shard, trades, won, pnl_gross, pnl_net, commission)
SELECT t.strategy_id, x.strategy, COALESCE(r.by_strategy -> x.strategy::int ->> 'name', ''),
       date_trunc('month', x.close_ts AT TIME ZONE t.timezone)::date, 0,
       count(*), count(*) FILTER (WHERE x.pnl_net >= 0),
       sum(x.pnl_gross::numeric), sum(x.pnl_net::numeric), sum(x.commission::numeric)
FROM result_trades x
JOIN results r ON r.task_id = x.task_id
JOIN tasks t ON t.id = x.task_id
WHERE NOT x.is_open AND x.close_ts IS NOT NULL
GROUP BY 1, 2, 3, 4;

-- The strategy's name is read when the view is: a renamed strategy shows its new name.
CREATE VIEW bi_pnl_months AS
SELECT m.strategy_id, s.name AS strategy_name, m.strategy, NULLIF(m.strategy_class, '') AS strategy_class,
       m.month, sum(m.trades)::bigint AS trades, sum(m.won)::bigint AS won, sum(m.pnl_gross) AS pnl_gross,
       sum(m.pnl_net) AS pnl_net, sum(m.commission) AS commission
FROM pnl_months m
LEFT JOIN strategies s ON s.id = m.strategy_id
GROUP BY m.strategy_id, s.name, m.strategy, m.strategy_class, m.month
HAVING sum(m.trades) > 0;

-- +goose Down
DROP VIEW bi_pnl_months;
DROP TABLE pnl_months;
