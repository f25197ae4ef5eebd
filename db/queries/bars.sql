-- name: UpsertBars :one
-- Inserts or updates one chunk of bars of a symbol and timeframe, reporting how many rows
-- were new and how many changed (identical rows are left alone and counted in neither) and
-- the earliest of them. The rows written hold since version @version (migration 00089: the
-- update moves each replaced row to bar_history).
-- ON CONFLICT finds each row's match through the primary key whatever the planner thinks of
-- the input's size (an UPDATE ... FROM plus an anti-joined INSERT planned a quadratic join
-- on a freshly loaded table).
WITH input AS (
    SELECT unnest(@ts::timestamptz[]) AS ts, unnest(@open::float8[]) AS open,
           unnest(@high::float8[]) AS high, unnest(@low::float8[]) AS low,
           unnest(@close::float8[]) AS close, unnest(@volume::int8[]) AS volume
), up AS (
    INSERT INTO bars (source, symbol, timeframe, ts, open, high, low, close, volume, since_version)
    SELECT @source::text, @symbol::text, @timeframe::text, i.ts, i.open, i.high, i.low, i.close, i.volume, @version::int
    FROM input i
    ON CONFLICT (source, symbol, timeframe, ts) DO UPDATE
    SET open = EXCLUDED.open, high = EXCLUDED.high, low = EXCLUDED.low, close = EXCLUDED.close,
        volume = EXCLUDED.volume, since_version = EXCLUDED.since_version
    WHERE (bars.open, bars.high, bars.low, bars.close, bars.volume)
          IS DISTINCT FROM (EXCLUDED.open, EXCLUDED.high, EXCLUDED.low, EXCLUDED.close, EXCLUDED.volume)
    RETURNING (xmax = 0) AS inserted, ts
)
SELECT count(*) FILTER (WHERE inserted)::bigint AS inserted,
       count(*) FILTER (WHERE NOT inserted)::bigint AS updated,
       min(ts) AS first_ts
FROM up;

-- name: LockSymbolBars :exec
-- Serialises imports of one symbol until the end of the transaction (a row lock only the
-- service can take, as LockOwner).
INSERT INTO backtestd_private.service_locks (name) VALUES ('bars:' || @source::text || '/' || @symbol::text)
ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name;

-- name: FirstBarTime :one
SELECT ts FROM bars WHERE source = $1 AND symbol = $2 AND timeframe = $3 ORDER BY ts LIMIT 1;

-- name: ListBars :many
-- Bars of one stored timeframe with from <= ts < until, oldest first.
SELECT ts, open, high, low, close, volume FROM bars
WHERE source = @source AND symbol = @symbol AND timeframe = @timeframe
  AND ts >= @from_ts AND ts < @until_ts
ORDER BY ts;

-- name: StoredTimeframes :many
-- Which of the given timeframes have bars for a symbol: one primary-key probe each, in one
-- round trip.
SELECT tf::text AS timeframe FROM unnest(@timeframes::text[]) AS tf
WHERE EXISTS (SELECT 1 FROM bars b WHERE b.source = @source AND b.symbol = @symbol AND b.timeframe = tf);

-- name: LastBarTime :one
SELECT ts FROM bars WHERE source = $1 AND symbol = $2 AND timeframe = $3 ORDER BY ts DESC LIMIT 1;

-- name: BarsVersion :one
-- bars_version is raised by every statement that changes the symbol's bars (migration 00027);
-- data_version is the symbol's latest bar version (migration 00089), 0 before any.
SELECT bars_version, timezone,
       (SELECT coalesce(max(v.version), 0) FROM bar_versions v WHERE v.source = @source AND v.symbol = @symbol)::int AS data_version
FROM symbols WHERE source = @source AND symbol = @symbol;

-- name: SymbolTimezone :one
SELECT timezone FROM symbols WHERE source = @source AND symbol = @symbol;

-- name: HasAnyBars :one
-- Whether a symbol has bars of any timeframe.
SELECT EXISTS (SELECT 1 FROM bars WHERE source = @source AND symbol = @symbol);

-- name: HasBars :one
-- Whether a symbol has bars of one stored timeframe with from <= ts < until.
SELECT EXISTS (
    SELECT 1 FROM bars
    WHERE source = @source AND symbol = @symbol AND timeframe = @timeframe
      AND ts >= @from_ts AND ts < @until_ts
);

-- name: BarRange :one
-- A symbol's stored bars of one timeframe: first and last time and count (migration 00038's
-- triggers keep them exact inside the writing transaction).
SELECT first_ts, last_ts, bars FROM bar_ranges
WHERE source = @source AND symbol = @symbol AND timeframe = @timeframe;

-- name: SymbolRanges :many
-- The stored bars of some symbols of a source, by timeframe: first and last time and count
-- (kept by triggers on bars, migration 00038).
SELECT symbol, timeframe, first_ts, last_ts, bars
FROM bar_ranges
WHERE source = @source AND symbol = ANY(@symbols::text[])
ORDER BY symbol, timeframe;
