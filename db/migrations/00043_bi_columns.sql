-- +goose Up
-- BI at hundreds of thousands of results. The benchmark figures of bi_results were a
-- jsonpath over each result's 3 KB statistics document, 5-6 s for avg(alpha) at 300,000
-- results: they are real columns of results now, set from the statistics record when it is
-- stored (a trigger, so every writer agrees) and filled here for the results before. The
-- views join each table once: bi_results no longer joins result_statistics, and bi_trades
-- and bi_executions read a task's symbol only for the rare row stored without one (before
-- portfolio runs), instead of joining tasks for every trade.
ALTER TABLE results
    ADD COLUMN benchmark_return float8,
    ADD COLUMN alpha float8,
    ADD COLUMN beta float8,
    ADD COLUMN correlation float8,
    ADD COLUMN tracking_error float8,
    ADD COLUMN information_ratio float8;

UPDATE results r SET
    benchmark_return = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "benchmark_return").value') #>> '{}')::float8,
    alpha = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "alpha").value') #>> '{}')::float8,
    beta = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "beta").value') #>> '{}')::float8,
    correlation = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "correlation").value') #>> '{}')::float8,
    tracking_error = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "tracking_error").value') #>> '{}')::float8,
    information_ratio = (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "information_ratio").value') #>> '{}')::float8
FROM result_statistics st WHERE st.task_id = r.task_id;

-- +goose StatementBegin
CREATE FUNCTION result_statistics_figures() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE results SET
        benchmark_return = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "benchmark_return").value') #>> '{}')::float8,
        alpha = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "alpha").value') #>> '{}')::float8,
        beta = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "beta").value') #>> '{}')::float8,
        correlation = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "correlation").value') #>> '{}')::float8,
        tracking_error = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "tracking_error").value') #>> '{}')::float8,
        information_ratio = (jsonb_path_query_first(NEW.record, '$.groups[*].metrics[*] ? (@.key == "information_ratio").value') #>> '{}')::float8
    WHERE task_id = NEW.task_id;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER result_statistics_figures AFTER INSERT OR UPDATE OF record ON result_statistics
    FOR EACH ROW EXECUTE FUNCTION result_statistics_figures();

CREATE OR REPLACE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at,
       t.symbols, t.timeframe, t.benchmark,
       r.benchmark_return,
       r.alpha,
       r.beta,
       r.correlation,
       r.tracking_error,
       r.information_ratio,
       t.timezone
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id;

CREATE OR REPLACE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, COALESCE(NULLIF(rt.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = rt.task_id)) AS symbol,
       rt.is_open, rt.open_ts, rt.close_ts, rt.size, rt.entry_price, rt.exit_price, rt.pnl_gross,
       rt.pnl_net, rt.commission, rt.bar_len, rt.tradeid
FROM result_trades rt;

CREATE OR REPLACE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), (SELECT t.symbol FROM tasks t WHERE t.id = e.task_id)) AS symbol,
       e.ts, e.side, e.exec_type, e.price, e.size, e.value, e.commission, e.pnl
FROM result_executions e;

-- +goose Down
CREATE OR REPLACE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), t.symbol) AS symbol, e.ts, e.side,
       e.exec_type, e.price, e.size, e.value, e.commission, e.pnl
FROM result_executions e
JOIN tasks t ON t.id = e.task_id;

CREATE OR REPLACE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, COALESCE(NULLIF(rt.symbol, ''), t.symbol) AS symbol, rt.is_open,
       rt.open_ts, rt.close_ts, rt.size, rt.entry_price, rt.exit_price, rt.pnl_gross,
       rt.pnl_net, rt.commission, rt.bar_len, rt.tradeid
FROM result_trades rt
JOIN tasks t ON t.id = rt.task_id;

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
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "information_ratio").value') #>> '{}')::float8 AS information_ratio,
       t.timezone
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id
LEFT JOIN result_statistics st ON st.task_id = r.task_id;

DROP TRIGGER result_statistics_figures ON result_statistics;
DROP FUNCTION result_statistics_figures();
ALTER TABLE results DROP COLUMN benchmark_return, DROP COLUMN alpha, DROP COLUMN beta, DROP COLUMN correlation, DROP COLUMN tracking_error, DROP COLUMN information_ratio;
