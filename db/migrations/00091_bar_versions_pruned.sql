-- +goose Up
-- Retention removes the bars of old versions nothing references (internal/retention); the
-- version's row stays, marked, so that the list still tells what each import changed and a
-- run as of a pruned version's time is refused rather than run on another version.
ALTER TABLE bar_versions ADD COLUMN pruned_at timestamptz;

-- +goose Down
ALTER TABLE bar_versions DROP COLUMN pruned_at;
