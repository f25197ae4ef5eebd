-- +goose Up
-- Immutable bar versions (internal/marketdata, docs/data.md "Versions"). An import that
-- changes a symbol's bars makes a new version of the symbol; a version's bars never change.
-- bars keeps the latest bars, so the latest read and the import's COPY stay as they were;
-- each row says since which version it holds (since_version). An import's UPDATE of a bar
-- moves the replaced row to bar_history, valid in versions [from_version, to_version).
-- Version N of a timeframe is therefore the rows of bars with since_version <= N and the
-- rows of bar_history with from_version <= N < to_version: unchanged bars are shared by
-- every version, and a version costs only the bars it changed.
ALTER TABLE bars ADD COLUMN since_version integer NOT NULL DEFAULT 1;

-- One row per version and timeframe it changed (a migrated symbol's version 1 has one row
-- per stored timeframe). Numbers count per symbol, across its timeframes.
CREATE TABLE bar_versions (
    source        text NOT NULL,
    symbol        text NOT NULL,
    version       integer NOT NULL CHECK (version > 0),
    timeframe     text NOT NULL,
    sha256        text,            -- provenance.FingerprintOf the version's bars; NULL until first asked (migrated versions)
    bars          bigint NOT NULL,
    first_ts      timestamptz,
    last_ts       timestamptz,
    changed       bigint NOT NULL DEFAULT 0, -- bars whose values differ from the version before
    added         bigint NOT NULL DEFAULT 0,
    removed       bigint NOT NULL DEFAULT 0,
    first_changed timestamptz,     -- earliest bar changed, added or removed
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, symbol, version, timeframe),
    FOREIGN KEY (source, symbol) REFERENCES symbols (source, symbol) ON DELETE CASCADE
);

CREATE TABLE bar_history (
    source       text NOT NULL,
    symbol       text NOT NULL,
    timeframe    text NOT NULL,
    ts           timestamptz NOT NULL,
    open         float8 NOT NULL,
    high         float8 NOT NULL,
    low          float8 NOT NULL,
    close        float8 NOT NULL,
    volume       bigint NOT NULL,
    from_version integer NOT NULL,
    to_version   integer NOT NULL,
    PRIMARY KEY (source, symbol, timeframe, ts, from_version),
    FOREIGN KEY (source, symbol) REFERENCES symbols (source, symbol) ON DELETE CASCADE,
    CHECK (from_version < to_version)
);

-- The bars stored now are version 1 of their symbol.
INSERT INTO bar_versions (source, symbol, version, timeframe, bars, first_ts, last_ts, added, first_changed)
SELECT source, symbol, 1, timeframe, bars, first_ts, last_ts, bars, first_ts FROM bar_ranges;

-- An UPDATE that moves a bar to a newer version keeps the replaced row as history. An
-- UPDATE that leaves since_version alone (SQL from a console) is outside versioning.
-- +goose StatementBegin
CREATE FUNCTION bars_keep_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bar_history (source, symbol, timeframe, ts, open, high, low, close, volume, from_version, to_version)
    SELECT o.source, o.symbol, o.timeframe, o.ts, o.open, o.high, o.low, o.close, o.volume, o.since_version, n.since_version
    FROM old_bars o JOIN new_bars n USING (source, symbol, timeframe, ts)
    WHERE n.since_version > o.since_version;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER bars_keep_history AFTER UPDATE ON bars
    REFERENCING OLD TABLE AS old_bars NEW TABLE AS new_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bars_keep_history();

-- Nothing changes a version's past bars.
-- +goose StatementBegin
CREATE FUNCTION bar_history_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'bar_history rows are immutable' USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER bar_history_immutable BEFORE UPDATE ON bar_history
    FOR EACH ROW EXECUTE FUNCTION bar_history_immutable();

-- +goose Down
DROP TRIGGER bar_history_immutable ON bar_history;
DROP FUNCTION bar_history_immutable();
DROP TRIGGER bars_keep_history ON bars;
DROP FUNCTION bars_keep_history();
DROP TABLE bar_history;
DROP TABLE bar_versions;
ALTER TABLE bars DROP COLUMN since_version;
