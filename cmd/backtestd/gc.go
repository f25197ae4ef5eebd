package main

import (
	"math"
	"runtime"
	"runtime/debug"
)

// lateGCHeap is the heap at which `run`, `bias` and `sweep` start collecting garbage (see
// collectLate).
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

// serviceGCPercent is the service's GOGC: the heap may grow to five times what is live
// between collections instead of twice.
const serviceGCPercent = 400

// serveMemoryLimit is serve's GOMEMLIMIT: near it the collector runs whatever
// serviceGCPercent allows, and returns freed memory to the system. Without it, heavy reads
// holding their whole budget (READ_MEMORY_MB, 160 MiB by default) let the heap grow to five
// times that before a collection: 8 full-resolution charts of a 300,000-bar result took the
// process past 1 GB. (A worker serves no reads; its heap follows the runs it stores.)
const serveMemoryLimit = 320 << 20

// collectLess sets serviceGCPercent for the long-running commands (serve, worker), and with
// limit serveMemoryLimit, unless GOGC or GOMEMLIMIT is set. Their live heap is small (tens of MB) while results stream
// through them (about 6 MB allocated per completed backtest), so at Go's default the
// collector ran every few runs and took a quarter of the service's CPU during a flood of
// 1,000 backtests; at 400 that CPU fell by about a quarter (14 → 10 CPU-seconds), for a heap
// of at most a few hundred MB.
func collectLess(getenv func(string) string, limit bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(serviceGCPercent)
	if limit {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
}
