-- +goose Up
-- Runs recorded before bar versions point at version 1 where it is exactly what they read:
-- each distinct recorded series of a stored timeframe is fingerprinted in SQL as
-- provenance.FingerprintOf does (sha256 over 48-byte little-endian records of time in unix
-- nanoseconds, open, high, low and close as IEEE-754 bits, and volume) over version 1's
-- bars from its first to its last time, and the runs whose sha256 matches get
-- data[i].version = 1. Series aggregated from finer bars, and ones that no longer match,
-- are left without a version (a reproduction of such a run reads the latest bars).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.le8(x bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT int8send(((x >> 56) & 255) | ((x >> 40) & 65280) | ((x >> 24) & 16711680) | ((x >> 8) & 4278190080)
                  | ((x & 4278190080) << 8) | ((x & 16711680) << 24) | ((x & 65280) << 40) | ((x & 255) << 56))
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.f8(f float8) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT pg_temp.le8(('x' || encode(float8send(f), 'hex'))::bit(64)::bigint)
$$;
-- +goose StatementEnd

CREATE TEMP TABLE prov_feeds ON COMMIT DROP AS
SELECT DISTINCT p.provenance #>> '{settings,data_source}' AS source, d ->> 'symbol' AS symbol,
       d ->> 'timeframe' AS timeframe, (d ->> 'first')::timestamptz AS first_ts, (d ->> 'last')::timestamptz AS last_ts,
       d ->> 'sha256' AS sha256, (d ->> 'bars')::bigint AS bars
FROM run_provenance p, jsonb_array_elements(p.provenance -> 'data') d
WHERE NOT d ? 'version' AND (d ->> 'bars')::bigint > 0;

DELETE FROM prov_feeds f WHERE NOT EXISTS (
    SELECT 1 FROM bar_versions v
    WHERE v.source = f.source AND v.symbol = f.symbol AND v.timeframe = f.timeframe AND v.version = 1 AND v.pruned_at IS NULL);

ALTER TABLE prov_feeds ADD COLUMN matches boolean;
UPDATE prov_feeds f SET matches = (
    SELECT count(*) = f.bars AND encode(sha256(string_agg(
               pg_temp.le8((extract(epoch FROM b.ts) * 1000000)::bigint * 1000) || pg_temp.f8(b.open) || pg_temp.f8(b.high)
               || pg_temp.f8(b.low) || pg_temp.f8(b.close) || pg_temp.le8(b.volume), ''::bytea ORDER BY b.ts)), 'hex') = f.sha256
    FROM (SELECT ts, open, high, low, close, volume FROM bars
          WHERE source = f.source AND symbol = f.symbol AND timeframe = f.timeframe
            AND ts >= f.first_ts AND ts <= f.last_ts AND since_version <= 1
          UNION ALL
          SELECT ts, open, high, low, close, volume FROM bar_history
          WHERE source = f.source AND symbol = f.symbol AND timeframe = f.timeframe
            AND ts >= f.first_ts AND ts <= f.last_ts AND from_version <= 1 AND to_version > 1) b);

UPDATE run_provenance p
SET provenance = jsonb_set(p.provenance, '{data}', (
    SELECT jsonb_agg(CASE WHEN m.matches THEN d || '{"version": 1}' ELSE d END ORDER BY x.ord)
    FROM jsonb_array_elements(p.provenance -> 'data') WITH ORDINALITY AS x(d, ord)
    LEFT JOIN prov_feeds m ON m.matches AND NOT d ? 'version'
        AND m.source = p.provenance #>> '{settings,data_source}' AND m.symbol = d ->> 'symbol'
        AND m.timeframe = d ->> 'timeframe' AND m.sha256 = d ->> 'sha256'
        AND m.first_ts = (d ->> 'first')::timestamptz AND m.last_ts = (d ->> 'last')::timestamptz))
WHERE EXISTS (
    SELECT 1 FROM jsonb_array_elements(p.provenance -> 'data') d
    JOIN prov_feeds m ON m.matches AND NOT d ? 'version'
        AND m.source = p.provenance #>> '{settings,data_source}' AND m.symbol = d ->> 'symbol'
        AND m.timeframe = d ->> 'timeframe' AND m.sha256 = d ->> 'sha256'
        AND m.first_ts = (d ->> 'first')::timestamptz AND m.last_ts = (d ->> 'last')::timestamptz);

DROP TABLE prov_feeds; -- as ON COMMIT would; said here so that sqlc makes no model of it

-- +goose Down
-- Nothing: the versions stay true of the runs (the schema before 00089 ignores them).
SELECT 1;
