-- name: InsertUser :one
INSERT INTO users (name, role, password_hash) VALUES (@name, @role, @password_hash)
ON CONFLICT (name) DO NOTHING
RETURNING *;

-- name: GetUser :one
SELECT * FROM users WHERE name = $1;

-- name: ListUsers :many
SELECT * FROM users ORDER BY name;

-- name: CountActiveAdmins :one
SELECT count(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL;

-- name: CountUsers :one
SELECT count(*) FROM users;

-- name: SetUserRole :one
UPDATE users SET role = @role WHERE name = @name RETURNING *;

-- name: SetUserPassword :one
UPDATE users SET password_hash = @password_hash WHERE name = @name RETURNING *;

-- name: SetUserDisabled :one
-- Disables (or enables again) a user; disabling ends their sessions in the same statement's
-- transaction (see DeleteUserSessions) and their tokens stop working through the join.
UPDATE users SET disabled_at = CASE WHEN @disabled::boolean THEN COALESCE(disabled_at, now()) END
WHERE name = @name RETURNING *;

-- name: DeleteUserSessions :exec
DELETE FROM sessions WHERE user_name = $1;

-- name: InsertSession :exec
INSERT INTO sessions (secret_hash, user_name, csrf_token, expires_at)
VALUES (@secret_hash, @user_name, @csrf_token, @expires_at);

-- name: DeleteSession :exec
DELETE FROM sessions WHERE secret_hash = $1;

-- name: DeleteExpiredSessions :execrows
DELETE FROM sessions WHERE expires_at <= now();

-- name: SessionIdentity :one
-- The live session with this secret and its user, unless expired or the user disabled.
SELECT s.csrf_token, s.expires_at, u.name, u.role
FROM sessions s JOIN users u ON u.name = s.user_name
WHERE s.secret_hash = $1 AND s.expires_at > now() AND u.disabled_at IS NULL;

-- name: InsertToken :one
INSERT INTO api_tokens (user_name, name, secret_hash, read_only, metrics_only, created_by, expires_at)
VALUES (@user_name, @name, @secret_hash, @read_only, @metrics_only, @created_by, @expires_at)
RETURNING *;

-- name: TokenIdentity :one
-- The live token with this secret and its user: not revoked, not expired, user enabled.
SELECT t.id, t.read_only, t.metrics_only, t.last_used_at, u.name, u.role
FROM api_tokens t JOIN users u ON u.name = t.user_name
WHERE t.secret_hash = $1 AND t.revoked_at IS NULL
  AND (t.expires_at IS NULL OR t.expires_at > now()) AND u.disabled_at IS NULL;

-- name: TouchToken :exec
-- Records a use at most once a minute, so a busy script costs no write per request.
UPDATE api_tokens SET last_used_at = now()
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');

-- name: ListTokens :many
-- One user's tokens, or everyone's when user_name is empty; newest first.
SELECT * FROM api_tokens
WHERE (@user_name::text = '' OR user_name = @user_name)
ORDER BY created_at DESC, id DESC;

-- name: GetToken :one
SELECT * FROM api_tokens WHERE id = $1;

-- name: RevokeToken :one
UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *;

-- name: InsertAudit :exec
INSERT INTO audit_log (actor, action, target, status, remote_addr, request_id)
VALUES (@actor, @action, @target, @status, @remote_addr, @request_id);

-- name: ListAudit :many
-- The audit log, newest first, filtered by actor, action (a prefix such as 'strategy.')
-- and a time range; empty filters match everything.
SELECT * FROM audit_log
WHERE (@actor::text = '' OR actor = @actor)
  AND (@action::text = '' OR action LIKE @action || '%')
  AND (sqlc.narg(since)::timestamptz IS NULL OR at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR at < sqlc.narg(until))
ORDER BY at DESC, id DESC
OFFSET @skip LIMIT @lim;

-- name: ListBIViews :many
-- The views a BI role may read: bi_* in the public schema.
SELECT table_name::text FROM information_schema.views
WHERE table_schema = 'public' AND table_name LIKE 'bi\_%'
ORDER BY table_name;
