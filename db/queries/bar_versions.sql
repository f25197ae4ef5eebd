-- Immutable bar versions (migration 00089, internal/marketdata versions.go).

-- name: LatestBarVersion :one
-- A symbol's newest version number, 0 before its first import.
SELECT coalesce(max(version), 0)::int AS version FROM bar_versions WHERE source = @source AND symbol = @symbol;

-- name: InsertBarVersion :exec
INSERT INTO bar_versions (source, symbol, version, timeframe, sha256, bars, first_ts, last_ts,
                          changed, added, removed, first_changed)
VALUES (@source, @symbol, @version, @timeframe, @sha256, @bars, @first_ts, @last_ts,
        @changed, @added, @removed, @first_changed);

-- name: ListBarVersions :many
-- A symbol's versions, newest first.
SELECT version, timeframe, sha256, bars, first_ts, last_ts, changed, added, removed,
       first_changed, created_at
FROM bar_versions WHERE source = @source AND symbol = @symbol
ORDER BY version DESC, timeframe;

-- name: SetBarVersionSHA256 :exec
-- Records a migrated version's fingerprint once it was computed.
UPDATE bar_versions SET sha256 = @sha256
WHERE source = @source AND symbol = @symbol AND version = @version AND timeframe = @timeframe AND sha256 IS NULL;

-- name: BarVersionAt :one
-- The version of a symbol current at a time: the newest created at or before it (0 when
-- none was).
SELECT coalesce(max(version), 0)::int AS version FROM bar_versions
WHERE source = @source AND symbol = @symbol AND created_at <= @at;

-- name: ListBarsAt :many
-- Bars of one stored timeframe with from <= ts < until as version @version held them,
-- oldest first: the latest rows it already held and the replaced rows valid in it.
SELECT ts, open, high, low, close, volume FROM (
    SELECT b.ts, b.open, b.high, b.low, b.close, b.volume FROM bars b
    WHERE b.source = @source::text AND b.symbol = @symbol::text AND b.timeframe = @timeframe::text
      AND b.ts >= @from_ts::timestamptz AND b.ts < @until_ts::timestamptz AND b.since_version <= @version::int
    UNION ALL
    SELECT h.ts, h.open, h.high, h.low, h.close, h.volume FROM bar_history h
    WHERE h.source = @source::text AND h.symbol = @symbol::text AND h.timeframe = @timeframe::text
      AND h.ts >= @from_ts::timestamptz AND h.ts < @until_ts::timestamptz
      AND h.from_version <= @version::int AND h.to_version > @version::int
) v
ORDER BY ts;

-- name: PruneBarHistory :execrows
-- Removes the rows of versions older than @keep_from that no kept version needs: a history
-- row is needed while a version in [from_version, to_version) is kept. @kept are the
-- referenced older versions (results and studies).
DELETE FROM bar_history h
WHERE h.source = @source AND h.symbol = @symbol AND h.to_version <= @keep_from::int
  AND NOT EXISTS (SELECT 1 FROM unnest(@kept::int[]) k WHERE k >= h.from_version AND k < h.to_version);

-- name: InsertTaskDataVersions :exec
INSERT INTO task_data_versions (task_id, symbol, version)
SELECT @task_id::text, unnest(@symbols::text[]), unnest(@versions::int[]);

-- name: TaskDataVersions :many
SELECT symbol, version FROM task_data_versions WHERE task_id = @task_id;
