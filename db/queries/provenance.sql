-- name: RunProvenance :one
SELECT provenance FROM run_provenance WHERE task_id = $1;

-- name: SaveBarPrints :exec
INSERT INTO bar_prints (sha256, prints) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING;

-- name: BarPrints :one
SELECT prints FROM bar_prints WHERE sha256 = $1;

-- name: InsertReproduction :exec
INSERT INTO task_reproductions (task_id, of_task) VALUES ($1, $2);

-- name: TaskReproduction :one
SELECT * FROM task_reproductions WHERE task_id = $1;

-- name: SetReproductionVerdict :exec
UPDATE task_reproductions SET outcome = $2, causes = $3, checked_at = now() WHERE task_id = $1;

-- name: StrategyVersionCode :one
SELECT code FROM strategy_versions WHERE strategy_id = $1 AND version = $2;
