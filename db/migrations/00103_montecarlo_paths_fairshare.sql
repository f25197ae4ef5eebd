-- +goose Up
-- A price-path job counts as one of its requester's running units of work
-- (internal/fairshare): job_id names the River job working the row, so that the job being
-- admitted leaves itself out of the count, and updated_at, touched by the job every few
-- seconds (fairshare.PathsBeat), tells a live job from one whose worker died.
ALTER TABLE montecarlo_paths ADD COLUMN job_id bigint;
CREATE INDEX montecarlo_paths_running ON montecarlo_paths (created_by) WHERE status = 'running';

-- +goose Down
DROP INDEX montecarlo_paths_running;
ALTER TABLE montecarlo_paths DROP COLUMN job_id;
