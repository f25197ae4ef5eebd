package store

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
)

// biRoleComment marks the roles CreateBIRole made, so that it never changes another role
// (the service's own, an admin's) that happens to have the name it is given.
const biRoleComment = "backtestd BI role: reads the bi_* views only"

// roleNameRE is compiled on first use, not at start-up: its {0,62} makes it a large
// program, which every command of the binary would build.
var roleNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// CreateBIRole creates (or updates) a PostgreSQL login role that can read the bi_* views
// and nothing else: no table, no other view, read-only transactions. Views read their
// tables with their owner's rights, so the role needs no grant on the tables. Running it
// again sets the password and grants views added since. It returns the views granted.
//
// This is DDL, which sqlc cannot express and which takes no parameters: the statements
// are built by the server's format() with %I and %L quoting.
func (s *Store) CreateBIRole(ctx context.Context, name, password string) ([]string, error) {
	if !roleNameRE().MatchString(name) {
		return nil, fmt.Errorf("invalid role name %q: lower-case letters, digits and _, starting with a letter or _", name)
	}
	if password == "" {
		return nil, fmt.Errorf("a BI role needs a password")
	}
	var views []string
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		var exists bool
		var comment *string
		if err := tx.QueryRow(ctx, `SELECT true, shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = $1`, name).Scan(&exists, &comment); err != nil && err != pgx.ErrNoRows {
			return fmt.Errorf("look up role: %w", err)
		}
		if exists && (comment == nil || *comment != biRoleComment) {
			return fmt.Errorf("role %s exists and was not made by bi-role create: choose another name", name)
		}
		var err error
		if views, err = s.ListBIViews(ctx, tx); err != nil {
			return fmt.Errorf("list views: %w", err)
		}
		var dbName string
		if err := tx.QueryRow(ctx, `SELECT current_database()`).Scan(&dbName); err != nil {
			return fmt.Errorf("current database: %w", err)
		}
		// Each statement is a format string and its arguments.
		create := []string{`CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD %L`, name, password}
		if exists {
			create = []string{`ALTER ROLE %I LOGIN PASSWORD %L`, name, password}
		}
		stmts := [][]string{
			create,
			{`COMMENT ON ROLE %I IS %L`, name, biRoleComment},
			{`ALTER ROLE %I SET default_transaction_read_only = on`, name},
			{`GRANT CONNECT ON DATABASE %I TO %I`, dbName, name},
			{`GRANT USAGE ON SCHEMA public TO %I`, name},
		}
		for _, v := range views {
			stmts = append(stmts, []string{`GRANT SELECT ON %I TO %I`, v, name})
		}
		for _, st := range stmts {
			var sql string
			if err := tx.QueryRow(ctx, `SELECT format($1::text, VARIADIC $2::text[])`, st[0], st[1:]).Scan(&sql); err != nil {
				return fmt.Errorf("build %q: %w", st[0], err)
			}
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("%s: %w", st[0], err)
			}
		}
		return nil
	})
	return views, err
}
