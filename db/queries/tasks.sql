-- name: TaskStrategyVersion :one
-- The strategy version a new task will run: the one asked for, else the current one.
SELECT s.id, v.version, s.param_values, v.params, v.code, v.origin
FROM strategies s
JOIN strategy_versions v ON v.strategy_id = s.id
    AND v.version = COALESCE(sqlc.narg('version')::integer, s.current_version)
WHERE s.id = sqlc.arg('id') AND s.deleted_at IS NULL;

-- name: TaskRecordedVersion :one
-- The exact strategy version a task records, for running it.
SELECT code, params, origin, class_name FROM strategy_versions WHERE strategy_id = $1 AND version = $2;

-- name: TaskRunVersion :one
-- What a worker reads before a run, in one round trip: whether the task's data source
-- exists, the exact strategy version it records (found false when there is none), and the
-- bar versions it runs on by symbol (task_data_versions; {} for the latest bars).
SELECT EXISTS (SELECT 1 FROM data_sources d WHERE d.name = @data_source) AS source_exists,
       (v.strategy_id IS NOT NULL)::bool AS found,
       COALESCE(v.code, '')::text AS code, COALESCE(v.params, '[]')::jsonb AS params,
       COALESCE(v.origin, '')::text AS origin, COALESCE(v.class_name, '')::text AS class_name,
       COALESCE((SELECT jsonb_object_agg(dv.symbol, dv.version) FROM task_data_versions dv WHERE dv.task_id = @task_id::text),
                '{}')::jsonb AS data_versions
FROM (SELECT 1) AS one
LEFT JOIN strategy_versions v ON v.strategy_id = @strategy_id AND v.version = @version;

-- name: TaskSourceExists :one
SELECT EXISTS (SELECT 1 FROM data_sources WHERE name = $1);

-- name: TaskSymbolExists :one
SELECT EXISTS (SELECT 1 FROM symbols WHERE source = $1 AND symbol = $2);

-- name: CreateTask :one
INSERT INTO tasks (id, strategy_id, strategy_version, data_source, symbol, symbols, timeframe,
                   benchmark, timezone, start_date, end_date, initial_cash, commission, strategy_params, session_id, created_by)
VALUES ('task_' || nextval('task_seq'), @strategy_id, @strategy_version, @data_source, @symbol,
        @symbols::text[], @timeframe, @benchmark, @timezone, @start_date, @end_date, @initial_cash, @commission,
        @strategy_params, COALESCE(NULLIF(@session_id::text, ''), 'task_' || currval('task_seq')), @created_by)
RETURNING *;

-- name: SetTaskJob :exec
UPDATE tasks SET job_id = $2 WHERE id = $1;

-- name: RecordTaskJob :exec
-- The job of a task's attempt, on the task and in its attempt history: one statement.
WITH t AS (UPDATE tasks SET job_id = @job_id WHERE id = @task_id)
INSERT INTO task_attempts (task_id, attempt, status, job_id)
VALUES (@task_id, @attempt, 'pending', @job_id)
ON CONFLICT (task_id, attempt) DO UPDATE SET job_id = EXCLUDED.job_id;

-- name: GetTask :one
SELECT * FROM tasks WHERE id = $1;

-- name: GetTaskWithAttempts :one
-- A task and its attempts (as a JSON array of task_attempts rows, oldest first) in one
-- round trip: the read behind GET /api/backtests/{id}, polled while runs go on.
SELECT sqlc.embed(tasks),
       COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.attempt) FROM task_attempts a WHERE a.task_id = tasks.id),
                '[]')::jsonb AS attempts
FROM tasks WHERE id = $1;

-- name: GetTaskForUpdate :one
SELECT * FROM tasks WHERE id = $1 FOR UPDATE;

-- name: DeleteFinishedTask :one
-- Deletes a task that has ended, with its attempts, result and logs (cascades and triggers);
-- no row when it is pending or running (or unknown).
DELETE FROM tasks WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled')
RETURNING id;

