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
