// Package db holds the database schema: goose migrations embedded into the binary, and
// the SQL queries (db/queries) that sqlc turns into internal/store.
package db

import "embed"

// Migrations are the goose migration files, applied in order at start-up.
//
//go:embed migrations/*.sql
var Migrations embed.FS
