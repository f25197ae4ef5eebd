package jobs

import (
	"context"
	"log/slog"
	"time"
)

// HoldLease is the one lease loop of running work (a backtest, a study batch or fold): it
// renews the lease every fifth of timeout until ctx ends. renew is one statement (on a
// starved machine every round trip counts) and reports whether the lease is still held;
// when it is gone (a reaper took it after this worker's heartbeats stopped reaching the
// database), stop is called with lost, and the work must not store anything more. what
// and attrs name the work in warnings.
func HoldLease(ctx context.Context, log *slog.Logger, timeout time.Duration, renew func(context.Context) (held bool, err error),
	stop context.CancelCauseFunc, lost error, what string, attrs ...any) {
	tick := time.NewTicker(timeout / 5)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c, cancel := context.WithTimeout(ctx, timeout)
		t0 := time.Now()
		held, err := renew(c)
		cancel()
		if d := time.Since(t0); d > timeout/2 {
			log.Warn("slow lease renewal: the database or this process is overloaded", append(attrs, "took", d, "lease_timeout", timeout)...)
		}
		switch {
		case err == nil && !held:
			stop(lost)
			return
		case err != nil && ctx.Err() == nil:
			log.Warn("renew the lease of "+what, append(attrs, "err", err)...)
		}
	}
}
