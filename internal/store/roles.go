package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// biRoleComment marks the roles CreateBIRole made, so that it never changes another role
// (the service's own, an admin's) that happens to have the name it is given.
const biRoleComment = "backtestd BI role: reads the bi_* views only"

// roleNameRE is compiled on first use, not at start-up: its {0,62} makes it a large
// program, which every command of the binary would build.
var roleNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// BIRoleOptions are the limits CreateBIRole sets on the role. PostgreSQL lets any role
// change its own settings (SET, even ALTER ROLE itself SET), so the timeouts are the
// defaults its sessions start with, not limits it cannot lift; the connection limit is
// one it cannot change.
type BIRoleOptions struct {
	ConnectionLimit          int           // most sessions at once (CONNECTION LIMIT), 1 or more
	StatementTimeout         time.Duration // statement_timeout, 1 ms or more
	IdleInTransactionTimeout time.Duration // idle_in_transaction_session_timeout, 1 ms or more
}

// DefaultBIRoleOptions are `bi-role create`'s defaults: a few dashboards' sessions, and
// queries of the bi_* views (a year of results answers in seconds, docs/sql.md) well
// within a minute.
var DefaultBIRoleOptions = BIRoleOptions{ConnectionLimit: 10, StatementTimeout: time.Minute, IdleInTransactionTimeout: time.Minute}

// BIRole is what CreateBIRole did.
type BIRole struct {
	Views []string // the bi_* views the role reads
	// Warnings name what the role can still do that CreateBIRole could not take away
	// (it needs a superuser for them); empty when nothing is left.
	Warnings []string
}

// largeObjectCreators are the functions with which any role may create a large object, a
// write outside every table's privileges. Only their owner (a superuser) can revoke them.
var largeObjectCreators = []string{"lo_create(oid)", "lo_creat(integer)", "lo_from_bytea(oid, bytea)"}

// CreateBIRole creates (or updates) a PostgreSQL login role that reads the bi_* views and
// nothing else: no table, no other view, no write anywhere (it owns nothing, holds no
// write privilege and no role membership, may not create in any schema nor make temporary
// tables, and its transactions are read-only by default), at most o.ConnectionLimit
// sessions and the statement and idle-in-transaction timeouts of o. Views read their
// tables with their owner's rights, so the role needs no grant on the tables. Running it
// again applies all of this to an existing BI role (a deployment upgrades by running it),
// sets the password and grants views added since. It checks the result and fails when
// the role could still read or write something else.
//
// The service's own locks and the events' key are in the schema backtestd_private, on
// which the role has no privilege (migration 00087).
//
// This is DDL, which sqlc cannot express and which takes no parameters: the statements
// are built by the server's format() with %I and %L quoting.
func (s *Store) CreateBIRole(ctx context.Context, name, password string, o BIRoleOptions) (BIRole, error) {
	if !roleNameRE().MatchString(name) {
		return BIRole{}, fmt.Errorf("invalid role name %q: lower-case letters, digits and _, starting with a letter or _", name)
	}
	if password == "" {
		return BIRole{}, fmt.Errorf("a BI role needs a password")
	}
	if o.ConnectionLimit < 1 {
		return BIRole{}, fmt.Errorf("connection limit %d: want 1 or more", o.ConnectionLimit)
	}
	if o.StatementTimeout < time.Millisecond || o.IdleInTransactionTimeout < time.Millisecond {
		return BIRole{}, fmt.Errorf("timeouts %s and %s: want 1ms or more (0 would mean none)", o.StatementTimeout, o.IdleInTransactionTimeout)
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	var out BIRole
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
		if out.Views, err = s.ListBIViews(ctx, tx); err != nil {
			return fmt.Errorf("list views: %w", err)
		}
		var dbName string
		var super bool
		if err := tx.QueryRow(ctx, `SELECT current_database(), (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`).Scan(&dbName, &super); err != nil {
			return fmt.Errorf("current database: %w", err)
		}
		var memberOf []string
		if exists {
			rows, err := tx.Query(ctx, `SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
				JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = $1`, name)
			if err != nil {
				return fmt.Errorf("role memberships: %w", err)
			}
			if memberOf, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return fmt.Errorf("role memberships: %w", err)
			}
		}
		attrs := `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT CONNECTION LIMIT %s PASSWORD %L`
		create := []string{`CREATE ROLE %I ` + attrs, name, strconv.Itoa(o.ConnectionLimit), password}
		if exists {
			create[0] = `ALTER ROLE %I ` + attrs
		}
		// Each statement is a format string and its arguments.
		stmts := [][]string{
			create,
			{`COMMENT ON ROLE %I IS %L`, name, biRoleComment},
			{`ALTER ROLE %I SET default_transaction_read_only = on`, name},
			{`ALTER ROLE %I SET statement_timeout = %L`, name, ms(o.StatementTimeout)},
			{`ALTER ROLE %I SET idle_in_transaction_session_timeout = %L`, name, ms(o.IdleInTransactionTimeout)},
			// Every role has TEMPORARY through PUBLIC unless it is revoked there; the role
			// running this (the service's) keeps it by a grant of its own.
			{`REVOKE ALL ON DATABASE %I FROM %I`, dbName, name},
			{`REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC`, dbName},
			{`GRANT TEMPORARY ON DATABASE %I TO CURRENT_USER`, dbName},
			{`GRANT CONNECT ON DATABASE %I TO %I`, dbName, name},
			// Whatever was granted to the role before (by hand, or a view since dropped).
			{`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM %I`, name},
			{`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM %I`, name},
			{`REVOKE ALL ON SCHEMA public FROM %I`, name},
			{`GRANT USAGE ON SCHEMA public TO %I`, name},
		}
		for _, g := range memberOf {
			stmts = append(stmts, []string{`REVOKE %I FROM %I`, g, name})
		}
		for _, v := range out.Views {
			stmts = append(stmts, []string{`GRANT SELECT ON %I TO %I`, v, name})
		}
		if super {
			for _, f := range largeObjectCreators {
				stmts = append(stmts, []string{`REVOKE EXECUTE ON FUNCTION pg_catalog.` + f + ` FROM PUBLIC`})
			}
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
		if out.Warnings, err = checkBIRole(ctx, tx, name, out.Views); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return BIRole{}, err
	}
	return out, nil
}

