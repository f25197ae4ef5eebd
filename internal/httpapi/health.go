package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// healthFresh is how long a database check answers /health before the next one: a
// monitor polling every second or a burst of probes costs one check a second at most.
// healthTimeout bounds one check. healthIdle is how long the check's connection stays open
// after its last use.
const (
	healthFresh   = time.Second
	healthTimeout = 2 * time.Second
	healthIdle    = time.Minute
)

// healthCheck answers whether the database can be reached, for /health. It does not
// borrow from the service's pool: heavy reads (charts of long results, exports) may hold
// every pooled connection for seconds, and /health waiting behind them said the service
// was down when it was only busy. It pings on a connection of its own, opened with the
// pool's settings on first use (and again after a failure), kept while /health is asked
// and closed after healthIdle without, so that it costs the database nothing between
// monitors' visits and no backend start per check. Its answer is reused for healthFresh;
// concurrent callers share one check.
type healthCheck struct {
	cfg *pgx.ConnConfig

	mu   sync.Mutex // held during a check, so that callers share it
	at   time.Time  // when err was found; zero: never checked
	err  error
	conn *pgx.Conn   // nil: none open
	idle *time.Timer // closes conn healthIdle after the last check
}

func newHealthCheck(pool *pgxpool.Pool) *healthCheck {
	return &healthCheck{cfg: pool.Config().ConnConfig}
}

// check returns the database's state, at most healthFresh old.
func (h *healthCheck) check(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.at.IsZero() && time.Since(h.at) < healthFresh {
		return h.err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
	defer cancel()
	h.err = h.ping(ctx)
	h.at = time.Now()
	if h.idle == nil {
		h.idle = time.AfterFunc(healthIdle, h.closeIdle)
	} else {
		h.idle.Reset(healthIdle)
	}
	return h.err
}

// ping pings on h.conn, opening it first if need be; a connection that failed is closed,
// so that the next check opens a new one. h.mu is held.
func (h *healthCheck) ping(ctx context.Context) error {
	if h.conn == nil || h.conn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, h.cfg.Copy())
		if err != nil {
			h.conn = nil
			return fmt.Errorf("connect: %w", err)
		}
		h.conn = conn
	}
	if err := h.conn.Ping(ctx); err != nil {
		_ = h.conn.Close(context.WithoutCancel(ctx))
		h.conn = nil
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// closeIdle closes the connection when no check used it for healthIdle.
func (h *healthCheck) closeIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil || time.Since(h.at) < healthIdle {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	_ = h.conn.Close(ctx)
	h.conn = nil
}
