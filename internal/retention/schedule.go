package retention

import (
	"context"
	"time"
)

// Schedule prunes what is older than age (vacuuming after) first after a minute, then every
// period, until ctx ends: the RETENTION setting. Every serving or working process may run
// it; an advisory lock lets one prune at a time, and the others find nothing left.
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

// scheduled is one prune of Schedule, under the advisory lock.
func (s *Service) scheduled(ctx context.Context, age time.Duration) {
	conn, err := s.st.Pool.Acquire(ctx)
	if err != nil {
		s.log.Warn("retention: no database connection", "err", err)
		return
	}
	defer conn.Release()
	got, err := s.st.TryRetentionLock(ctx, conn)
	if err != nil || !got {
		if err != nil {
			s.log.Warn("retention: lock", "err", err)
		}
		return
	}
	defer func() {
		if err := s.st.ReleaseRetentionLock(context.WithoutCancel(ctx), conn); err != nil {
			s.log.Warn("retention: unlock", "err", err)
		}
	}()
	rep, err := s.Prune(ctx, Options{Before: time.Now().Add(-age), Vacuum: true, Pause: 50 * time.Millisecond})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("retention: prune", "err", err, "runs", rep.Tasks, "studies", rep.Studies)
		return
	}
	s.log.Info("retention: pruned", "older_than", age.String(), "runs", rep.Tasks, "studies", rep.Studies)
}
