-- +goose Up
-- Walk-forward analysis: a study may run its combinations on several folds, each trained
-- (optimised) on its in-sample window; the winner of each fold then runs out of sample on
-- the window that follows. A plain study is one fold (0) over its whole range.
ALTER TABLE studies
    ADD COLUMN walk_forward jsonb,                  -- the request's {train, test, step, anchored}; null: none
    ADD COLUMN folds integer NOT NULL DEFAULT 1;

ALTER TABLE study_trials ADD COLUMN fold integer NOT NULL DEFAULT 0;

-- One row per fold: its windows (first and last bar of each), its winner, and the winner's
-- out-of-sample run (summary and equity curve).
CREATE TABLE study_folds (
    study_id          text NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    fold              integer NOT NULL,
    train_start       timestamptz NOT NULL,
    train_end         timestamptz NOT NULL,
    test_start        timestamptz NOT NULL,
    test_end          timestamptz NOT NULL,
    status            text NOT NULL DEFAULT 'optimising'
                      CHECK (status IN ('optimising', 'testing', 'completed', 'failed', 'cancelled')),
    error             text,
    best_idx          integer,                    -- the in-sample winner (a study_trials idx)
    params            jsonb,
    is_objective      float8,
    is_annual_return  float8,
    oos_objective     float8,
    oos_total_return  float8,
    oos_annual_return float8,
    oos_sharpe_ratio  float8,
    oos_max_drawdown_pct float8,
    oos_total_trades  integer,
    oos_times         timestamptz[],              -- the out-of-sample equity curve
    oos_values        float8[],
    finished_at       timestamptz,
    PRIMARY KEY (study_id, fold)
);
ALTER TABLE study_folds ALTER oos_values SET COMPRESSION lz4;

-- A fold's out-of-sample job holds a lease like a batch (fold set, trials empty).
ALTER TABLE study_batches ADD COLUMN fold integer;

CREATE OR REPLACE VIEW bi_study_results AS
SELECT t.study_id, s.name AS study_name, s.strategy_id, s.strategy_version, st.name AS strategy_name,
       s.data_source, s.symbols, s.timeframe, s.start_date, s.end_date, s.objective, s.direction,
       t.idx, t.params, t.status, t.error, t.objective AS objective_value,
       t.initial_cash, t.final_value, t.total_return, t.annual_return, t.sharpe_ratio,
       t.max_drawdown, t.max_drawdown_pct, t.max_drawdown_duration, t.total_trades, t.won, t.lost,
       t.win_rate, t.profit_factor, t.avg_win, t.avg_loss, t.sqn, t.bars, t.finished_at, t.fold
FROM study_trials t
JOIN studies s ON s.id = t.study_id
LEFT JOIN strategies st ON st.id = s.strategy_id;

CREATE VIEW bi_study_folds AS
SELECT f.study_id, s.name AS study_name, s.objective, f.fold, f.train_start, f.train_end, f.test_start,
       f.test_end, f.status, f.error, f.best_idx, f.params, f.is_objective, f.is_annual_return,
       f.oos_objective, f.oos_total_return, f.oos_annual_return, f.oos_sharpe_ratio,
       f.oos_max_drawdown_pct, f.oos_total_trades, f.finished_at
FROM study_folds f
JOIN studies s ON s.id = f.study_id;

-- +goose Down
DROP VIEW bi_study_folds;
DROP VIEW bi_study_results;
CREATE VIEW bi_study_results AS
SELECT t.study_id, s.name AS study_name, s.strategy_id, s.strategy_version, st.name AS strategy_name,
       s.data_source, s.symbols, s.timeframe, s.start_date, s.end_date, s.objective, s.direction,
       t.idx, t.params, t.status, t.error, t.objective AS objective_value,
       t.initial_cash, t.final_value, t.total_return, t.annual_return, t.sharpe_ratio,
       t.max_drawdown, t.max_drawdown_pct, t.max_drawdown_duration, t.total_trades, t.won, t.lost,
       t.win_rate, t.profit_factor, t.avg_win, t.avg_loss, t.sqn, t.bars, t.finished_at
FROM study_trials t
JOIN studies s ON s.id = t.study_id
LEFT JOIN strategies st ON st.id = s.strategy_id;
ALTER TABLE study_batches DROP COLUMN fold;
DROP TABLE study_folds;
ALTER TABLE study_trials DROP COLUMN fold;
ALTER TABLE studies DROP COLUMN folds, DROP COLUMN walk_forward;
