-- name: ListDataSources :many
SELECT * FROM data_sources ORDER BY is_default DESC, name;

-- name: GetDataSource :one
SELECT * FROM data_sources WHERE name = $1;

-- name: DefaultDataSource :one
SELECT * FROM data_sources WHERE is_default;

-- name: UpsertDataSource :exec
INSERT INTO data_sources (name, description, is_default, config)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, config = EXCLUDED.config;

-- name: ListSymbols :many
-- Symbols of a source whose ticker or name contains search (case-insensitive), default first.
SELECT symbol, name, is_sample, is_default, timezone, imported_by FROM symbols
WHERE source = @source
  AND (@search::text = '' OR strpos(lower(symbol), lower(@search::text)) > 0
                          OR strpos(lower(name), lower(@search::text)) > 0)
ORDER BY is_default DESC, symbol
LIMIT @max_rows;

-- name: GetSymbol :one
SELECT * FROM symbols WHERE source = $1 AND symbol = $2;

-- name: DefaultSymbol :one
SELECT * FROM symbols WHERE source = $1 AND is_default;

-- name: UpsertSymbol :exec
-- Registers a symbol; an empty name keeps the stored one.
INSERT INTO symbols (source, symbol, name, is_sample, is_default, timezone, imported_by)
VALUES (@source, @symbol, @name, @is_sample, @is_default, @timezone, @imported_by)
ON CONFLICT (source, symbol) DO UPDATE
SET name = CASE WHEN EXCLUDED.name = '' THEN symbols.name ELSE EXCLUDED.name END,
    timezone = EXCLUDED.timezone, imported_by = EXCLUDED.imported_by, updated_at = now();

-- name: CountSampleSymbols :one
SELECT count(*) FROM symbols WHERE source = $1 AND is_sample;

-- name: LockDataSource :exec
-- Serialises start-up seeding between processes sharing one database, until the end of
-- the transaction (a row lock only the service can take, as LockOwner).
INSERT INTO backtestd_private.service_locks (name) VALUES ('data_source:' || @name::text)
ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name;

-- name: DefaultSourceAndSymbol :one
-- The data source a request without one takes, and its default symbol (marketdata.Default).
SELECT d.name,
       COALESCE((SELECT sy.symbol FROM symbols sy WHERE sy.source = d.name
                 ORDER BY sy.is_default DESC, sy.symbol LIMIT 1), '')::text AS default_symbol
FROM data_sources d WHERE d.is_default;

-- name: SourceDefaultSymbol :one
-- The symbol a request on source without one takes (marketdata.DefaultSymbolOf).
SELECT COALESCE((SELECT sy.symbol FROM symbols sy WHERE sy.source = $1
                 ORDER BY sy.is_default DESC, sy.symbol LIMIT 1), '')::text;
