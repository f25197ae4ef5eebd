package jsrt

import (
	"context"
	"testing"
	"time"
)

// A load's limit is on computing: it needs both the wall time and the process's CPU time
// to pass it, and gives up waiting for the CPU time at its wall-time cap.
func TestLoadGuardLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		lim     limits
		atLeast time.Duration // the interruption cannot come sooner
	}{
		{"CPU time passes the limit", limits{wall: 20 * time.Millisecond, cpu: 200 * time.Millisecond, wallCap: time.Hour, mem: 1 << 30}, 100 * time.Millisecond},
		{"the wall-time cap", limits{wall: 20 * time.Millisecond, cpu: time.Hour, wallCap: 300 * time.Millisecond, mem: 1 << 30}, 300 * time.Millisecond},
		{"wall time alone (a run's limit)", limits{wall: 50 * time.Millisecond, mem: 1 << 30}, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := newRuntime()
			start := time.Now() // before the guard's own clock starts, or a slow step between shortens what we see
			g := watch(context.Background(), rt, tt.lim)
			_, err := rt.RunString("for (;;) {}")
			took := time.Since(start)
			reason := g.stop()
			if reason == nil || reason.Kind != "timeout" || g.interrupted(err) == nil {
				t.Fatalf("interrupted with %v (%v), want a timeout", reason, err)
			}
			if took < tt.atLeast {
				t.Errorf("interrupted after %s, before %s", took, tt.atLeast)
			}
		})
	}
}
