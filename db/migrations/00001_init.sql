-- +goose Up

-- Strategies: the row is the mutable head; every create or replace appends an
-- immutable version, and tasks point at the exact version they ran.
CREATE SEQUENCE strategy_seq;
CREATE TABLE strategies (
    id              text PRIMARY KEY,                 -- 'str_<n>' from strategy_seq
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    current_version integer NOT NULL DEFAULT 0,
    origin          text NOT NULL DEFAULT 'api',      -- 'api' or the file path it is loaded from
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz
);
CREATE UNIQUE INDEX strategies_file_origin ON strategies (origin) WHERE origin <> 'api' AND deleted_at IS NULL;

CREATE TABLE strategy_versions (
    strategy_id  text NOT NULL REFERENCES strategies (id),
    version      integer NOT NULL,
    name         text NOT NULL,
    description  text NOT NULL DEFAULT '',
    code         text NOT NULL,
    class_name   text NOT NULL,
    params       jsonb NOT NULL DEFAULT '[]',         -- ordered [{name, default, type, description}]
    origin       text NOT NULL,
    content_hash text NOT NULL,                       -- sha256 of code, hex
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (strategy_id, version)
);

-- Market data: sources, their symbols and bars.
CREATE TABLE data_sources (
    name        text PRIMARY KEY,
    description text NOT NULL DEFAULT '',
    is_default  boolean NOT NULL DEFAULT false,
    config      jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX data_sources_one_default ON data_sources (is_default) WHERE is_default;

CREATE TABLE symbols (
    source     text NOT NULL REFERENCES data_sources (name),
    symbol     text NOT NULL,
    name       text NOT NULL DEFAULT '',
    is_sample  boolean NOT NULL DEFAULT false,
    is_default boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, symbol)
);

CREATE TABLE bars (
    source    text NOT NULL,
    symbol    text NOT NULL,
    timeframe text NOT NULL,                          -- '1m','5m','15m','1h','4h','1d','1w','1M'
    ts        timestamptz NOT NULL,
    open      float8 NOT NULL,
    high      float8 NOT NULL,
    low       float8 NOT NULL,
    close     float8 NOT NULL,
    volume    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (source, symbol, timeframe, ts),
    FOREIGN KEY (source, symbol) REFERENCES symbols (source, symbol)
);

-- Backtest tasks and their attempts.
CREATE SEQUENCE task_seq;
CREATE TABLE tasks (
    id               text PRIMARY KEY,                -- 'task_<n>' from task_seq
    strategy_id      text NOT NULL,
    strategy_version integer NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    data_source      text NOT NULL,
    symbol           text NOT NULL,
    start_date       date NOT NULL,
    end_date         date NOT NULL,
    initial_cash     float8 NOT NULL,
    commission       float8 NOT NULL,
    strategy_params  jsonb NOT NULL DEFAULT '{}',
    session_id       text NOT NULL,
    progress         float8 NOT NULL DEFAULT 0,
    current_bar      integer NOT NULL DEFAULT 0,
    total_bars       integer NOT NULL DEFAULT 0,
    error            text,
    attempt          integer NOT NULL DEFAULT 1,
    job_id           bigint,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    completed_at     timestamptz,
    FOREIGN KEY (strategy_id, strategy_version) REFERENCES strategy_versions (strategy_id, version)
);
CREATE INDEX tasks_created ON tasks (created_at DESC, id DESC);
CREATE INDEX tasks_strategy ON tasks (strategy_id);
CREATE INDEX tasks_status ON tasks (status);

CREATE TABLE task_attempts (
    task_id      text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt      integer NOT NULL,
    status       text NOT NULL,
    error        text,
    job_id       bigint,
    created_at   timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    completed_at timestamptz,
    PRIMARY KEY (task_id, attempt)
);

CREATE TABLE task_logs (
    id        bigserial PRIMARY KEY,
    task_id   text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt   integer NOT NULL DEFAULT 1,
    ts        timestamptz NOT NULL DEFAULT now(),     -- wall time the line was produced
    bar_time  timestamptz,                            -- the bar being processed, when known
    level     text NOT NULL,                          -- DEBUG, INFO, WARNING, ERROR
    source    text NOT NULL DEFAULT 'strategy',       -- strategy or engine
    message   text NOT NULL
);
CREATE INDEX task_logs_task ON task_logs (task_id, id);

-- Results, normalised so BI tools can query them with plain SQL.
CREATE TABLE results (
    task_id               text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    attempt               integer NOT NULL,
    initial_cash          float8 NOT NULL,
    final_value           float8 NOT NULL,
    final_cash            float8 NOT NULL,
    total_return          float8 NOT NULL,
    annual_return         float8,
    sharpe_ratio          float8,
    max_drawdown          float8 NOT NULL,            -- money
    max_drawdown_pct      float8 NOT NULL,
    max_drawdown_duration integer NOT NULL DEFAULT 0, -- calendar days
    total_trades          integer NOT NULL,
    won                   integer NOT NULL,
    lost                  integer NOT NULL,
    win_rate              float8,
    profit_factor         float8,
    avg_win               float8,
    avg_loss              float8,
    sqn                   float8 NOT NULL DEFAULT 0,
    bars                  integer NOT NULL,
    analyzers             jsonb NOT NULL DEFAULT '{}',-- full analyzer blocks as the engine gives them
    created_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE result_executions (
    task_id    text NOT NULL REFERENCES results (task_id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    ref        integer NOT NULL,
    ts         timestamptz NOT NULL,
    side       text NOT NULL,                         -- buy or sell
    exec_type  text NOT NULL,
    price      float8 NOT NULL,
    size       float8 NOT NULL,                       -- signed
    value      float8 NOT NULL,
    commission float8 NOT NULL,
    pnl        float8 NOT NULL,
    PRIMARY KEY (task_id, seq)
);

CREATE TABLE result_trades (
    task_id     text NOT NULL REFERENCES results (task_id) ON DELETE CASCADE,
    seq         integer NOT NULL,
    ref         integer NOT NULL,
    symbol      text NOT NULL DEFAULT '',
    is_open     boolean NOT NULL DEFAULT false,
    open_ts     timestamptz NOT NULL,
    close_ts    timestamptz,
    size        float8 NOT NULL,
    entry_price float8 NOT NULL,
    exit_price  float8,
    pnl_gross   float8 NOT NULL,
    pnl_net     float8 NOT NULL,
    commission  float8 NOT NULL,
    bar_len     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, seq)
);

CREATE TABLE result_equity (
    task_id        text NOT NULL REFERENCES results (task_id) ON DELETE CASCADE,
    seq            integer NOT NULL,
    ts             timestamptz NOT NULL,
    value          float8 NOT NULL,
    cash           float8 NOT NULL,
    ret            float8 NOT NULL,                   -- value / previous value - 1
    drawdown_pct   float8 NOT NULL,
    drawdown_money float8 NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- +goose Down
DROP TABLE result_equity, result_trades, result_executions, results, task_logs, task_attempts, tasks,
    bars, symbols, data_sources, strategy_versions, strategies;
DROP SEQUENCE task_seq, strategy_seq;
