-- +goose Up
-- The findings of a run (internal/findings): computed when it completes and stored with its
-- result. NULL for results stored before findings existed (the API says so). The look-ahead
-- findings are not stored: they follow the latest check of the strategy version.
ALTER TABLE results ADD COLUMN findings jsonb;

-- For BI: one row per finding of a result, its stored ones and then its look-ahead verdict
-- (the same rule as the runs list's: look-ahead when any check of the version found it;
-- ids, severities and titles are internal/findings', which a test holds this view to).
CREATE VIEW bi_findings AS
SELECT r.task_id, f.seq::integer AS seq, f.finding->>'id' AS finding, f.finding->>'severity' AS severity,
       f.finding->>'title' AS title, f.finding->>'detail' AS detail,
       (f.finding->>'value')::float8 AS value, (f.finding->>'threshold')::float8 AS threshold
FROM results r
CROSS JOIN LATERAL jsonb_array_elements(coalesce(r.findings, '[]')) WITH ORDINALITY AS f(finding, seq)
UNION ALL
SELECT r.task_id, (coalesce(jsonb_array_length(r.findings), 0) + 1)::integer AS seq, 'lookahead' AS finding,
       CASE WHEN c.checks = 0 THEN 'info' WHEN c.lookahead THEN 'critical' ELSE 'info' END AS severity,
       CASE WHEN c.checks = 0 THEN 'Look-ahead never checked' WHEN c.lookahead THEN 'The strategy reads the future'
            ELSE 'No look-ahead found' END AS title,
       NULL AS detail, NULL AS value, NULL AS threshold
FROM results r
CROSS JOIN LATERAL (SELECT count(*) AS checks, coalesce(bool_or(l.lookahead), false) AS lookahead
                    FROM lookahead_checks l
                    WHERE l.strategy_id = r.task_strategy_id AND l.strategy_version = r.task_strategy_version) c;

-- +goose Down
DROP VIEW bi_findings;
ALTER TABLE results DROP COLUMN findings;
