-- name: GetMonteCarloPaths :one
SELECT * FROM montecarlo_paths WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block;

-- name: CreateMonteCarloPaths :execrows
-- The request's row, unless one exists (another request made it first): 1 row when it
-- made it, so only that request enqueues the job.
INSERT INTO montecarlo_paths (task_id, runs, seed, block, created_by)
VALUES (@task_id, @runs, @seed, @block, @created_by)
ON CONFLICT DO NOTHING;

-- name: StartMonteCarloPaths :execrows
-- A job starts (or starts again after a retry): running, from no reruns done.
UPDATE montecarlo_paths SET status = 'running', done = 0, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');

-- name: ProgressMonteCarloPaths :exec
UPDATE montecarlo_paths SET done = @done, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status = 'running';

-- name: FinishMonteCarloPaths :exec
-- The end: completed with its answer, or failed with its reason.
UPDATE montecarlo_paths SET status = @status, done = @done, answer = @answer, error = @error, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');

-- name: DeleteMonteCarloPaths :exec
-- A job that gave up on an infrastructure failure: the next request starts again.
DELETE FROM montecarlo_paths
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');
