-- name: DeleteResult :exec
DELETE FROM results WHERE task_id = $1;

-- name: InsertResult :exec
INSERT INTO results (
    task_id, attempt, initial_cash, final_value, final_cash, total_return, annual_return,
    sharpe_ratio, max_drawdown, max_drawdown_pct, max_drawdown_duration, total_trades, won, lost,
    win_rate, profit_factor, avg_win, avg_loss, sqn, bars, analyzers, by_symbol, by_strategy
) VALUES (
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23
);

-- name: CopyResultExecutions :copyfrom
INSERT INTO result_executions (task_id, seq, ref, ts, side, exec_type, price, size, value, commission, pnl, symbol, status, strategy)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- name: CopyResultTrades :copyfrom
INSERT INTO result_trades (task_id, seq, ref, symbol, is_open, open_ts, close_ts, size, entry_price,
                           exit_price, pnl_gross, pnl_net, commission, bar_len, tradeid, strategy)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16);

-- name: InsertResultEquity :exec
-- Times, values and cash: returns and drawdowns are derived from the values on reading
-- (engine.DeriveEquity, and the result_equity view).
-- The times are stored as the first and the steps (µs) to each next one, the first step 0
-- (as equity_steps computes them in SQL).
-- positions: the PyFolio positions' feed columns, row by row (NULL: in the analyzers document).
INSERT INTO result_equity_series (task_id, ts_first, ts_steps, value, cash, positions)
VALUES (@task_id, @ts_first::timestamptz, @ts_steps::bigint[], @value::float8[], @cash::float8[], sqlc.narg(positions)::float8[]);

-- name: GetResult :one
SELECT * FROM results WHERE task_id = $1;

-- name: GetResultWithTask :one
SELECT r.*, t.status, t.data_source, t.symbol, t.symbols, t.timeframe, t.benchmark, t.timezone, t.start_date, t.end_date,
       t.strategy_id, t.strategy_version, t.strategy_params, t.commission,
       COALESCE(s.name, '')::text AS strategy_name
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id
WHERE r.task_id = $1;

-- name: GetTaskResultState :one
SELECT t.id, t.status, (r.task_id IS NOT NULL)::boolean AS has_result
FROM tasks t
LEFT JOIN results r ON r.task_id = t.id
WHERE t.id = $1;

-- name: CountResultExecutions :one
SELECT count(*) FROM result_executions WHERE task_id = $1;

-- name: ListResultExecutions :many
SELECT * FROM result_executions WHERE task_id = $1 ORDER BY seq;

-- name: PageResultExecutions :many
SELECT * FROM result_executions WHERE task_id = $1 ORDER BY seq OFFSET $2 LIMIT $3;

-- name: CountResultTrades :one
SELECT count(*) FROM result_trades WHERE task_id = $1;

-- name: ListResultTrades :many
SELECT * FROM result_trades WHERE task_id = $1 ORDER BY seq;

-- name: PageResultTrades :many
SELECT * FROM result_trades WHERE task_id = $1 ORDER BY seq OFFSET $2 LIMIT $3;

-- name: GetResultEquity :one
-- The times as stored: the first and the steps (µs) to each next (results.equityTimes).
SELECT ts_first, ts_steps, value, cash FROM result_equity_series WHERE task_id = $1;

-- name: GetResultPositions :one
-- The PyFolio positions kept beside the equity curve (results.RestorePositions).
SELECT cash, positions::float8[] AS positions FROM result_equity_series WHERE task_id = $1 AND positions IS NOT NULL;

-- name: GetResultEquityValues :one
-- The equity curve's times and values only: what the statistics record reads.
SELECT ts_first, ts_steps, value FROM result_equity_series WHERE task_id = $1;

-- name: InsertResultStatistics :exec
INSERT INTO result_statistics (task_id, record) VALUES ($1, $2);

-- name: GetResultStatistics :one
-- The stored statistics record of a result (NULL for results stored before it was kept),
-- with what computing it again needs.
SELECT r.initial_cash, r.sqn, s.record
FROM results r
LEFT JOIN result_statistics s ON s.task_id = r.task_id
WHERE r.task_id = $1;

-- name: SetResultFindings :exec
-- The run's findings (internal/findings), written with its result in the same transaction.
UPDATE results SET findings = $2 WHERE task_id = $1;

-- name: ResultFindings :one
-- A result's stored findings (NULL: stored before findings existed) and what names the
-- look-ahead checks that speak of it.
SELECT r.findings, t.strategy_id, t.strategy_version, t.data_source, t.symbols, t.timeframe
FROM results r JOIN tasks t ON t.id = r.task_id
WHERE r.task_id = $1;
