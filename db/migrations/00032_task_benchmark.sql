-- +goose Up
-- A task's benchmark: the symbol of its data source whose buy-and-hold the equity chart
-- draws and the benchmark statistics (alpha, beta, correlation, tracking error, information
-- ratio) measure the run against. Tasks made before benchmarks were chosen used their first
-- feed, the default.
ALTER TABLE tasks ADD COLUMN benchmark text;
UPDATE tasks SET benchmark = symbol;
ALTER TABLE tasks ALTER COLUMN benchmark SET NOT NULL;

-- bi_results gains the benchmark and its statistics, read from the stored statistics record
-- (null for results stored before they were computed).
CREATE OR REPLACE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at,
       t.symbols, t.timeframe, t.benchmark,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "benchmark_return").value') #>> '{}')::float8 AS benchmark_return,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "alpha").value') #>> '{}')::float8 AS alpha,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "beta").value') #>> '{}')::float8 AS beta,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "correlation").value') #>> '{}')::float8 AS correlation,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "tracking_error").value') #>> '{}')::float8 AS tracking_error,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "information_ratio").value') #>> '{}')::float8 AS information_ratio
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id
LEFT JOIN result_statistics st ON st.task_id = r.task_id;

-- +goose Down
DROP VIEW bi_results;
CREATE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at,
       t.symbols, t.timeframe
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id;
ALTER TABLE tasks DROP COLUMN benchmark;
