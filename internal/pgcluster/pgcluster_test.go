package pgcluster_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgcluster"
	"github.com/backtestd/backtestd/internal/store"
)

func TestClusterFromNothingMigratesAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server; not in -short")
	}
	// A short path: the socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "pgc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the server may run as another user
		t.Fatal(err)
	}
	c, err := pgcluster.New(filepath.Join(dir, "pg"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started, err := c.Start(ctx)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	if !started || !c.Running(ctx) {
		t.Fatalf("started=%v running=%v, want both", started, c.Running(ctx))
	}
	if again, err := c.Start(ctx); err != nil || again {
		t.Fatalf("second Start = %v, %v; want false, nil", again, err)
	}
	if err := store.Migrate(ctx, c.URL("postgres"), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM strategy_versions").Scan(&n); err != nil {
		t.Fatalf("migrated schema: %v", err)
	}
	// The default cluster (make run's) is durable; only test clusters are Fast.
	var fsync, syncCommit string
	if err := conn.QueryRow(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &syncCommit); err != nil {
		t.Fatal(err)
	}
	if fsync != "on" || syncCommit != "on" {
		t.Fatalf("fsync %s, synchronous_commit %s; want both on", fsync, syncCommit)
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if c.Running(ctx) {
		t.Fatal("still running after Stop")
	}
}
