package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// lateGCHeap is the heap at which `run` and `bias` start collecting garbage (see
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

// studyHeadroom is the garbage `sweep` lets pile up between collections (collectEvery).
const studyHeadroom = 64 << 20

// collectEvery paces `sweep`'s collector by garbage instead of by the live heap: a
// collection each time headroom bytes have been allocated beyond what the last one left
// live (GOGC set to headroom over the live heap after every collection, never below Go's
// 100), unless GOGC or GOMEMLIMIT is set. A study's runs allocate about 160 KB each and
// keep little (the trials' returns), so the 1,000-run study of docs/performance.md
// collects twice or three times, each marking some 30 MB, and reuses its memory. Held back
// to a 256 MB heap as `run` is (collectLate), it collected nothing but touched 180 MB of
// fresh pages: their faults cost the jobs system time, and handing them back when the
// process exits took 8–15 ms of a 16-job study's 160 ms on 16 cores (4–9 ms at 100 MB).
func collectEvery(getenv func(string) string, headroom uint64) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
	// Before the first collection Go's goal is 4 MB times GOGC/100.
	set := int(headroom * 100 / (4 << 20))
	debug.SetGCPercent(set)
	var arm func()
	arm = func() {
		// The cleanup of an object nothing holds runs after the next collection. A GOGC
		// that someone else has set since ends the pacing.
		runtime.AddCleanup(new([2]*byte), func(int) {
			metrics.Read(s)
			if s[1].Value.Uint64() != uint64(set) {
				return
			}
			set = int(max(100, headroom*100/max(s[0].Value.Uint64(), 1<<20)))
			debug.SetGCPercent(set)
			arm()
		}, 0)
	}
	arm()
}
