package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// A Pipeline is one transaction: what it queued and what it sent commit together, in
// fewer round trips than statements, and a failure anywhere (a queued statement, a sent
// one, the function) leaves nothing written.
func TestPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var c store.Counter
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 2, &c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Pool.Exec(ctx, `CREATE TABLE pl (k int PRIMARY KEY, v text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	rows := func() string {
		t.Helper()
		var s string
		if err := st.Pool.QueryRow(ctx, `SELECT coalesce(string_agg(k || '=' || v, ',' ORDER BY k), '') FROM pl`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("commits everything in few round trips", func(t *testing.T) {
		before := c.Snapshot()
		err := st.WithPipeline(ctx, func(p *store.Pipeline) error {
			if _, err := p.Exec(ctx, `INSERT INTO pl VALUES (1, 'a')`); err != nil {
				return err
			}
			var n int
			if err := p.QueryRow(ctx, `SELECT count(*) FROM pl`).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				t.Errorf("the queued insert is not seen by the next query: count %d", n)
			}
			var v string
			if err := p.QueryRow(ctx, `SELECT v FROM pl WHERE k = 99`).Scan(&v); !errors.Is(err, pgx.ErrNoRows) {
				t.Errorf("no row: %v", err)
			}
			if _, err := p.CopyFrom(ctx, pgx.Identifier{"pl"}, []string{"k", "v"}, pgx.CopyFromRows([][]any{{2, "b"}})); err != nil {
				return err
			}
			_, err := p.Exec(ctx, `INSERT INTO pl VALUES (3, 'c')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// begin+insert+count, the empty read, the COPY, insert+commit.
		if got := c.Snapshot().Since(before); got.RoundTrips != 4 || got.Commits != 1 {
			t.Errorf("%s", got)
		}
		if got := rows(); got != "1=a,2=b,3=c" {
			t.Errorf("rows = %q", got)
		}
	})

	t.Run("a queued statement's failure rolls back and names it", func(t *testing.T) {
		err := st.WithPipeline(ctx, func(p *store.Pipeline) error {
			if _, err := p.Exec(ctx, `INSERT INTO pl VALUES (4, 'd')`); err != nil {
				return err
			}
			_, err := p.Exec(ctx, "-- name: Duplicate :exec\nINSERT INTO pl VALUES (1, 'again')")
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "Duplicate") || !store.IsUniqueViolation(err) {
			t.Fatalf("err = %v, want the duplicate key, named", err)
		}
		if got := rows(); got != "1=a,2=b,3=c" {
			t.Errorf("rows = %q", got)
		}
	})

	t.Run("a failure before a query rolls back", func(t *testing.T) {
		err := st.WithPipeline(ctx, func(p *store.Pipeline) error {
			if _, err := p.Exec(ctx, `INSERT INTO pl VALUES (5, 'e')`); err != nil {
				return err
			}
			if _, err := p.Exec(ctx, `INSERT INTO pl VALUES (1, 'again')`); err != nil {
				return err
			}
			var n int
			return p.QueryRow(ctx, `SELECT count(*) FROM pl`).Scan(&n)
		})
		if !store.IsUniqueViolation(err) {
			t.Fatalf("err = %v", err)
		}
		if got := rows(); got != "1=a,2=b,3=c" {
			t.Errorf("rows = %q", got)
		}
	})

	t.Run("the function's error rolls back what was sent", func(t *testing.T) {
		boom := errors.New("boom")
		err := st.WithPipeline(ctx, func(p *store.Pipeline) error {
			var n int
			if err := p.QueryRow(ctx, `INSERT INTO pl VALUES (6, 'f') RETURNING k`).Scan(&n); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		if got := rows(); got != "1=a,2=b,3=c" {
			t.Errorf("rows = %q", got)
		}
		// The connection went back to the pool usable, outside any transaction.
		for range 3 {
			if _, err := st.Pool.Exec(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("no wait", func(t *testing.T) {
		before := c.Snapshot()
		err := st.WithTxNoWait(ctx, func(db store.DBTX) error {
			_, err := db.Exec(ctx, `INSERT INTO pl VALUES (7, 'g')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Snapshot().Since(before); got.RoundTrips != 1 || got.Commits != 1 {
			t.Errorf("%s", got)
		}
		if got := rows(); got != "1=a,2=b,3=c,7=g" {
			t.Errorf("rows = %q", got)
		}
	})
}
