-- +goose Up
-- A task's log lines stored as chunks: one row per batch the worker writes (about every
-- 250 ms of a run), its lines as parallel arrays. A row per line cost a tuple header, an
-- index entry and its write-ahead log for each of the ~500 lines a typical run's engine
-- writes (a fill, a trade, an order each): 108 MB of table and index for 1,000 runs, and
-- PostgreSQL's largest share of the work when many runs complete at once. The view
-- task_logs gives the lines back one per row, in the same shape and order as before, for
-- the service's reads, SQL consoles and BI tools.
CREATE TABLE task_log_chunks (
    id        bigserial PRIMARY KEY,           -- chunks in the order they were written
    task_id   text NOT NULL,
    attempt   integer NOT NULL,
    ts        timestamptz[] NOT NULL,          -- wall time each line was produced
    bar_time  timestamptz[] NOT NULL,          -- the bar being processed (NULL: none)
    level     text[] NOT NULL,                 -- DEBUG, INFO, WARNING, ERROR
    source    text[] NOT NULL,                 -- strategy or engine
    message   text[] NOT NULL,
    CHECK (cardinality(ts) BETWEEN 1 AND 999999
       AND cardinality(bar_time) = cardinality(ts) AND cardinality(level) = cardinality(ts)
       AND cardinality(source) = cardinality(ts) AND cardinality(message) = cardinality(ts))
);
ALTER TABLE task_log_chunks ALTER message SET COMPRESSION lz4, ALTER ts SET COMPRESSION lz4,
    ALTER bar_time SET COMPRESSION lz4;
CREATE INDEX task_log_chunks_task ON task_log_chunks (task_id, attempt, id);

INSERT INTO task_log_chunks (task_id, attempt, ts, bar_time, level, source, message)
SELECT task_id, attempt, array_agg(ts ORDER BY id), array_agg(bar_time ORDER BY id),
       array_agg(level ORDER BY id), array_agg(source ORDER BY id), array_agg(message ORDER BY id)
FROM task_logs
GROUP BY task_id, attempt
ORDER BY min(id);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_delete_logs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM task_log_chunks WHERE task_id = OLD.id;
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

DROP TABLE task_logs;

-- A line's id orders the lines as they were written: its chunk's id, then its place in it.
CREATE VIEW task_logs AS
SELECT c.id * 1000000 + l.n AS id, c.task_id, c.attempt, l.ts, l.bar_time, l.level, l.source, l.message
FROM task_log_chunks c
CROSS JOIN LATERAL unnest(c.ts, c.bar_time, c.level, c.source, c.message)
    WITH ORDINALITY AS l(ts, bar_time, level, source, message, n);

-- +goose Down
DROP VIEW task_logs;
CREATE TABLE task_logs (
    id        bigserial PRIMARY KEY,
    task_id   text NOT NULL,
    attempt   integer NOT NULL DEFAULT 1,
    ts        timestamptz NOT NULL DEFAULT now(),
    bar_time  timestamptz,
    level     text NOT NULL,
    source    text NOT NULL DEFAULT 'strategy',
    message   text NOT NULL
);
CREATE INDEX task_logs_task ON task_logs (task_id, id);
INSERT INTO task_logs (task_id, attempt, ts, bar_time, level, source, message)
SELECT c.task_id, c.attempt, l.ts, l.bar_time, l.level, l.source, l.message
FROM task_log_chunks c
CROSS JOIN LATERAL unnest(c.ts, c.bar_time, c.level, c.source, c.message)
    WITH ORDINALITY AS l(ts, bar_time, level, source, message, n)
ORDER BY c.id, l.n;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_delete_logs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM task_logs WHERE task_id = OLD.id;
    RETURN OLD;
END;
$$;
-- +goose StatementEnd
DROP TABLE task_log_chunks;
