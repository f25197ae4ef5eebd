-- The events channel's key (internal/events, migration 00087).

-- name: EnsureEventKey :exec
-- Stores key as the channel's key unless one is stored already: every process sharing the
-- database then reads the same one (EventKey).
INSERT INTO backtestd_private.event_key (id, key) VALUES (1, @key::bytea)
ON CONFLICT (id) DO NOTHING;

-- name: EventKey :one
SELECT key FROM backtestd_private.event_key WHERE id = 1;
