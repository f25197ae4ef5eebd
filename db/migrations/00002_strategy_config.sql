-- +goose Up
-- The saved parameter configuration of a strategy (POST /api/strategies/{id}/config):
-- name -> value, coerced to the declared types. Empty means "use the defaults". It lives on
-- the strategy head (not on a version) so a configuration survives replaces of the code;
-- values whose parameter disappears or no longer fits its type are dropped on replace.
ALTER TABLE strategies ADD COLUMN param_values jsonb NOT NULL DEFAULT '{}';
CREATE INDEX strategies_live ON strategies ((substr(id, 5)::bigint)) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX strategies_live;
ALTER TABLE strategies DROP COLUMN param_values;
