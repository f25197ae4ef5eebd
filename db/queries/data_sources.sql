-- name: ListDataSources :many
SELECT * FROM data_sources ORDER BY is_default DESC, name;

-- name: GetDataSource :one
SELECT * FROM data_sources WHERE name = $1;

-- name: DefaultDataSource :one
SELECT * FROM data_sources WHERE is_default;

-- name: UpsertDataSource :exec
INSERT INTO data_sources (name, description, is_default, config)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, config = EXCLUDED.config;
