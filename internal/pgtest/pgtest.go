// Package pgtest gives tests a fresh PostgreSQL database of their own, cloned from a
// migrated template database. The server is TEST_DATABASE_URL when set, otherwise a
// private cluster under the repository's .data/testpg folder, started on first use and
// shared by all test processes (stop it with `make pg-stop`).
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/db"
	"github.com/backtestd/backtestd/internal/pgcluster"
	"github.com/backtestd/backtestd/internal/store"
)

// NewDatabase creates an empty-but-migrated database for t and returns its URL.
// The database is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	url, drop, err := Create()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return url
}

// Create creates an empty-but-migrated database and returns its URL and the function
// that drops it, for code without a testing.TB (a TestMain, an Example's setup).
func Create() (url string, drop func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := serverURL(ctx)
	if err != nil {
		return "", nil, err
	}
	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("template: %w", err)
	}
	name := "backtestd_test_" + randomSuffix()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	// Concurrent clones of one template can collide briefly; retry.
	for i := 0; ; i++ {
		_, err = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl))
		if err == nil || i == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		return nil
	}
	return withDatabase(admin, name), drop, nil
}

// serverURL returns a URL for the maintenance database of the test server.
func serverURL(ctx context.Context) (string, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	c, err := pgcluster.New(filepath.Join(root, ".data", "testpg"))
	if err != nil {
		return "", err
	}
	c.Fast = true // test data may be lost in a crash; speed matters more
	// Test binaries of several packages start at once: one starts the server.
	unlock, err := flock(filepath.Join(root, ".data", "testpg.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := c.Start(ctx); err != nil {
		return "", err
	}
	return c.URL("postgres"), nil
}

func ensureTemplate(ctx context.Context, admin string) (string, error) {
	name := "backtestd_tmpl_" + migrationsHash()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7346218)"); err != nil {
		return "", err
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(7346218)") //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", building)); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := store.Migrate(ctx, withDatabase(admin, building), quiet); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, name)); err != nil {
		return "", err
	}
	return name, nil
}

// migrationsHash names the template after the schema, so a changed migration gets a
// fresh template instead of a stale one.
func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(db.Migrations, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := db.Migrations.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func withDatabase(u, name string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme == "" {
		// key=value form
		return u + " dbname=" + name
	}
	parsed.Path = "/" + name
	return parsed.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory; set TEST_DATABASE_URL")
		}
		dir = parent
	}
}

func flock(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
