-- name: GetMonteCarloPaths :one
SELECT * FROM montecarlo_paths WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block;

-- name: CreateMonteCarloPaths :execrows
-- The request's row, unless one exists (another request made it first): 1 row when it
-- made it, so only that request enqueues the job.
INSERT INTO montecarlo_paths (task_id, runs, seed, block, created_by)
VALUES (@task_id, @runs, @seed, @block, @created_by)
ON CONFLICT DO NOTHING;

-- name: StartMonteCarloPaths :execrows
-- A job starts (or starts again after a retry): running, from no reruns done, worked by
-- job @job_id (migration 00103).
UPDATE montecarlo_paths SET status = 'running', done = 0, job_id = @job_id, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');

-- name: ProgressMonteCarloPaths :exec
UPDATE montecarlo_paths SET done = @done, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status = 'running';

-- name: TouchMonteCarloPaths :exec
-- The running job is alive (fairshare counts a running row touched lately).
UPDATE montecarlo_paths SET updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status = 'running' AND job_id = @job_id;

-- name: FinishMonteCarloPaths :exec
-- The end: completed with its answer, or failed with its reason.
UPDATE montecarlo_paths SET status = @status, done = @done, answer = @answer, error = @error, updated_at = now()
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');

-- name: DeleteDeadMonteCarloPaths :execrows
-- A running request whose job gave no sign of life for @stale_secs (its worker died, and
-- River may never run the job again): removed, so that the request starts anew.
DELETE FROM montecarlo_paths
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status = 'running'
  AND updated_at < now() - make_interval(secs => @stale_secs::float8);

-- name: DeleteMonteCarloPaths :exec
-- A job that gave up on an infrastructure failure: the next request starts again.
DELETE FROM montecarlo_paths
WHERE task_id = @task_id AND runs = @runs AND seed = @seed AND block = @block AND status IN ('pending', 'running');
