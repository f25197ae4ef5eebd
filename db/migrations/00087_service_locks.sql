-- +goose Up
-- What the service keeps from the BI role (issue 46): PostgreSQL has no privilege on
-- advisory locks or on LISTEN/NOTIFY, so a BI login could hold the service's advisory keys
-- (a user's runs stayed pending while it did) and read or forge its events. The service's
-- locks and the events' key live here instead, in a schema no other role may use: a role
-- without USAGE cannot even name these tables, so it can neither read nor lock them.
CREATE SCHEMA backtestd_private;
REVOKE ALL ON SCHEMA backtestd_private FROM PUBLIC;

-- One row per lock the service takes for the length of a transaction (a user's admission,
-- a data source's seeding, a symbol's import, the reapers' hand-over of orphaned study
-- jobs). A waiting lock inserts its row or locks it (internal/store locks.sql); rows stay,
-- one per user, data source, symbol and the fixed names below.
CREATE TABLE backtestd_private.service_locks (
    name text PRIMARY KEY
);
INSERT INTO backtestd_private.service_locks (name) VALUES ('study-orphans');

-- The scheduled prune's lock, held for the whole prune: a table lock (LOCK TABLE ... IN
-- EXCLUSIVE MODE NOWAIT in an open transaction on one connection) rather than a row lock,
-- because a row lock gives the transaction an id that would keep VACUUM from removing
-- what the prune deletes until it ends. The table holds nothing.
CREATE TABLE backtestd_private.retention_lock (
    id int PRIMARY KEY
);

-- The key that seals every event on the backtestd_events channel (internal/events: AES-GCM),
-- so that a role that LISTENs reads nothing and a NOTIFY the service did not write is
-- dropped. The first process that needs it inserts one generated from its random source;
-- the others (ON CONFLICT DO NOTHING) read the same one.
CREATE TABLE backtestd_private.event_key (
    id int PRIMARY KEY CHECK (id = 1),
    key bytea NOT NULL CHECK (length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP SCHEMA backtestd_private CASCADE;