-- name: CancelTask :one
-- Cancels a pending or running task; no row when it is in any other state.
UPDATE tasks SET status = 'cancelled', completed_at = now(), error = NULL
WHERE id = $1 AND status IN ('pending', 'running')
RETURNING *;

-- name: RetryTask :one
-- Puts a failed or cancelled task back to pending as a new attempt.
UPDATE tasks SET status = 'pending', attempt = attempt + 1, progress = 0, current_bar = 0,
    total_bars = 0, error = NULL, started_at = NULL, completed_at = NULL, job_id = NULL,
    lease = NULL, heartbeat_at = NULL, worker = NULL
WHERE id = $1 AND status IN ('failed', 'cancelled')
RETURNING *;

-- name: StartTaskRun :one
-- A worker takes the task's current attempt under a new lease, if the job is the task's
-- current one, and marks the attempt running in its history, in one statement (one round
-- trip and one commit when no admission check comes in between). A running task is taken
-- again (its previous worker died and River rescued the job); any other state means there
-- is nothing to do (no row). A finished attempt (e.g. cancelled meanwhile) stays finished.
WITH t AS (
    UPDATE tasks SET status = 'running', started_at = COALESCE(started_at, now()), progress = 0,
        current_bar = 0, total_bars = 0, error = NULL, lease = @lease, heartbeat_at = now(), worker = @worker
    WHERE tasks.id = @id AND tasks.attempt = @attempt AND tasks.status IN ('pending', 'running')
      AND (tasks.job_id IS NULL OR tasks.job_id = @job_id)
    RETURNING *
), a AS (
    INSERT INTO task_attempts (task_id, attempt, status, job_id, started_at, runs, worker)
    SELECT t.id, t.attempt, 'running', @job_id, now(), 1, @worker FROM t
    ON CONFLICT (task_id, attempt) DO UPDATE
    SET status = 'running', job_id = EXCLUDED.job_id, error = NULL, completed_at = NULL,
        started_at = COALESCE(task_attempts.started_at, EXCLUDED.started_at),
        runs = task_attempts.runs + 1, worker = EXCLUDED.worker
    WHERE task_attempts.status IN ('pending', 'running')
)
SELECT * FROM t;

-- name: RenewLease :one
-- The lease holder's heartbeat; no row when the lease was lost (or the task ended).
UPDATE tasks SET heartbeat_at = now()
WHERE id = @id AND lease = @lease AND status = 'running'
RETURNING id;

-- name: ReapLostTasks :many
-- Running tasks whose worker stopped renewing its lease: back to pending, lease cleared.
WITH lost AS (
    SELECT id, worker, heartbeat_at FROM tasks
    WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => @after_seconds::float8)
    ORDER BY heartbeat_at
    LIMIT 100
    -- The weakest lock that keeps two reapers apart (FOR UPDATE would also wait for
    -- key-share locks, which foreign keys referencing tasks take).
    FOR NO KEY UPDATE SKIP LOCKED
)
UPDATE tasks t SET status = 'pending', lease = NULL, heartbeat_at = NULL, worker = NULL,
    started_at = NULL, progress = 0, current_bar = 0, total_bars = 0
FROM lost
WHERE t.id = lost.id
RETURNING t.id, t.attempt, t.session_id, t.created_by, t.job_id, lost.worker AS lost_worker, lost.heartbeat_at AS last_heartbeat;

-- name: RecordInterruption :exec
-- The attempt's run was lost with its worker: the attempt waits for its next run (job_id).
UPDATE task_attempts SET status = 'pending', job_id = @job_id, worker = NULL,
    interruptions = interruptions || jsonb_build_array(jsonb_build_object(
        'worker', @lost_worker::text, 'last_heartbeat', @last_heartbeat::timestamptz, 'detected_at', now()))
WHERE task_id = @task_id AND attempt = @attempt;

-- name: SetTaskProgress :exec
UPDATE tasks SET progress = @progress, current_bar = @current_bar, total_bars = @total_bars
WHERE id = @id AND attempt = @attempt AND status = 'running' AND lease = @lease;

