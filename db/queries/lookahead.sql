-- name: UpsertLookaheadCheck :one
INSERT INTO lookahead_checks (
    strategy_id, strategy_version, data_source, symbols, timeframe, start_date, end_date,
    strategy_params, lookahead, cuts, bars, report, checked_by
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (strategy_id, strategy_version, data_source, symbols, timeframe) DO UPDATE SET
    start_date = EXCLUDED.start_date, end_date = EXCLUDED.end_date,
    strategy_params = EXCLUDED.strategy_params, lookahead = EXCLUDED.lookahead,
    cuts = EXCLUDED.cuts, bars = EXCLUDED.bars, report = EXCLUDED.report,
    checked_by = EXCLUDED.checked_by, checked_at = now()
RETURNING *;

-- name: LookaheadChecks :many
SELECT * FROM lookahead_checks
WHERE strategy_id = $1 AND strategy_version = $2
ORDER BY checked_at DESC, id DESC;

-- name: LookaheadVerdict :one
-- Whether any check of the version found look-ahead, and how many checks there are (none:
-- never checked).
SELECT count(*) AS checks, coalesce(bool_or(lookahead), false)::boolean AS lookahead FROM lookahead_checks
WHERE strategy_id = $1 AND strategy_version = $2;

-- name: LookaheadVerdicts :many
-- The verdicts of several versions at once (a runs list page's): one row per checked
-- version, read through the unique index that leads with (strategy_id, strategy_version).
SELECT c.strategy_id, c.strategy_version, bool_or(c.lookahead)::boolean AS lookahead
FROM lookahead_checks c
JOIN (SELECT unnest(@strategy_ids::text[]) AS strategy_id, unnest(@versions::integer[]) AS strategy_version) p
  ON c.strategy_id = p.strategy_id AND c.strategy_version = p.strategy_version
GROUP BY c.strategy_id, c.strategy_version;
