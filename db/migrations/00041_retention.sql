-- +goose Up
-- Retention: a run or study a user pinned is kept by `backtestd prune` and the RETENTION
-- setting whatever its age (NULL: not pinned).
ALTER TABLE tasks ADD COLUMN pinned_at timestamptz;
ALTER TABLE studies ADD COLUMN pinned_at timestamptz;

-- What a prune looks for: finished, unpinned runs by age, oldest first.
CREATE INDEX tasks_prunable ON tasks (created_at, id)
    WHERE pinned_at IS NULL AND status IN ('completed', 'failed', 'cancelled');

-- Space freed by deleting runs is reused only once a vacuum has also cleaned the indexes.
-- PostgreSQL skips index cleanup when few index pages would be freed (vacuum_index_cleanup
-- auto), so after deleting results new ones kept growing the tables; forcing it on, and
-- vacuuming the result tables after a twentieth of their rows changed instead of a fifth,
-- keeps them at the size their live rows need.
ALTER TABLE tasks SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE task_attempts SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE results SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05,
    toast.vacuum_index_cleanup = on, toast.autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE result_trades SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE result_executions SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE result_statistics SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05,
    toast.vacuum_index_cleanup = on, toast.autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE result_equity_series SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05,
    toast.vacuum_index_cleanup = on, toast.autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE task_log_chunks SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05,
    toast.vacuum_index_cleanup = on, toast.autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE study_trials SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05,
    toast.vacuum_index_cleanup = on, toast.autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE study_trial_params SET (vacuum_index_cleanup = on, autovacuum_vacuum_scale_factor = 0.05);

-- +goose Down
ALTER TABLE study_trial_params RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor);
ALTER TABLE study_trials RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor,
    toast.vacuum_index_cleanup, toast.autovacuum_vacuum_scale_factor);
ALTER TABLE task_log_chunks RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor,
    toast.vacuum_index_cleanup, toast.autovacuum_vacuum_scale_factor);
ALTER TABLE result_equity_series RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor,
    toast.vacuum_index_cleanup, toast.autovacuum_vacuum_scale_factor);
ALTER TABLE result_statistics RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor,
    toast.vacuum_index_cleanup, toast.autovacuum_vacuum_scale_factor);
ALTER TABLE result_executions RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor);
ALTER TABLE result_trades RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor);
ALTER TABLE results RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor,
    toast.vacuum_index_cleanup, toast.autovacuum_vacuum_scale_factor);
ALTER TABLE task_attempts RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor);
ALTER TABLE tasks RESET (vacuum_index_cleanup, autovacuum_vacuum_scale_factor);
DROP INDEX tasks_prunable;
ALTER TABLE studies DROP COLUMN pinned_at;
ALTER TABLE tasks DROP COLUMN pinned_at;
