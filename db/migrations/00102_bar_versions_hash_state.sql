-- +goose Up
-- The sha256 state after a version's last bar (crypto/sha256's MarshalBinary, before the
-- sum; internal/provenance SeriesHash): an import that only appends bars after the stored
-- ones resumes it to fingerprint the new version from the appended bars alone, instead of
-- reading the timeframe's whole series back (internal/marketdata versions.go). NULL for
-- versions made before it; the next import then reads the series once.
ALTER TABLE bar_versions ADD COLUMN sha256_state bytea;

-- +goose Down
ALTER TABLE bar_versions DROP COLUMN sha256_state;
