-- +goose Up
-- What each symbol holds of each timeframe (first and last bar, how many), for the symbol
-- listing: counting the bars of 20 symbols on every search took 0.3 s with 2 million bars.
-- Kept exact by triggers on bars in the writing statement's transaction, whatever writes
-- (imports COPY and upsert; SQL from a console deletes): an insert adds what it brought, a
-- delete or update recounts the symbols it touched.
CREATE TABLE bar_ranges (
    source    text NOT NULL,
    symbol    text NOT NULL,
    timeframe text NOT NULL,
    first_ts  timestamptz NOT NULL,
    last_ts   timestamptz NOT NULL,
    bars      bigint NOT NULL,
    PRIMARY KEY (source, symbol, timeframe),
    FOREIGN KEY (source, symbol) REFERENCES symbols (source, symbol) ON DELETE CASCADE
);

INSERT INTO bar_ranges (source, symbol, timeframe, first_ts, last_ts, bars)
SELECT source, symbol, timeframe, min(ts), max(ts), count(*) FROM bars GROUP BY source, symbol, timeframe;

-- +goose StatementBegin
CREATE FUNCTION bar_ranges_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bar_ranges AS r (source, symbol, timeframe, first_ts, last_ts, bars)
    SELECT source, symbol, timeframe, min(ts), max(ts), count(*) FROM new_bars GROUP BY source, symbol, timeframe
    ON CONFLICT (source, symbol, timeframe) DO UPDATE
    SET first_ts = least(r.first_ts, EXCLUDED.first_ts), last_ts = greatest(r.last_ts, EXCLUDED.last_ts),
        bars = r.bars + EXCLUDED.bars;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bar_ranges_recount_one(src text, sym text, tf text) RETURNS void LANGUAGE sql AS $$
    DELETE FROM bar_ranges WHERE source = src AND symbol = sym AND timeframe = tf;
    INSERT INTO bar_ranges (source, symbol, timeframe, first_ts, last_ts, bars)
    SELECT src, sym, tf, min(ts), max(ts), count(*) FROM bars
    WHERE source = src AND symbol = sym AND timeframe = tf
    HAVING count(*) > 0;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bar_ranges_recount() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k record;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM bar_ranges;
        RETURN NULL;
    END IF;
    FOR k IN SELECT DISTINCT source, symbol, timeframe FROM old_bars LOOP
        PERFORM bar_ranges_recount_one(k.source, k.symbol, k.timeframe);
    END LOOP;
    IF TG_OP = 'UPDATE' THEN -- the symbols and timeframes a bar joined, too
        FOR k IN SELECT DISTINCT source, symbol, timeframe FROM new_bars LOOP
            PERFORM bar_ranges_recount_one(k.source, k.symbol, k.timeframe);
        END LOOP;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER bar_ranges_insert AFTER INSERT ON bars
    REFERENCING NEW TABLE AS new_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bar_ranges_insert();
CREATE TRIGGER bar_ranges_update AFTER UPDATE ON bars
    REFERENCING OLD TABLE AS old_bars NEW TABLE AS new_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bar_ranges_recount();
CREATE TRIGGER bar_ranges_delete AFTER DELETE ON bars
    REFERENCING OLD TABLE AS old_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bar_ranges_recount();
CREATE TRIGGER bar_ranges_truncate AFTER TRUNCATE ON bars
    FOR EACH STATEMENT EXECUTE FUNCTION bar_ranges_recount();

-- +goose Down
DROP TRIGGER bar_ranges_truncate ON bars;
DROP TRIGGER bar_ranges_delete ON bars;
DROP TRIGGER bar_ranges_update ON bars;
DROP TRIGGER bar_ranges_insert ON bars;
DROP FUNCTION bar_ranges_recount();
DROP FUNCTION bar_ranges_recount_one(text, text, text);
DROP FUNCTION bar_ranges_insert();
DROP TABLE bar_ranges;
