package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestHealthApartFromHeavyReads checks the two things that keep /health answering while
// heavy reads run (issue 46): heavy reads beyond ReadConcurrency wait for a slot (and past
// their wait get 503 with Retry-After) while /health and small reads answer; and /health
// checks the database on a connection of its own, so it answers 200 while heavy reads hold
// every connection of the pool (before, its ping waited in the pool's queue and answered
// 503 after 2 s).
func TestHealthApartFromHeavyReads(t *testing.T) {
	t.Parallel()
	e := setupHeavy(t)
	const chart = "/api/results/task_big/chart?chart_type=candlestick&max_points=0"

	// One after the other: the second holds every pooled connection the first reads with.
	t.Run("heavy reads beyond the slots wait, the rest answers", func(t *testing.T) {
		// Memory for four charts, one slot: what refuses the second read is the slot.
		srv := e.serve(t, Config{ReadConcurrency: 1, ReadMemory: 4 * heavyBars * 200, ReadWait: 200 * time.Millisecond})
		status, conn := stall(t, srv, chart) // holds the one slot: its client reads nothing more
		if !strings.Contains(status, "200") {
			t.Fatalf("the stalled read: %s", status)
		}
		code, retry, body := get(t, srv, "/api/results/task_big2/chart?chart_type=candlestick&max_points=0")
		if code != 503 || retry != "5" || !strings.Contains(string(body), "busy with other large reads") {
			t.Errorf("a heavy read while the slot is held: %d (Retry-After %q) %.200s, want 503 after its wait", code, retry, body)
		}
		if code, _, body := get(t, srv, "/health"); code != 200 {
			t.Errorf("/health while the slot is held: %d %.200s", code, body)
		}
		if code, _, body := get(t, srv, "/api/results/task_small/summary"); code != 200 {
			t.Errorf("a small read while the slot is held: %d %.200s", code, body)
		}
		// The stalled client leaves: its slot is freed and the next heavy read (waiting as
		// long as it takes) is served.
		conn.Close()
		slow := e.serve(t, Config{ReadConcurrency: 1, ReadWait: 10 * time.Minute})
		if code, _, body := get(t, slow, "/api/results/task_small/chart?chart_type=candlestick&max_points=0"); code != 200 {
			t.Errorf("a heavy read after: %d %.200s", code, body)
		}
	})

	t.Run("/health does not wait for the pool", func(t *testing.T) {
		srv := e.serve(t, Config{})
		ctx := context.Background()
		var held []*pgxpool.Conn
		for range e.store.Pool.Config().MaxConns {
			c, err := e.store.Pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		if code, _, body := get(t, srv, "/health"); code != 200 {
			t.Errorf("/health with every pooled connection held: %d %.200s, want 200", code, body)
		}
		for _, c := range held {
			c.Release()
		}
	})
}
