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

// One watchdog goroutine watches every run: with many runs at once it interrupts only the
// one whose limit passed or whose context ended, a stopped guard never interrupts its
// runtime afterwards, and the watchdog stops when no run is left and starts again with
// the next.
func TestWatchdogSharedByRuns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		reason *RunError
		err    error
	}
	start := func(ctx context.Context, lim limits, code string) chan outcome {
		done := make(chan outcome, 1)
		go func() {
			rt := newRuntime()
			g := watch(ctx, rt, lim)
			_, err := rt.RunString(code)
			done <- outcome{g.stop(), err}
		}()
		return done
	}
	long := limits{wall: time.Hour, mem: 1 << 40}
	timesOut := start(context.Background(), limits{wall: 30 * time.Millisecond, mem: 1 << 40}, "for (;;) {}")
	cancelled := start(ctx, long, "for (;;) {}")
	var quick []chan outcome
	for range 8 {
		quick = append(quick, start(context.Background(), long, "let s = 0; for (let i = 0; i < 200000; i++) s += i; s"))
	}
	for i, c := range quick {
		if o := <-c; o.reason != nil || o.err != nil {
			t.Errorf("run %d: interrupted (%v, %v)", i, o.reason, o.err)
		}
	}
	if o := <-timesOut; o.reason == nil || o.reason.Kind != KindTimeout {
		t.Errorf("the run past its limit: %v (%v), want a timeout", o.reason, o.err)
	}
	cancel()
	if o := <-cancelled; o.reason == nil || o.reason.Kind != KindCancelled {
		t.Errorf("the cancelled run: %v (%v), want cancelled", o.reason, o.err)
	}

	// Stopped, then its context ends and its time passes: nothing reaches the runtime.
	ctx2, cancel2 := context.WithCancel(context.Background())
	rt := newRuntime()
	g := watch(ctx2, rt, limits{wall: 5 * time.Millisecond, mem: 1 << 40})
	if r := g.stop(); r != nil {
		t.Fatalf("stopped at once: %v", r)
	}
	cancel2()
	time.Sleep(5 * watchdogInterval)
	if _, err := rt.RunString("let n = 0; for (let i = 0; i < 1000; i++) n++; n"); err != nil {
		t.Errorf("a stopped guard's runtime was interrupted: %v", err)
	}
	// The watchdog has nothing left to watch (this test's runs are over; others of the
	// package's tests may still run) and a new run is still watched.
	late := start(context.Background(), limits{wall: 20 * time.Millisecond, mem: 1 << 40}, "for (;;) {}")
	if o := <-late; o.reason == nil || o.reason.Kind != KindTimeout {
		t.Errorf("a run after the others: %v (%v), want a timeout", o.reason, o.err)
	}
}
