-- +goose Up
-- The order's status after each execution: 'Partial' while a volume filler leaves some of
-- the order to fill on later bars, 'Completed' on its last part (engine.Execution.Status).
-- Rows stored before this migration keep '' (not recorded).
ALTER TABLE result_executions ADD COLUMN status text NOT NULL DEFAULT '';

CREATE OR REPLACE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = e.task_id)) AS symbol,
       e.ts, e.side, e.exec_type, e.price, e.size, e.value, e.commission, e.pnl, e.status
FROM result_executions e;

-- +goose Down
DROP VIEW bi_executions;
CREATE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = e.task_id)) AS symbol,
       e.ts, e.side, e.exec_type, e.price, e.size, e.value, e.commission, e.pnl
FROM result_executions e;
ALTER TABLE result_executions DROP COLUMN status;
