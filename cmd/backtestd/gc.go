package main

import (
	"math"
	"runtime"
	"runtime/debug"
)

// lateGCHeap is the heap at which `run` starts collecting garbage (see collectLate).
const lateGCHeap = 256 << 20

// collectLate holds the garbage collector back until the heap reaches lateGCHeap, then
// restores Go's pacing (GOGC) for the rest of the process. A run of 100,000 daily bars
// allocates some 40 MB in all and keeps most of it to the end (bars, data columns,
// indicators, the equity curve), so its two or three collections freed almost nothing and
// cost a third of its CPU time: bars and equity points hold a time.Time, whose location is
// a pointer, so the collector scans all of them, and every bar the CSV parser stores while
// a collection marks goes through a write barrier. The first collection, at lateGCHeap,
// turns the default back on (a cleanup on an object nothing holds runs after it), so a run
// whose live heap is larger is paced as before instead of collecting at the limit over and
// over. A GOGC or GOMEMLIMIT in the environment is left alone.
func collectLate(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	pct := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(lateGCHeap)
	runtime.AddCleanup(new([2]*byte), func(pct int) {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(math.MaxInt64)
	}, pct)
}
