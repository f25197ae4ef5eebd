-- +goose Up
-- A study's cross-validation as its request declared it: {method: "cpcv", groups,
-- test_groups, embargo_bars}; null: none (GET /api/studies/{id}/cpcv then takes them in
-- its query).
ALTER TABLE studies ADD COLUMN validation jsonb;

-- +goose Down
ALTER TABLE studies DROP COLUMN validation;
