-- +goose Up
-- A metrics token reads /metrics and nothing else: what a Prometheus server is given.
ALTER TABLE api_tokens ADD COLUMN metrics_only boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN metrics_only;
