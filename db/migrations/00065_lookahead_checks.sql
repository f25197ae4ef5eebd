-- +goose Up
-- The verdict of the look-ahead check (internal/bias) per strategy version and data: the
-- latest check of a version on a data source, symbols and timeframe replaces the one before.
CREATE TABLE lookahead_checks (
    id               bigserial PRIMARY KEY,
    strategy_id      text NOT NULL,
    strategy_version integer NOT NULL,
    data_source      text NOT NULL,
    symbols          text[] NOT NULL,
    timeframe        text NOT NULL,
    start_date       date NOT NULL,
    end_date         date NOT NULL,
    strategy_params  jsonb NOT NULL DEFAULT '{}',
    lookahead        boolean NOT NULL,
    cuts             integer NOT NULL,
    bars             integer NOT NULL,
    report           jsonb NOT NULL, -- bias.Report: findings, cuts, warm-up
    checked_by       text,
    checked_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (strategy_id, strategy_version) REFERENCES strategy_versions (strategy_id, version) ON DELETE CASCADE,
    UNIQUE (strategy_id, strategy_version, data_source, symbols, timeframe)
);

-- For BI: one row per check.
CREATE VIEW bi_lookahead_checks AS
SELECT strategy_id, strategy_version, data_source, symbols, timeframe, start_date, end_date,
       strategy_params, lookahead, cuts, bars, jsonb_array_length(report->'findings') AS findings,
       checked_by, checked_at
FROM lookahead_checks;

-- +goose Down
DROP VIEW bi_lookahead_checks;
DROP TABLE lookahead_checks;
