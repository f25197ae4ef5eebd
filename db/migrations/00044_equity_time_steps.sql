-- +goose Up
-- An equity series keeps its times as the first time and the step to each next one (in
-- microseconds) instead of a timestamp per bar. The steps of a daily series are a few values
-- repeated (a day, a weekend), which lz4 shrinks to almost nothing, where the timestamps
-- (13 KB of a daily run's 38 KB) barely compressed. equity_times turns them back into the
-- same timestamps, to the microsecond: the queries and the result_equity view (so bi_equity)
-- read what they read before.

-- +goose StatementBegin
CREATE FUNCTION equity_steps(ts timestamptz[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT COALESCE(array_agg((EXTRACT(EPOCH FROM d.step) * 1000000)::bigint ORDER BY d.n), '{}')
    FROM (SELECT u.n, u.t - COALESCE(lag(u.t) OVER (ORDER BY u.n), u.t) AS step
          FROM unnest(ts) WITH ORDINALITY AS u (t, n)) d
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION equity_times(first timestamptz, steps bigint[]) RETURNS timestamptz[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- Whole hours plus the seconds left (under 3,600, exact in a float8 to the microsecond);
    -- hours, unlike days, mean the same length across a daylight-saving change.
    SELECT COALESCE(array_agg(first + make_interval(hours => (x.c / 3600000000)::integer, secs => (x.c % 3600000000) / 1000000.0)
                              ORDER BY x.n), '{}')
    FROM (SELECT (sum(s.d) OVER (ORDER BY s.n))::bigint AS c, s.n FROM unnest(steps) WITH ORDINALITY AS s (d, n)) x
$$;
-- +goose StatementEnd

ALTER TABLE result_equity_series ADD COLUMN ts_first timestamptz, ADD COLUMN ts_steps bigint[];
ALTER TABLE result_equity_series ALTER ts_steps SET STORAGE EXTENDED, ALTER ts_steps SET COMPRESSION lz4;
UPDATE result_equity_series SET ts_first = ts[1], ts_steps = equity_steps(ts);

CREATE OR REPLACE VIEW result_equity AS
SELECT e.task_id, u.seq::integer AS seq, u.ts, u.value, u.cash,
       u.value / NULLIF(COALESCE(lag(u.value) OVER w, r.initial_cash), 0) - 1.0::float8 AS ret,
       100.0::float8 * (max(u.value) OVER w - u.value) / NULLIF(max(u.value) OVER w, 0) AS drawdown_pct,
       max(u.value) OVER w - u.value AS drawdown_money
FROM result_equity_series e
JOIN results r ON r.task_id = e.task_id
CROSS JOIN LATERAL unnest(equity_times(e.ts_first, e.ts_steps), e.value, e.cash) WITH ORDINALITY AS u (ts, value, cash, seq)
WINDOW w AS (PARTITION BY e.task_id ORDER BY u.seq);

ALTER TABLE result_equity_series DROP COLUMN ts;
ALTER TABLE result_equity_series ALTER ts_steps SET NOT NULL;

-- +goose Down
ALTER TABLE result_equity_series ADD COLUMN ts timestamptz[];
UPDATE result_equity_series SET ts = equity_times(ts_first, ts_steps);
ALTER TABLE result_equity_series ALTER ts SET NOT NULL, ALTER ts SET STORAGE EXTENDED, ALTER ts SET COMPRESSION lz4;
CREATE OR REPLACE VIEW result_equity AS
SELECT e.task_id, u.seq::integer AS seq, u.ts, u.value, u.cash,
       u.value / NULLIF(COALESCE(lag(u.value) OVER w, r.initial_cash), 0) - 1.0::float8 AS ret,
       100.0::float8 * (max(u.value) OVER w - u.value) / NULLIF(max(u.value) OVER w, 0) AS drawdown_pct,
       max(u.value) OVER w - u.value AS drawdown_money
FROM result_equity_series e
JOIN results r ON r.task_id = e.task_id
CROSS JOIN LATERAL unnest(e.ts, e.value, e.cash) WITH ORDINALITY AS u (ts, value, cash, seq)
WINDOW w AS (PARTITION BY e.task_id ORDER BY u.seq);
ALTER TABLE result_equity_series DROP COLUMN ts_steps, DROP COLUMN ts_first;
DROP FUNCTION equity_times(timestamptz, bigint[]);
DROP FUNCTION equity_steps(timestamptz[]);
