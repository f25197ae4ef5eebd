-- Immutable bar versions (migration 00089, internal/marketdata versions.go).

-- name: LatestBarVersion :one
-- A symbol's newest version number, 0 before its first import.
SELECT coalesce(max(version), 0)::int AS version FROM bar_versions WHERE source = @source AND symbol = @symbol;

-- name: InsertBarVersion :exec
INSERT INTO bar_versions (source, symbol, version, timeframe, sha256, sha256_state, bars, first_ts, last_ts,
                          changed, added, removed, first_changed)
VALUES (@source, @symbol, @version, @timeframe, @sha256, @sha256_state, @bars, @first_ts, @last_ts,
        @changed, @added, @removed, @first_changed);

-- name: LastBarVersionOf :one
-- The newest version of a symbol that changed timeframe @timeframe: its bars, last bar and
-- fingerprint state (migration 00102; NULL when made before it).
SELECT version, bars, last_ts, sha256_state FROM bar_versions
WHERE source = @source AND symbol = @symbol AND timeframe = @timeframe
ORDER BY version DESC LIMIT 1;

-- name: ListBarVersions :many
-- A symbol's versions, newest first.
SELECT version, timeframe, sha256, bars, first_ts, last_ts, changed, added, removed,
       first_changed, created_at, pruned_at
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
-- Bars of one stored timeframe with from <= ts < until as version @version held them: the
-- latest rows it already held and the replaced rows valid in it, in one statement (one
-- snapshot, whatever imports commit meanwhile). Unordered: the caller sorts the few
-- replaced rows into the latest ones, so that no sort of the union runs in the database.
SELECT b.ts, b.open, b.high, b.low, b.close, b.volume FROM bars b
WHERE b.source = @source::text AND b.symbol = @symbol::text AND b.timeframe = @timeframe::text
  AND b.ts >= @from_ts::timestamptz AND b.ts < @until_ts::timestamptz AND b.since_version <= @version::int
UNION ALL
SELECT h.ts, h.open, h.high, h.low, h.close, h.volume FROM bar_history h
WHERE h.source = @source::text AND h.symbol = @symbol::text AND h.timeframe = @timeframe::text
  AND h.ts >= @from_ts::timestamptz AND h.ts < @until_ts::timestamptz
  AND h.from_version <= @version::int AND h.to_version > @version::int;

-- name: InsertTaskDataVersions :exec
INSERT INTO task_data_versions (task_id, symbol, version)
SELECT @task_id::text, unnest(@symbols::text[]), unnest(@versions::int[]);

-- name: BarVersionState :one
-- Whether a symbol has a version, whether retention removed its bars, and the symbol's
-- latest version.
SELECT coalesce(bool_or(v.pruned_at IS NOT NULL), false)::boolean AS pruned, count(*) > 0 AS found,
       (SELECT coalesce(max(l.version), 0) FROM bar_versions l WHERE l.source = @source AND l.symbol = @symbol)::int AS latest
FROM bar_versions v WHERE v.source = @source AND v.symbol = @symbol AND v.version = @version;

-- name: PrunableBarVersions :many
-- Versions retention may remove: not a symbol's latest, not removed already, and named by
-- no stored run's provenance nor by a task that is to run on it (task_data_versions) nor by a
-- study with as_of (study_data_versions).
-- Runs a prune of what was created before @gone_before would delete count as gone (a dry
-- run's count); the zero time counts none.
WITH kept AS (
    SELECT p.provenance #>> '{settings,data_source}' AS source, d ->> 'symbol' AS symbol, (d ->> 'version')::int AS version
    FROM run_provenance p JOIN tasks t ON t.id = p.task_id, jsonb_array_elements(p.provenance -> 'data') d
    WHERE d ? 'version'
      AND NOT (t.created_at < @gone_before::timestamptz AND t.pinned_at IS NULL AND t.status IN ('completed', 'failed', 'cancelled'))
    UNION
    SELECT t.data_source, v.symbol, v.version FROM task_data_versions v JOIN tasks t ON t.id = v.task_id
    UNION
    SELECT s.data_source, v.symbol, v.version FROM study_data_versions v JOIN studies s ON s.id = v.study_id
    WHERE NOT (s.created_at < @gone_before::timestamptz AND s.pinned_at IS NULL AND s.status IN ('completed', 'failed', 'cancelled'))
), latest AS (
    SELECT source, symbol, max(version) AS version FROM bar_versions GROUP BY source, symbol
)
SELECT DISTINCT b.source, b.symbol, b.version
FROM bar_versions b JOIN latest l ON l.source = b.source AND l.symbol = b.symbol
WHERE b.version < l.version AND b.pruned_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.source = b.source AND k.symbol = b.symbol AND k.version = b.version)
ORDER BY b.source, b.symbol, b.version;

-- name: MarkBarVersionsPruned :execrows
UPDATE bar_versions SET pruned_at = now()
WHERE source = @source AND symbol = @symbol AND version = ANY(@versions::int[]) AND pruned_at IS NULL;

-- name: DeleteUnneededBarHistory :execrows
-- Deletes the replaced bars of a symbol that no version still holding its bars needs.
DELETE FROM bar_history h
WHERE h.source = @source AND h.symbol = @symbol
  AND NOT EXISTS (SELECT 1 FROM bar_versions v
                  WHERE v.source = h.source AND v.symbol = h.symbol AND v.pruned_at IS NULL
                    AND v.version >= h.from_version AND v.version < h.to_version);
