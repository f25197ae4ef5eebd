-- +goose Up
-- The strategy whose order filled (00080's result_executions.strategy: its index in the
-- run's strategies, 0 for a run of one), at the end of bi_executions as bi_trades has it.
CREATE OR REPLACE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = e.task_id)) AS symbol,
       e.ts, e.side, e.exec_type, e.price, e.size, e.value, e.commission, e.pnl, e.status, e.strategy
FROM result_executions e;

-- +goose Down
DROP VIEW bi_executions;
CREATE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = e.task_id)) AS symbol,
       e.ts, e.side, e.exec_type, e.price, e.size, e.value, e.commission, e.pnl, e.status
FROM result_executions e;
