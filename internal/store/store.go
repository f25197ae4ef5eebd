// Package store is the database edge: a pgx pool, the schema migrations, transactions and
// the sqlc-generated queries (db/queries). Other packages never write SQL themselves.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/backtestd/backtestd/db"
)

// MaxOffset is the largest skip a paged list takes: its OFFSET is an int4 query
// parameter. The API's paging (internal/httpapi) and the audit log (internal/auth) both
// bound skip by it, and api/openapi.yaml's Skip parameter gives it (a test checks).
const MaxOffset = math.MaxInt32

const idleInTx = "idle_in_transaction_session_timeout"

// ErrNotFound is what a query for one row returns when there is none. The generated
// queries return pgx's error as it is; this is its one name outside the store, so that no
// other package depends on the driver to tell "not found" from a failure.
var ErrNotFound = pgx.ErrNoRows

// Store bundles the pool with the generated queries.
type Store struct {
	Pool *pgxpool.Pool
	*Queries
}

// Open connects to the database at url. maxConns <= 0 keeps pgx's default. tracers see
// every query, batch and COPY after the store's own (tests count statements with a
// Counter).
func Open(ctx context.Context, url string, maxConns int32, tracers ...pgx.QueryTracer) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
		// Half the connections stay open while idle: a burst after a quiet spell otherwise
		// waits for PostgreSQL to start a backend per connection, one after another, and
		// under load that took the first reads of a 1,000-task flood 2 s (a quarter kept
		// open still left 1.7 s).
		cfg.MinConns = maxConns / 2
	}
	cfg.ConnConfig.Tracer = safeArgs{}
	if len(tracers) > 0 {
		cfg.ConnConfig.Tracer = multitracer.New(append([]pgx.QueryTracer{safeArgs{}}, tracers...)...)
	}
	// No transaction of ours waits between statements for long. One left open by a process
	// frozen or cut off mid-transaction would hold its row locks (a running task's row,
	// which another worker must take over) until TCP gives up, often hours later.
	if _, ok := cfg.ConnConfig.RuntimeParams[idleInTx]; !ok {
		cfg.ConnConfig.RuntimeParams[idleInTx] = "10s"
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		registerSafeText(c.TypeMap())
		registerFastArrays(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &Store{Pool: pool, Queries: New()}, nil
}

// Close closes the pool.
func (s *Store) Close() { s.Pool.Close() }

// WithTx runs fn in a transaction, committing when fn returns nil and rolling back otherwise.
func (s *Store) WithTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.Pool, fn)
}

// WithSnapshot runs fn in a read-only transaction whose statements all see one snapshot
// (repeatable read), for reads that must agree with each other.
func (s *Store) WithSnapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// WithTxNoWait is a transaction for writes a crash may lose without harm: the commit does
// not wait for the disk (PostgreSQL's synchronous_commit off for this transaction only). A
// later commit that waits (the default) flushes everything written before it, these
// writes included. It runs on a Pipeline: fn's statements without a result, the begin and
// the commit are one round trip.
func (s *Store) WithTxNoWait(ctx context.Context, fn func(db DBTX) error) error {
	return s.WithPipeline(ctx, func(p *Pipeline) error {
		if err := s.CommitWithoutWaiting(ctx, p); err != nil {
			return err
		}
		return fn(p)
	})
}

// Migrate applies the goose migrations and River's own migrations. Concurrent callers
// (several processes starting at once) are serialised by goose's lock table (goose_lock:
// a row with a lease its holder renews), not an advisory lock, which any role, a BI login
// included, could hold and so keep every process from starting.
func Migrate(ctx context.Context, url string, log *slog.Logger) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	defer sqlDB.Close()
	if err := migrateGoose(ctx, sqlDB, log); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}

func migrateGoose(ctx context.Context, sqlDB *sql.DB, log *slog.Logger) error {
	migrations, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		return err
	}
	// Tried every 200 ms (goose's default is 5 s, which a process starting beside another
	// would wait for nothing) for goose's 5 minutes.
	locker, err := lock.NewPostgresTableLocker(lock.WithTableLockTimeout(200*time.Millisecond, 1500))
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations, goose.WithLocker(locker))
	if err != nil {
		return fmt.Errorf("goose: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range results {
		log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
	}
	return nil
}

// IsInvalidText reports whether PostgreSQL refused a text value: a NUL character or bytes
// that are not valid UTF-8. Such input comes from clients, so it is their error to fix.
func IsInvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