// checkBIRole verifies, in tx after the grants, that the role reads only views and
// writes nothing; it fails naming what is left, and returns as warnings what only a
// superuser could take away.
func checkBIRole(ctx context.Context, tx pgx.Tx, name string, views []string) ([]string, error) {
	checks := []struct{ what, sql string }{
		{"owns objects (REASSIGN OWNED BY it first)",
			`SELECT count(*) FROM pg_shdepend d JOIN pg_roles r ON r.oid = d.refobjid WHERE r.rolname = $1 AND d.deptype = 'o'`},
		{"is a member of another role", `SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = $1`},
		{"may create temporary tables (TEMPORARY on the database: revoke it from PUBLIC as the database's owner)",
			`SELECT count(*) FROM pg_database WHERE datname = current_database() AND has_database_privilege($1, oid, 'TEMPORARY')`},
		{"may create objects in a schema (revoke CREATE from PUBLIC)",
			`SELECT count(*) FROM pg_namespace WHERE has_schema_privilege($1, oid, 'CREATE')`},
		{"may use the service's private schema", `SELECT count(*) FROM pg_namespace WHERE nspname = 'backtestd_private' AND has_schema_privilege($1, oid, 'USAGE')`},
		// pg_settings is updatable by everyone: an UPDATE of it is a SET of one's session.
		{"may write a table, view or sequence",
			`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			 WHERE (c.relkind IN ('r', 'p', 'v', 'm', 'f') AND has_table_privilege($1, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
			        OR c.relkind = 'S' AND has_sequence_privilege($1, c.oid, 'USAGE, UPDATE'))
			   AND c.oid <> 'pg_catalog.pg_settings'::regclass`},
		{"may read a relation other than the bi_* views (a grant to PUBLIC?)",
			`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
			   AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND NOT (n.nspname = 'public' AND c.relname = ANY($2::text[]))
			   AND has_table_privilege($1, c.oid, 'SELECT')`},
		{"may run a SECURITY DEFINER function outside the system's",
			`SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			 WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND has_function_privilege($1, p.oid, 'EXECUTE')`},
	}
	var bad []string
	for _, c := range checks {
		var n int
		args := []any{name}
		if strings.Contains(c.sql, "$2") {
			args = append(args, views)
		}
		if err := tx.QueryRow(ctx, c.sql, args...).Scan(&n); err != nil {
			return nil, fmt.Errorf("check the role (%s): %w", c.what, err)
		}
		if n > 0 {
			bad = append(bad, fmt.Sprintf("%s (%d)", c.what, n))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("role %s still %s", name, strings.Join(bad, "; "))
	}
	var warnings []string
	for _, f := range largeObjectCreators {
		var may bool
		if err := tx.QueryRow(ctx, `SELECT has_function_privilege($1, $2, 'EXECUTE')`, name, "pg_catalog."+f).Scan(&may); err != nil {
			return nil, fmt.Errorf("check the role (%s): %w", f, err)
		}
		if may {
			warnings = append(warnings, "it may create large objects with "+f+" (in a transaction it makes read-write): run bi-role create once as a superuser to revoke it from PUBLIC")
		}
	}
	return warnings, nil
}
