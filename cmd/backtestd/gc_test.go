package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func gcSettings() (gogc, limit uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// TestCollectLate checks that the collector is off under a memory limit until the first
// collection, which restores the previous pacing, and that GOGC in the environment wins.
// Not parallel: it changes the process's collector.
func TestCollectLate(t *testing.T) {
	before, _ := gcSettings()
	collectLate(func(k string) string { return map[string]string{"GOGC": "100"}[k] })
	if g, l := gcSettings(); g != before || l != math.MaxInt64 {
		t.Fatalf("with GOGC set: gogc %d, limit %d; want them untouched", g, l)
	}
	collectLate(func(string) string { return "" })
	if g, l := gcSettings(); g != math.MaxUint64 || l != lateGCHeap { // off reads as the largest value
		t.Fatalf("gogc %d, limit %d; want off and %d", g, l, lateGCHeap)
	}
	runtime.GC() // as the limit would
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, l := gcSettings()
		if g == before && l == math.MaxInt64 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: gogc %d, limit %d; want %d and no limit", g, l, before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestCollectLess checks the service's collector setting and that GOGC or GOMEMLIMIT in the
// environment wins. Not parallel: it changes the process's collector.
func TestCollectLess(t *testing.T) {
	before, _ := gcSettings()
	defer debug.SetGCPercent(int(before))
	for _, env := range []map[string]string{{"GOGC": "100"}, {"GOMEMLIMIT": "1GiB"}} {
		collectLess(func(k string) string { return env[k] }, true)
		if g, _ := gcSettings(); g != before {
			t.Fatalf("with %v: gogc %d, want it untouched (%d)", env, g, before)
		}
	}
	collectLess(func(string) string { return "" }, false) // worker
	if g, l := gcSettings(); g != serviceGCPercent || l != math.MaxInt64 {
		t.Fatalf("worker: gogc %d, limit %d; want %d and none", g, l, serviceGCPercent)
	}
	collectLess(func(string) string { return "" }, true) // serve
	defer debug.SetMemoryLimit(math.MaxInt64)
	if g, l := gcSettings(); g != serviceGCPercent || l != serveMemoryLimit {
		t.Fatalf("serve: gogc %d, limit %d; want %d and %d", g, l, serviceGCPercent, serveMemoryLimit)
	}
}

// TestCollectEvery checks sweep's pacing: GOGC is headroom over Go's first 4 MB goal
// before the first collection, headroom over the live heap (never below 100) after each,
// GOGC or GOMEMLIMIT in the environment wins, and a GOGC set by someone else ends it. Not
// parallel: it changes the process's collector.
func TestCollectEvery(t *testing.T) {
	before, _ := gcSettings()
	defer debug.SetGCPercent(int(before))
	for _, env := range []map[string]string{{"GOGC": "100"}, {"GOMEMLIMIT": "1GiB"}} {
		collectEvery(func(k string) string { return env[k] }, 1<<30)
		if g, _ := gcSettings(); g != before {
			t.Fatalf("with %v: gogc %d, want it untouched (%d)", env, g, before)
		}
	}
	// waitFor collects until GOGC reads want: the pacing runs after a collection, on the
	// runtime's cleanup goroutine.
	waitFor := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			time.Sleep(time.Millisecond)
			if g, _ := gcSettings(); g == want {
				return
			}
			if time.Now().After(deadline) {
				g, _ := gcSettings()
				t.Fatalf("after collections: gogc %d, want %d", g, want)
			}
		}
	}
	// With 1 MB of headroom the live heap (a test binary's: more than 1 MB) sets 100.
	collectEvery(func(string) string { return "" }, 1<<20)
	if g, _ := gcSettings(); g != 25 {
		t.Fatalf("before a collection: gogc %d, want 25 (1 MB over 4 MB)", g)
	}
	waitFor(100)
	// 4 GB of headroom: far above 100 once paced by the live heap.
	debug.SetGCPercent(7) // someone else's: the 1 MB pacing stops
	collectEvery(func(string) string { return "" }, 4<<30)
	if g, _ := gcSettings(); g != 102400 {
		t.Fatalf("before a collection: gogc %d, want 102400", g)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(time.Millisecond)
		g, _ := gcSettings()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if g != 102400 && g > 100 && g >= (4<<30)*100/(4*s[0].Value.Uint64()) {
			break // headroom over a live heap of a few MB
		}
		if time.Now().After(deadline) {
			t.Fatalf("after collections: gogc %d with a live heap of %d bytes", g, s[0].Value.Uint64())
		}
	}
	debug.SetGCPercent(150) // someone else's again: the pacing stops and leaves it
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if g, _ := gcSettings(); g != 150 {
		t.Fatalf("after GOGC 150 was set: gogc %d, want it kept", g)
	}
}
