package retention

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Schedule prunes what is older than age (vacuuming after) first after a minute, then every
// period, until ctx ends: the RETENTION setting. Every serving or working process may run
// it; a lock lets one prune at a time, and the others find nothing left.
func (s *Service) Schedule(ctx context.Context, age, period time.Duration) {
	first := time.NewTimer(min(time.Minute, period))
	defer first.Stop()
	select {
	case <-ctx.Done():
		return
	case <-first.C:
	}
	s.scheduled(ctx, age)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.scheduled(ctx, age)
		}
	}
}

// scheduled is one prune of Schedule, under the retention lock: a table lock taken in a
// transaction that stays open on one connection for the prune (which runs on others) and
// is rolled back after it. The transaction writes nothing and so has no id: it does not
// keep VACUUM from removing what the prune deletes. Another process holding the lock is
// not an error: it prunes the same runs.
func (s *Service) scheduled(ctx context.Context, age time.Duration) {
	tx, err := s.st.Pool.Begin(ctx)
	if err != nil {
		s.log.Warn("retention: no database connection", "err", err)
		return
	}
	defer func() {
		if err := tx.Rollback(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			s.log.Warn("retention: unlock", "err", err)
		}
	}()
	if err := s.st.TryRetentionLock(ctx, tx); err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" { // lock_not_available
			s.log.Warn("retention: lock", "err", err)
		}
		return
	}
	rep, err := s.Prune(ctx, Options{Before: time.Now().Add(-age), Vacuum: true, Pause: 50 * time.Millisecond})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("retention: prune", "err", err, "runs", rep.Tasks, "studies", rep.Studies)
		return
	}
	s.log.Info("retention: pruned", "older_than", age.String(), "runs", rep.Tasks, "studies", rep.Studies)
}
