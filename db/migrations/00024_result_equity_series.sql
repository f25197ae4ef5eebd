-- +goose Up
-- The equity curve of a result as one row of arrays (element i is bar i) instead of one row
-- per bar: storing a 5,000-bar result wrote 5,000 rows and their index entries, most of
-- the time of storing it. The arrays are stored uncompressed out of line (float data
-- barely compresses; trying costs time on every write). result_equity becomes a view
-- presenting one row per bar, so bi_equity and any SQL written against either keeps its
-- shape and meaning.
CREATE TABLE result_equity_series (
    task_id        text PRIMARY KEY REFERENCES results (task_id) ON DELETE CASCADE,
    ts             timestamptz[] NOT NULL,
    value          float8[] NOT NULL,
    cash           float8[] NOT NULL,
    ret            float8[] NOT NULL,
    drawdown_pct   float8[] NOT NULL,
    drawdown_money float8[] NOT NULL
);
ALTER TABLE result_equity_series
    ALTER ts SET STORAGE EXTERNAL, ALTER value SET STORAGE EXTERNAL,
    ALTER cash SET STORAGE EXTERNAL, ALTER ret SET STORAGE EXTERNAL,
    ALTER drawdown_pct SET STORAGE EXTERNAL, ALTER drawdown_money SET STORAGE EXTERNAL;

INSERT INTO result_equity_series (task_id, ts, value, cash, ret, drawdown_pct, drawdown_money)
SELECT e.task_id, array_agg(e.ts ORDER BY e.seq), array_agg(e.value ORDER BY e.seq),
       array_agg(e.cash ORDER BY e.seq), array_agg(e.ret ORDER BY e.seq),
       array_agg(e.drawdown_pct ORDER BY e.seq), array_agg(e.drawdown_money ORDER BY e.seq)
FROM result_equity e
WHERE EXISTS (SELECT 1 FROM results r WHERE r.task_id = e.task_id)
GROUP BY e.task_id;

DROP VIEW bi_equity;
DROP TRIGGER results_delete_equity ON results;
DROP FUNCTION results_delete_equity();
DROP TABLE result_equity;

CREATE VIEW result_equity AS
SELECT e.task_id, u.seq::integer AS seq, u.ts, u.value, u.cash, u.ret, u.drawdown_pct, u.drawdown_money
FROM result_equity_series e
CROSS JOIN LATERAL unnest(e.ts, e.value, e.cash, e.ret, e.drawdown_pct, e.drawdown_money)
    WITH ORDINALITY AS u (ts, value, cash, ret, drawdown_pct, drawdown_money, seq);

CREATE VIEW bi_equity AS
SELECT e.task_id, e.seq, e.ts, e.value, e.cash, e.ret, e.drawdown_pct, e.drawdown_money
FROM result_equity e;

-- +goose Down
DROP VIEW bi_equity;
ALTER VIEW result_equity RENAME TO result_equity_unnested;
CREATE TABLE result_equity (
    task_id        text NOT NULL,
    seq            integer NOT NULL,
    ts             timestamptz NOT NULL,
    value          float8 NOT NULL,
    cash           float8 NOT NULL,
    ret            float8 NOT NULL,
    drawdown_pct   float8 NOT NULL,
    drawdown_money float8 NOT NULL,
    PRIMARY KEY (task_id, seq)
);
INSERT INTO result_equity SELECT * FROM result_equity_unnested;
DROP VIEW result_equity_unnested;
DROP TABLE result_equity_series;
-- +goose StatementBegin
CREATE FUNCTION results_delete_equity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM result_equity WHERE task_id = OLD.task_id;
    RETURN OLD;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER results_delete_equity AFTER DELETE ON results
    FOR EACH ROW EXECUTE FUNCTION results_delete_equity();
CREATE VIEW bi_equity AS
SELECT e.task_id, e.seq, e.ts, e.value, e.cash, e.ret, e.drawdown_pct, e.drawdown_money
FROM result_equity e;
