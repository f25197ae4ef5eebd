-- +goose Up
-- Parameter studies: one backtest request run over many parameter combinations. The
-- combinations are stored when the study is made (study_trials, pending) and each one's
-- figures fill its row when a worker has run it; the runs go to River in batches.
CREATE SEQUENCE study_seq;

CREATE TABLE studies (
    id               text PRIMARY KEY,                -- 'study_<n>' from study_seq
    name             text NOT NULL DEFAULT '',
    strategy_id      text NOT NULL,
    strategy_version integer NOT NULL,
    data_source      text NOT NULL,
    symbols          text[] NOT NULL CHECK (cardinality(symbols) >= 1),
    timeframe        text NOT NULL,
    timezone         text NOT NULL,
    start_date       date NOT NULL,
    end_date         date NOT NULL,
    initial_cash     float8 NOT NULL,
    commission       float8 NOT NULL,
    strategy_params  jsonb NOT NULL DEFAULT '{}',    -- the values every combination shares
    space            jsonb NOT NULL,                  -- parameter name -> the values it takes
    method           text NOT NULL CHECK (method IN ('grid', 'random')),
    samples          integer,
    seed             bigint,
    constraint_expr  text,
    objective        text NOT NULL,
    direction        text NOT NULL CHECK (direction IN ('max', 'min')),
    blocks           integer NOT NULL,                -- of the probability of backtest overfitting
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    total            integer NOT NULL,                -- combinations run (after the constraint)
    excluded         integer NOT NULL DEFAULT 0,      -- combinations the constraint left out
    error            text,
    overfitting      jsonb,                           -- the finished study's statistics, computed once
    created_by       text REFERENCES users (name),
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    completed_at     timestamptz,
    FOREIGN KEY (strategy_id, strategy_version) REFERENCES strategy_versions (strategy_id, version)
);
CREATE INDEX studies_created ON studies (created_at DESC, id DESC);

-- One row per combination: its parameters, then its run's summary as typed columns (the
-- same as results') and its per-bar returns (for the overfitting statistics).
CREATE TABLE study_trials (
    study_id              text NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    idx                   integer NOT NULL,           -- position in the plan (grid order)
    params                jsonb NOT NULL,             -- every parameter, the shared ones too
    status                text NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'completed', 'failed', 'cancelled')),
    error                 text,
    objective             float8,                     -- null: not run, failed, or undefined
    initial_cash          float8,
    final_value           float8,
    total_return          float8,
    annual_return         float8,
    sharpe_ratio          float8,
    max_drawdown          float8,
    max_drawdown_pct      float8,
    max_drawdown_duration integer,
    total_trades          integer,
    won                   integer,
    lost                  integer,
    win_rate              float8,
    profit_factor         float8,
    avg_win               float8,
    avg_loss              float8,
    sqn                   float8,
    bars                  integer,
    returns               float8[],
    finished_at           timestamptz,
    PRIMARY KEY (study_id, idx)
);
ALTER TABLE study_trials ALTER returns SET COMPRESSION lz4;

-- The varied parameters again, one typed row per trial and parameter, for SQL that filters
-- or groups by them (study_trials.params holds them as JSON).
CREATE TABLE study_trial_params (
    study_id text NOT NULL,
    idx      integer NOT NULL,
    name     text NOT NULL,
    num      float8,                                  -- int and float parameters
    txt      text,                                    -- str parameters
    flag     boolean,                                 -- bool parameters
    PRIMARY KEY (study_id, idx, name),
    FOREIGN KEY (study_id, idx) REFERENCES study_trials (study_id, idx) ON DELETE CASCADE
);

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

CREATE VIEW bi_study_params AS
SELECT study_id, idx, name, num, txt, flag FROM study_trial_params;

-- A running batch's lease: its worker renews heartbeat_at; a batch whose heartbeats stop
-- (the worker died or lost the database) has its pending trials queued again by any worker.
CREATE TABLE study_batches (
    job_id       bigint PRIMARY KEY,
    study_id     text NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    trials       int[] NOT NULL,
    lease        bigint NOT NULL,
    worker       text NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE study_batches;
DROP VIEW bi_study_params;
DROP VIEW bi_study_results;
DROP TABLE study_trial_params;
DROP TABLE study_trials;
DROP TABLE studies;
DROP SEQUENCE study_seq;
