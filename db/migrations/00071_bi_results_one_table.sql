-- +goose Up
-- BI over a year of results reads one table. Every bi_results query grouped or sorted by a
-- strategy, so it joined results with tasks (two scans and a hash of 300,000 rows each)
-- even for avg(alpha). A result now carries its task's strategy, version and symbol (set
-- from the task when the result is stored, by a trigger, so every writer agrees; a task's
-- are fixed when it is created), and bi_results reads them from results: tasks is joined
-- only for the columns that are its own (dates, parameters, ...), and the planner leaves
-- the join out of a query that reads none of them.
--
-- The stored row also gets narrower: by_symbol (a few hundred bytes of JSON per result,
-- read only with one result) moves out of line like analyzers, so a scan of every result
-- reads about half the pages. toast_tuple_target applies to rows written from now on; the
-- UPDATE below rewrites the rows there are.
ALTER TABLE results
    ADD COLUMN task_strategy_id text,
    ADD COLUMN task_strategy_version integer,
    ADD COLUMN task_symbol text;
ALTER TABLE results SET (toast_tuple_target = 256);

UPDATE results r SET task_strategy_id = t.strategy_id, task_strategy_version = t.strategy_version, task_symbol = t.symbol
FROM tasks t WHERE t.id = r.task_id;

-- +goose StatementBegin
CREATE FUNCTION results_task_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT t.strategy_id, t.strategy_version, t.symbol INTO NEW.task_strategy_id, NEW.task_strategy_version, NEW.task_symbol
    FROM tasks t WHERE t.id = NEW.task_id;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER results_task_keys BEFORE INSERT ON results
    FOR EACH ROW EXECUTE FUNCTION results_task_keys();

-- The best result per strategy version (docs/sql.md) is read in this order from the index
-- alone, without a sort (which spilled to disk with the default work_mem) or the table.
CREATE INDEX results_bi_best_sharpe ON results (task_strategy_id, task_strategy_version, sharpe_ratio DESC)
    INCLUDE (task_id, total_return, task_symbol) WHERE sharpe_ratio IS NOT NULL;

CREATE OR REPLACE VIEW bi_results AS
SELECT r.task_id, r.task_strategy_id AS strategy_id, r.task_strategy_version AS strategy_version, s.name AS strategy_name, t.data_source,
       r.task_symbol AS symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
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
       t.timezone,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "sortino_ratio").value') #>> '{}')::float8 AS sortino_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "calmar_ratio").value') #>> '{}')::float8 AS calmar_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "omega_ratio").value') #>> '{}')::float8 AS omega_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "value_at_risk").value') #>> '{}')::float8 AS value_at_risk,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "expected_shortfall").value') #>> '{}')::float8 AS expected_shortfall,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "tail_ratio").value') #>> '{}')::float8 AS tail_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "ulcer_index").value') #>> '{}')::float8 AS ulcer_index,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "kelly_criterion").value') #>> '{}')::float8 AS kelly_criterion,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "skew").value') #>> '{}')::float8 AS skew,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "kurtosis").value') #>> '{}')::float8 AS kurtosis,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "probabilistic_sharpe_ratio").value') #>> '{}')::float8 AS probabilistic_sharpe_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "max_consecutive_wins").value') #>> '{}')::int4 AS max_consecutive_wins,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "max_consecutive_losses").value') #>> '{}')::int4 AS max_consecutive_losses,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "recovery_factor").value') #>> '{}')::float8 AS recovery_factor,
       (SELECT bool_or(c.lookahead) FROM lookahead_checks c
         WHERE c.strategy_id = r.task_strategy_id AND c.strategy_version = r.task_strategy_version) AS lookahead,
       p.provenance ->> 'code_sha256' AS code_sha256,
       p.provenance ->> 'engine_version' AS engine_version,
       p.provenance
FROM results r
-- Every result has its task (a foreign key): a left join the planner can leave out.
LEFT JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = r.task_strategy_id
LEFT JOIN result_statistics st ON st.task_id = r.task_id
LEFT JOIN run_provenance p ON p.task_id = r.task_id;

-- +goose Down
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
       t.timezone,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "sortino_ratio").value') #>> '{}')::float8 AS sortino_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "calmar_ratio").value') #>> '{}')::float8 AS calmar_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "omega_ratio").value') #>> '{}')::float8 AS omega_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "value_at_risk").value') #>> '{}')::float8 AS value_at_risk,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "expected_shortfall").value') #>> '{}')::float8 AS expected_shortfall,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "tail_ratio").value') #>> '{}')::float8 AS tail_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "ulcer_index").value') #>> '{}')::float8 AS ulcer_index,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "kelly_criterion").value') #>> '{}')::float8 AS kelly_criterion,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "skew").value') #>> '{}')::float8 AS skew,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "kurtosis").value') #>> '{}')::float8 AS kurtosis,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "probabilistic_sharpe_ratio").value') #>> '{}')::float8 AS probabilistic_sharpe_ratio,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "max_consecutive_wins").value') #>> '{}')::int4 AS max_consecutive_wins,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "max_consecutive_losses").value') #>> '{}')::int4 AS max_consecutive_losses,
       (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == "recovery_factor").value') #>> '{}')::float8 AS recovery_factor,
       (SELECT bool_or(c.lookahead) FROM lookahead_checks c
         WHERE c.strategy_id = t.strategy_id AND c.strategy_version = t.strategy_version) AS lookahead,
       p.provenance ->> 'code_sha256' AS code_sha256,
       p.provenance ->> 'engine_version' AS engine_version,
       p.provenance
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id
LEFT JOIN result_statistics st ON st.task_id = r.task_id
LEFT JOIN run_provenance p ON p.task_id = r.task_id;
DROP INDEX results_bi_best_sharpe;
DROP TRIGGER results_task_keys ON results;
DROP FUNCTION results_task_keys();
ALTER TABLE results RESET (toast_tuple_target);
ALTER TABLE results DROP COLUMN task_symbol, DROP COLUMN task_strategy_version, DROP COLUMN task_strategy_id;
