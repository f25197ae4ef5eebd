-- The fair share's queries (internal/fairshare): what one user runs at once.

-- name: LockOwner :exec
-- Serialises starting the work of one owner until the end of the transaction, so that two
-- workers cannot both start the owner's next unit past their limit. A row lock in the
-- service's private schema (migration 00087), not an advisory lock: a BI login could hold
-- the advisory key and keep the owner's runs pending.
INSERT INTO backtestd_private.service_locks (name) VALUES ('owner:' || @owner::text)
ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name;

-- name: CountOwnerUnits :one
-- The units of work the owner runs now, besides the one starting (task_id, or job_id of a
-- study job): running backtests, and study jobs (batches, folds' out-of-sample runs) that
-- hold a lease. A lease is taken when a study job is admitted, so both count from their
-- admission until they end, the CPU wait included. Also: how many of the owner's
-- backtests wait to start (pending), which go before the owner's study jobs. A price-path
-- job (montecarlo_paths, migration 00103) counts while its row is running and was touched
-- within @paths_stale_secs (a dead worker's row stops counting then).
SELECT ((SELECT count(*) FROM tasks t WHERE t.created_by = @owner AND t.status = 'running' AND t.id <> @task_id)
     + (SELECT count(*) FROM study_batches b JOIN studies s ON s.id = b.study_id
        WHERE s.created_by = @owner AND b.job_id <> @job_id)
     + (SELECT count(*) FROM montecarlo_paths m
        WHERE m.created_by = @owner AND m.status = 'running' AND m.job_id IS DISTINCT FROM @job_id
          AND m.updated_at > now() - make_interval(secs => @paths_stale_secs::float8)))::int AS units,
    (SELECT count(*) FROM tasks t WHERE t.created_by = @owner AND t.status = 'pending' AND t.id <> @task_id)::int AS waiting_backtests;
