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
