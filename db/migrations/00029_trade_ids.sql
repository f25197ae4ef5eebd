-- +goose Up
-- A strategy may group its orders into trades of their own on one feed (backtrader's
-- tradeid); each stored trade keeps the group it belongs to. 0 is the default group.
ALTER TABLE result_trades ADD COLUMN tradeid integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE result_trades DROP COLUMN tradeid;
