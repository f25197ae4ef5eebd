-- +goose Up
-- Leases: the worker running a task holds its lease (a random token) and renews
-- heartbeat_at every few seconds; a task whose heartbeat is older than the lease timeout
-- has lost its worker and is queued again by any other worker. Only the lease holder can
-- store progress, a result or a failure, so a result is stored once even if a worker
-- thought dead comes back.
ALTER TABLE tasks
    ADD COLUMN lease        bigint,
    ADD COLUMN heartbeat_at timestamptz,
    ADD COLUMN worker       text;          -- the process holding the lease (host:pid)
CREATE INDEX tasks_running_heartbeat ON tasks (heartbeat_at) WHERE status = 'running';

-- The attempt history: how many times an attempt was started, and each run a lost worker
-- left unfinished ({worker, last_heartbeat, detected_at}).
ALTER TABLE task_attempts
    ADD COLUMN runs          integer NOT NULL DEFAULT 0,
    ADD COLUMN worker        text,
    ADD COLUMN interruptions jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE task_attempts DROP COLUMN interruptions, DROP COLUMN worker, DROP COLUMN runs;
DROP INDEX tasks_running_heartbeat;
ALTER TABLE tasks DROP COLUMN worker, DROP COLUMN heartbeat_at, DROP COLUMN lease;
