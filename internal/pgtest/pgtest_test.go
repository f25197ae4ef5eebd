package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestNewDatabaseIsMigratedAndPrivate(t *testing.T) {
	t.Parallel()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM strategies").Scan(&n); err != nil {
		t.Fatalf("schema missing in clone: %v", err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM river_job").Scan(&n); err != nil {
		t.Fatalf("river schema missing in clone: %v", err)
	}
}
