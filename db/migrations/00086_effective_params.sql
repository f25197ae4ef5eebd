-- +goose Up
-- A task records the values its strategy ran with, the declared defaults included
-- (strategy.Effective, at submit). Tasks stored before kept only the values given or saved;
-- their version's defaults are filled in here, under the values they have. A default of
-- null is no value and is left out, as Effective does.
UPDATE tasks t
SET strategy_params = d.defaults || t.strategy_params
FROM (
    SELECT v.strategy_id, v.version, jsonb_object_agg(p->>'name', p->'default') AS defaults
    FROM strategy_versions v,
         jsonb_array_elements(CASE WHEN jsonb_typeof(v.params) = 'array' THEN v.params ELSE '[]' END) p
    WHERE p->>'name' IS NOT NULL AND jsonb_typeof(p->'default') IS DISTINCT FROM 'null'
    GROUP BY v.strategy_id, v.version
) d
WHERE d.strategy_id = t.strategy_id AND d.version = t.strategy_version
  AND jsonb_typeof(t.strategy_params) = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_object_keys(d.defaults) k WHERE NOT t.strategy_params ? k);

-- +goose Down
-- The values given cannot be told from the defaults filled in: the tasks keep them.
SELECT 1;