-- name: CompleteTaskRun :one
-- Completes the running attempt under its lease: the task, the attempt in its history and
-- the run's provenance, in one statement. No row when the task was cancelled meanwhile or
-- the lease is lost (then nothing is written). reproduction says whether the task repeats
-- another run (its verdict is due).
WITH t AS (
    UPDATE tasks SET status = 'completed', progress = 100, current_bar = @total_bars, total_bars = @total_bars,
        completed_at = now(), lease = NULL, heartbeat_at = NULL
    WHERE tasks.id = @id AND tasks.attempt = @attempt AND tasks.status = 'running' AND tasks.lease = @lease
    RETURNING tasks.id, tasks.attempt, tasks.completed_at
), a AS (
    UPDATE task_attempts SET status = 'completed', error = NULL, completed_at = now()
    WHERE task_attempts.task_id = @id AND task_attempts.attempt = @attempt AND EXISTS (SELECT 1 FROM t)
), p AS (
    INSERT INTO run_provenance (task_id, attempt, provenance) SELECT t.id, t.attempt, @provenance FROM t
    ON CONFLICT (task_id) DO UPDATE SET attempt = EXCLUDED.attempt, provenance = EXCLUDED.provenance, created_at = now()
)
SELECT t.completed_at, EXISTS (SELECT 1 FROM task_reproductions r WHERE r.task_id = t.id) AS reproduction FROM t;

-- name: FailTask :one
-- Fails the attempt; a run fails it only while it holds the lease (a task not yet running
-- has none).
UPDATE tasks SET status = 'failed', error = @error, completed_at = now(), lease = NULL, heartbeat_at = NULL
WHERE id = @id AND attempt = @attempt AND status IN ('pending', 'running')
  AND lease IS NOT DISTINCT FROM sqlc.narg('lease')::bigint
RETURNING completed_at;

-- name: FinishTaskAttempt :exec
UPDATE task_attempts SET status = @status, error = @error, completed_at = now()
WHERE task_id = @task_id AND attempt = @attempt;

-- name: UnfinishedTasksBefore :many
-- Pending or running tasks last changed before the cutoff, for the sweeper to check their jobs.
SELECT * FROM tasks
WHERE status IN ('pending', 'running') AND COALESCE(started_at, created_at) < @before::timestamptz
ORDER BY created_at
LIMIT 500;

-- name: HandBackTask :one
-- A stopping worker returns the task's running attempt to the queue, as if it had never
-- started: the next worker runs it from the beginning, with the same attempt.
UPDATE tasks SET status = 'pending', started_at = NULL, progress = 0, current_bar = 0, total_bars = 0,
    lease = NULL, heartbeat_at = NULL, worker = NULL
WHERE id = @id AND attempt = @attempt AND status = 'running' AND lease = @lease
RETURNING id;

-- name: HandBackTaskAttempt :exec
UPDATE task_attempts SET status = 'pending', started_at = NULL
WHERE task_id = @task_id AND attempt = @attempt AND status = 'running';

-- name: CommitWithoutWaiting :exec
-- Makes the current transaction's commit not wait for its WAL to reach disk: for a
-- running task's progress and log lines, which the run's completion (a commit that waits,
-- flushing all WAL written before it) makes durable with its result, and which a rerun
-- after a crash replaces.
SELECT set_config('synchronous_commit', 'off', true);

-- name: TaskOwner :one
SELECT created_by FROM tasks WHERE id = $1;


-- name: TaskStateCounts :many
-- How many tasks are in each state, for /metrics.
SELECT status, count(*)::bigint AS tasks FROM tasks GROUP BY status;

-- name: OldestPendingWait :one
-- How long the longest-waiting pending task has waited since its current attempt was
-- queued (0 when none waits), for /metrics.
SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(COALESCE(a.created_at, t.created_at))), 0)::float8
FROM tasks t LEFT JOIN task_attempts a ON a.task_id = t.id AND a.attempt = t.attempt
WHERE t.status = 'pending';
