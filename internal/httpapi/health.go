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
// healthTimeout bounds one check.
const (
	healthFresh   = time.Second
	healthTimeout = 2 * time.Second
)

// healthCheck answers whether the database can be reached, for /health. It does not
// borrow from the service's pool: heavy reads (charts of long results, exports) may hold
// every pooled connection for seconds, and /health waiting behind them said the service
// was down when it was only busy (2.4 s seen during six chart reads). Each check opens a
// connection of its own with the pool's settings, pings and closes it, and its answer is
// reused for healthFresh; concurrent callers share one check.
type healthCheck struct {
	cfg *pgx.ConnConfig

	mu  sync.Mutex // held during a check, so that callers share it
	at  time.Time  // when err was found; zero: never checked
	err error
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
	h.err = ping(ctx, h.cfg)
	h.at = time.Now()
	return h.err
}

func ping(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}
