-- +goose Up
-- Team mode: users with roles, browser sessions, API tokens, who made what, and an audit
-- log. Secrets are stored hashed: passwords with argon2id, session and token secrets (32
-- random bytes each) with SHA-256. Users are disabled, never deleted, so the names that
-- strategies, tasks and the audit log record stay meaningful.
CREATE TABLE users (
    name          text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'),
    role          text NOT NULL CHECK (role IN ('admin', 'researcher', 'viewer')),
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    disabled_at   timestamptz
);

CREATE TABLE sessions (
    secret_hash bytea PRIMARY KEY,
    user_name   text NOT NULL REFERENCES users (name),
    csrf_token  text NOT NULL,  -- sent back in X-CSRF-Token on cookie-authenticated writes
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_name);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE SEQUENCE api_token_seq;
CREATE TABLE api_tokens (
    id           text PRIMARY KEY DEFAULT 'tok_' || nextval('api_token_seq'),
    user_name    text NOT NULL REFERENCES users (name),
    name         text NOT NULL DEFAULT '',
    secret_hash  bytea NOT NULL UNIQUE,
    read_only    boolean NOT NULL DEFAULT false,
    created_by   text REFERENCES users (name),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_name);

-- Who did what: one row per change (strategy, task, import, user, token) and per failed
-- login. actor is NULL for a failed login and for a single-user service without accounts.
CREATE TABLE audit_log (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    actor       text,
    action      text NOT NULL,
    target      text NOT NULL DEFAULT '',
    status      integer NOT NULL,
    remote_addr text NOT NULL DEFAULT '',
    request_id  text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_actor ON audit_log (actor, at DESC);

-- Who made what (NULL: before accounts, a file in STRATEGY_DIRS, or a single-user service).
ALTER TABLE strategies ADD COLUMN created_by text REFERENCES users (name);
ALTER TABLE strategy_versions ADD COLUMN created_by text REFERENCES users (name);
ALTER TABLE tasks ADD COLUMN created_by text REFERENCES users (name);
ALTER TABLE symbols ADD COLUMN imported_by text REFERENCES users (name);

CREATE VIEW bi_audit AS
SELECT id, at, actor, action, target, status, remote_addr, request_id FROM audit_log;

-- +goose Down
DROP VIEW bi_audit;
ALTER TABLE symbols DROP COLUMN imported_by;
ALTER TABLE tasks DROP COLUMN created_by;
ALTER TABLE strategy_versions DROP COLUMN created_by;
ALTER TABLE strategies DROP COLUMN created_by;
DROP TABLE audit_log;
DROP TABLE api_tokens;
DROP SEQUENCE api_token_seq;
DROP TABLE sessions;
DROP TABLE users;
