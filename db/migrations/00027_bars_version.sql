-- +goose Up
-- Workers keep the bars of recent backtests in memory: a flood of runs on one symbol read
-- the same 5,000 rows a thousand times. symbols.bars_version tells a cached copy from a
-- stale one across processes: every statement that inserts, updates or deletes a symbol's
-- bars raises it in the same transaction, so a reader that sees the version it cached
-- under in its snapshot sees the same bars.
ALTER TABLE symbols ADD COLUMN bars_version bigint NOT NULL DEFAULT 0;

-- The insert check of 00022 now also raises the version. The UPDATE locks the symbol's row
-- (a concurrent delete of it waits, as before) and tells whether it exists.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bars_check_symbols() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k record;
BEGIN
    FOR k IN SELECT DISTINCT n.source, n.symbol FROM new_bars n LOOP
        UPDATE symbols s SET bars_version = s.bars_version + 1
        WHERE s.source = k.source AND s.symbol = k.symbol;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'insert or update on table "bars" violates foreign key constraint "bars_source_symbol_check"'
                USING ERRCODE = 'foreign_key_violation',
                      DETAIL = format('Key (source, symbol)=(%s, %s) is not present in table "symbols".', k.source, k.symbol);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION bars_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE symbols SET bars_version = bars_version + 1;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE symbols s SET bars_version = s.bars_version + 1
        FROM (SELECT DISTINCT source, symbol FROM old_bars) k
        WHERE s.source = k.source AND s.symbol = k.symbol;
    ELSE -- UPDATE: the symbols a bar left and the ones it joined
        UPDATE symbols s SET bars_version = s.bars_version + 1
        FROM (SELECT source, symbol FROM old_bars UNION SELECT source, symbol FROM new_bars) k
        WHERE s.source = k.source AND s.symbol = k.symbol;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER bars_version_update AFTER UPDATE ON bars
    REFERENCING OLD TABLE AS old_bars NEW TABLE AS new_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bars_bump_version();
CREATE TRIGGER bars_version_delete AFTER DELETE ON bars
    REFERENCING OLD TABLE AS old_bars
    FOR EACH STATEMENT EXECUTE FUNCTION bars_bump_version();
CREATE TRIGGER bars_version_truncate AFTER TRUNCATE ON bars
    FOR EACH STATEMENT EXECUTE FUNCTION bars_bump_version();

-- result_executions and result_trades had foreign keys to results, checked row by row on
-- every COPY (300,000 checks, each a key-share lock, for 1,000 stored results). Only
-- results.Save writes these rows, after the results row in the same transaction, so one
-- trigger keeps the cascade on delete, as for the equity series and task logs before.
ALTER TABLE result_executions DROP CONSTRAINT result_executions_task_id_fkey;
ALTER TABLE result_trades DROP CONSTRAINT result_trades_task_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION results_delete_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM result_executions WHERE task_id = OLD.task_id;
    DELETE FROM result_trades WHERE task_id = OLD.task_id;
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER results_delete_rows AFTER DELETE ON results
    FOR EACH ROW EXECUTE FUNCTION results_delete_rows();

-- +goose Down
DROP TRIGGER results_delete_rows ON results;
DROP FUNCTION results_delete_rows();
DELETE FROM result_executions e WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.task_id = e.task_id);
DELETE FROM result_trades e WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.task_id = e.task_id);
ALTER TABLE result_executions ADD FOREIGN KEY (task_id) REFERENCES results (task_id) ON DELETE CASCADE;
ALTER TABLE result_trades ADD FOREIGN KEY (task_id) REFERENCES results (task_id) ON DELETE CASCADE;
DROP TRIGGER bars_version_truncate ON bars;
DROP TRIGGER bars_version_delete ON bars;
DROP TRIGGER bars_version_update ON bars;
DROP FUNCTION bars_bump_version();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bars_check_symbols() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k record;
BEGIN
    FOR k IN SELECT DISTINCT n.source, n.symbol FROM new_bars n LOOP
        PERFORM 1 FROM symbols s WHERE s.source = k.source AND s.symbol = k.symbol FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'insert or update on table "bars" violates foreign key constraint "bars_source_symbol_check"'
                USING ERRCODE = 'foreign_key_violation',
                      DETAIL = format('Key (source, symbol)=(%s, %s) is not present in table "symbols".', k.source, k.symbol);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
ALTER TABLE symbols DROP COLUMN bars_version;
