-- Strategies and their immutable versions. The strategy row is the mutable head and
-- points at its current version; deleted strategies keep their row (deleted_at set) so
-- the versions that tasks and results refer to stay in place.

-- name: NextStrategyID :one
SELECT ('str_' || nextval('strategy_seq')::text)::text AS id;

-- name: InsertStrategy :one
INSERT INTO strategies (id, name, description, current_version, origin, created_at, updated_at, created_by)
VALUES (@id, @name, @description, 1, @origin, now(), now(), @created_by)
RETURNING *;

-- name: InsertStrategyVersion :one
INSERT INTO strategy_versions (strategy_id, version, name, description, code, class_name, params, origin, content_hash, created_by)
VALUES (@strategy_id, @version, @name, @description, @code, @class_name, @params, @origin, @content_hash, @created_by)
RETURNING *;

-- name: LockStrategy :one
-- The live strategy row, locked until the end of the transaction.
SELECT * FROM strategies WHERE id = @id AND deleted_at IS NULL FOR UPDATE;

-- name: UpdateStrategyHead :one
UPDATE strategies
SET name = @name, description = @description, current_version = @current_version,
    param_values = @param_values, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: SetStrategyParamValues :one
UPDATE strategies SET param_values = @param_values, updated_at = now()
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: GetLiveStrategy :one
-- A live strategy with its current version.
SELECT sqlc.embed(s), v.code, v.class_name, v.params, v.content_hash
FROM strategies s
JOIN strategy_versions v ON v.strategy_id = s.id AND v.version = s.current_version
WHERE s.id = @id AND s.deleted_at IS NULL;

-- name: ListLiveStrategies :many
-- Live strategies with their current versions, oldest first.
SELECT sqlc.embed(s), v.code, v.class_name, v.params, v.content_hash
FROM strategies s
JOIN strategy_versions v ON v.strategy_id = s.id AND v.version = s.current_version
WHERE s.deleted_at IS NULL
ORDER BY substr(s.id, 5)::bigint;

-- name: SoftDeleteStrategy :execrows
UPDATE strategies SET deleted_at = now() WHERE id = @id AND deleted_at IS NULL;

-- name: RestoreStrategy :one
-- Brings a deleted strategy back (a strategy file that reappears), locked for the caller.
UPDATE strategies SET deleted_at = NULL, updated_at = now()
WHERE id = @id AND deleted_at IS NOT NULL
RETURNING *;

-- name: ListStrategyVersions :many
-- The readable versions newest first, without their code: all of a live strategy's; of a
-- deleted one, those a task or a study still refers to. None: no such strategy to read.
SELECT v.strategy_id, v.version, v.name, v.description, v.class_name, v.params, v.origin, v.content_hash, v.created_at, v.created_by
FROM strategy_versions v
JOIN strategies s ON s.id = v.strategy_id
WHERE v.strategy_id = @strategy_id
  AND (s.deleted_at IS NULL
       OR EXISTS (SELECT 1 FROM tasks t WHERE t.strategy_id = v.strategy_id AND t.strategy_version = v.version)
       OR EXISTS (SELECT 1 FROM studies u WHERE u.strategy_id = v.strategy_id AND u.strategy_version = v.version))
ORDER BY v.version DESC;

-- name: GetReadableStrategyVersion :one
-- One version with its code, when readable as ListStrategyVersions says.
SELECT v.*
FROM strategy_versions v
JOIN strategies s ON s.id = v.strategy_id
WHERE v.strategy_id = @strategy_id AND v.version = @version
  AND (s.deleted_at IS NULL
       OR EXISTS (SELECT 1 FROM tasks t WHERE t.strategy_id = v.strategy_id AND t.strategy_version = v.version)
       OR EXISTS (SELECT 1 FROM studies u WHERE u.strategy_id = v.strategy_id AND u.strategy_version = v.version));

-- name: GetStrategyVersion :one
-- One version, also of a deleted strategy (tasks and results refer to versions).
SELECT * FROM strategy_versions WHERE strategy_id = @strategy_id AND version = @version;

-- name: GetStrategyByOrigin :one
-- The strategy loaded from a file: the live one, else the most recently deleted.
SELECT sqlc.embed(s), v.content_hash
FROM strategies s
JOIN strategy_versions v ON v.strategy_id = s.id AND v.version = s.current_version
WHERE s.origin = @origin
ORDER BY (s.deleted_at IS NULL) DESC, s.deleted_at DESC
LIMIT 1;

-- name: ListLiveFileStrategies :many
-- Live strategies loaded from files, for reconciling with the directories.
SELECT id, origin FROM strategies WHERE origin <> 'api' AND deleted_at IS NULL ORDER BY origin;
