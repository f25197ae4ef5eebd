-- +goose Up
-- The provenance of a run: what it read and what ran it (internal/provenance), one row per
-- task, written with its completion. bar_prints keeps each fingerprinted bar series' per-bar
-- prints once, keyed by the series' sha256: runs over the same bars share the row, and a
-- later run over changed bars can name the bars that changed.
CREATE TABLE run_provenance (
    task_id    text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    attempt    integer NOT NULL,
    provenance jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bar_prints (
    sha256     text PRIMARY KEY,
    prints     bytea NOT NULL, -- provenance.EncodePrints: per bar its time and a 64-bit hash
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A reproduction of a run (POST /api/backtests/{id}/reproduce): the task it repeats and,
-- once it completed and was compared, the verdict.
CREATE TABLE task_reproductions (
    task_id    text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    of_task    text NOT NULL,
    outcome    text CHECK (outcome IN ('identical', 'differs')),
    causes     jsonb,
    checked_at timestamptz
);

-- bi_results (as 00066 made it) gains the provenance's code_sha256, engine_version and the
-- whole provenance document.
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

-- +goose Down
DROP VIEW bi_results;
CREATE VIEW bi_results AS
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
         WHERE c.strategy_id = t.strategy_id AND c.strategy_version = t.strategy_version) AS lookahead
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id
LEFT JOIN result_statistics st ON st.task_id = r.task_id;
DROP TABLE task_reproductions;
DROP TABLE bar_prints;
DROP TABLE run_provenance;
