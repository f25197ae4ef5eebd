-- +goose Up
-- A run may hold several strategies on one broker (backtrader's addstrategy called more
-- than once): each fill and round trip keeps the index of the strategy whose order made it
-- (0 for the first, and for every run of one strategy), and the result keeps each
-- strategy's own figures (engine.StrategyResult), empty for a run of one.
ALTER TABLE result_executions ADD COLUMN strategy smallint NOT NULL DEFAULT 0;
ALTER TABLE result_trades ADD COLUMN strategy smallint NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN by_strategy jsonb NOT NULL DEFAULT '[]';

-- bi_trades gains the column at its end (the views' columns are only ever added).
-- bi_executions is left as it is: 00083 replaces it with a column list of its own, which a
-- column added here first would break.
CREATE OR REPLACE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, COALESCE(NULLIF(rt.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = rt.task_id)) AS symbol,
       rt.is_open, rt.open_ts, rt.close_ts, rt.size, rt.entry_price, rt.exit_price, rt.pnl_gross,
       rt.pnl_net, rt.commission, rt.bar_len, rt.tradeid, rt.strategy
FROM result_trades rt;

-- +goose Down
-- A view cannot lose a column by CREATE OR REPLACE: drop it and make it as 00043 did.
DROP VIEW bi_trades;
CREATE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, COALESCE(NULLIF(rt.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = rt.task_id)) AS symbol,
       rt.is_open, rt.open_ts, rt.close_ts, rt.size, rt.entry_price, rt.exit_price, rt.pnl_gross,
       rt.pnl_net, rt.commission, rt.bar_len, rt.tradeid
FROM result_trades rt;
ALTER TABLE results DROP COLUMN by_strategy;
ALTER TABLE result_trades DROP COLUMN strategy;
ALTER TABLE result_executions DROP COLUMN strategy;
