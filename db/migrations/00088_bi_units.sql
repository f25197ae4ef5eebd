-- +goose Up
-- Units in the names: the win rate of bi_results and bi_study_results is a percent (won over
-- closed trades × 100), so its column is win_rate_pct, beside max_drawdown_pct; total_return,
-- annual_return and the other returns are fractions and keep their names. Views cannot
-- rename a column in place, so each is dropped and created again (nothing depends on them).
-- No figure is recomputed: a stored result keeps the figures of the build that ran it
-- (docs/sql.md).
DROP VIEW bi_results;
CREATE VIEW bi_results AS
SELECT r.task_id, r.task_strategy_id AS strategy_id, r.task_strategy_version AS strategy_version, s.name AS strategy_name, t.data_source,
       r.task_symbol AS symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate AS win_rate_pct, r.profit_factor, r.avg_win, r.avg_loss,
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

DROP VIEW bi_study_results;
CREATE VIEW bi_study_results AS
SELECT t.study_id, s.name AS study_name, s.strategy_id, s.strategy_version, st.name AS strategy_name,
       s.data_source, s.symbols, s.timeframe, s.start_date, s.end_date, s.objective, s.direction,
       t.idx, t.params, t.status, t.error, t.objective AS objective_value,
       t.initial_cash, t.final_value, t.total_return, t.annual_return, t.sharpe_ratio,
       t.max_drawdown, t.max_drawdown_pct, t.max_drawdown_duration, t.total_trades, t.won, t.lost,
       t.win_rate AS win_rate_pct, t.profit_factor, t.avg_win, t.avg_loss, t.sqn, t.bars, t.finished_at, t.fold
FROM study_trials t
JOIN studies s ON s.id = t.study_id
LEFT JOIN strategies st ON st.id = s.strategy_id;

-- +goose Down
DROP VIEW bi_study_results;
CREATE VIEW bi_study_results AS
SELECT t.study_id, s.name AS study_name, s.strategy_id, s.strategy_version, st.name AS strategy_name,
       s.data_source, s.symbols, s.timeframe, s.start_date, s.end_date, s.objective, s.direction,
       t.idx, t.params, t.status, t.error, t.objective AS objective_value,
       t.initial_cash, t.final_value, t.total_return, t.annual_return, t.sharpe_ratio,
       t.max_drawdown, t.max_drawdown_pct, t.max_drawdown_duration, t.total_trades, t.won, t.lost,
       t.win_rate, t.profit_factor, t.avg_win, t.avg_loss, t.sqn, t.bars, t.finished_at, t.fold
FROM study_trials t
JOIN studies s ON s.id = t.study_id
LEFT JOIN strategies st ON st.id = s.strategy_id;

DROP VIEW bi_results;
CREATE VIEW bi_results AS
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
