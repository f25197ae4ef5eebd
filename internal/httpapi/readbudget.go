package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/backtestd/backtestd/internal/apperr"
)

// DefaultReadMemory is the default budget of the heavy reads (Config.ReadMemory): three
// full-resolution candlestick charts of 300,000 bars at once.
const DefaultReadMemory = 160 << 20

// Heavy reads that find the budget spent wait for their share DefaultReadWait, at most
// maxReadWaiters of them; the rest are told to come back after readRetryAfter. A client
// that takes no part of a heavy answer for DefaultReadStall is cut off, so that it cannot
// hold the answer's share of the budget for as long as it keeps the connection open.
const (
	DefaultReadWait  = 15 * time.Second
	DefaultReadStall = 30 * time.Second
	maxReadWaiters   = 64
	readRetryAfter   = 5 * time.Second
)

// readBudget bounds the memory that the heavy reads (charts, exports, comparisons) hold at
// once. Each read is admitted with its estimate (report.Service's *Cost) before it loads
// anything, so that concurrent reads of long results queue for memory instead of growing
// the process until it is killed; a read larger than the whole budget is refused outright.
//
// Heavy reads are also CPU-bound (encoding and compressing tens of MB each), so at most
// `slots` of them run at once, fewer than the process's CPUs: as many as the memory budget
// admits (two or three charts of 300,000 bars) can take every core of a small machine, and
// the request path (/health, the page's small reads) and the collector would wait behind
// them. A read waits for its slot as for its memory, within the same wait.
type readBudget struct {
	sem     *semaphore.Weighted
	slots   *semaphore.Weighted
	nslots  int64
	total   int64
	wait    time.Duration
	stall   time.Duration
	waiters atomic.Int64
}

// newReadBudget is the budget of cfg's ReadMemory, ReadWait and ReadStall (0: defaults).
func newReadBudget(cfg Config) *readBudget {
	b := &readBudget{total: cfg.ReadMemory, wait: cfg.ReadWait, stall: cfg.ReadStall}
	if b.total <= 0 {
		b.total = DefaultReadMemory
	}
	if b.wait <= 0 {
		b.wait = DefaultReadWait
	}
	if b.stall <= 0 {
		b.stall = DefaultReadStall
	}
	b.sem = semaphore.NewWeighted(b.total)
	b.nslots = int64(cfg.ReadConcurrency)
	if b.nslots <= 0 {
		b.nslots = int64(DefaultReadConcurrency())
	}
	b.slots = semaphore.NewWeighted(b.nslots)
	return b
}

// slottedFrom is the estimate from which a heavy read takes one of the slots: about
// 20,000 bars of candlestick chart. Below it a read is done in milliseconds, and the page's
// eight charts of a daily run should not queue behind one another.
const slottedFrom = 4 << 20

// DefaultReadConcurrency is how many heavy reads run at once by default: one CPU fewer
// than the process may use (GOMAXPROCS), at least one, so that one CPU is always left to
// everything else.
func DefaultReadConcurrency() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// admit takes need bytes of the budget, and a slot for a read of slottedFrom or more, for a
// read of what, waiting up to b.wait for both; release gives them back. A read over the whole budget is a 413; one that waited in vain,
// or found too many waiting, a 503 with Retry-After (set on w).
func (b *readBudget) admit(ctx context.Context, w http.ResponseWriter, need int64, what string) (release func(), err error) {
	if need <= 0 {
		return func() {}, nil
	}
	if need > b.total {
		return nil, &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf(
			"%s needs about %s of memory, more than the %s that large reads may hold at once: a service with READ_MEMORY_MB=%d or more serves it",
			what, mib(need), mib(b.total), (need+(1<<20)-1)>>20)}
	}
	slot := need >= slottedFrom // a short result's read takes milliseconds: no slot
	mem := b.sem.TryAcquire(need)
	if !mem || (slot && !b.slots.TryAcquire(1)) {
		if b.waiters.Add(1) > maxReadWaiters {
			b.waiters.Add(-1)
			if mem {
				b.sem.Release(need)
			}
			return nil, b.busy(w)
		}
		ctx, cancel := context.WithTimeout(ctx, b.wait)
		var err error
		if !mem {
			err = b.sem.Acquire(ctx, need)
			mem = err == nil
		}
		if err == nil && slot {
			err = b.slots.Acquire(ctx, 1)
		}
		cancel()
		b.waiters.Add(-1)
		if err != nil {
			if mem {
				b.sem.Release(need)
			}
			return nil, b.busy(w)
		}
	}
	return sync.OnceFunc(func() {
		if slot {
			b.slots.Release(1)
		}
		b.sem.Release(need)
	}), nil
}

// guard returns w with a write deadline of b.stall renewed at every write of the answer,
// and a function that clears it: the server has no write timeout, so a client that reads,
// however slowly, gets all of a long answer, but one that stops reading is cut off and the
// read's share of the budget freed. The deadline must be cleared before the connection
// serves its next request.
func (b *readBudget) guard(w http.ResponseWriter) (http.ResponseWriter, func()) {
	rc := http.NewResponseController(w)
	return stallWriter{ResponseWriter: w, rc: rc, stall: b.stall}, func() { _ = rc.SetWriteDeadline(time.Time{}) }
}

// stallWriter renews the connection's write deadline before each write.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

func (s stallWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall)) // not supported: no deadline, as before
	return s.ResponseWriter.Write(p)
}

func (s stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// busy is the 503 of a read that found no room in the budget.
func (b *readBudget) busy(w http.ResponseWriter) error {
	secs := int(readRetryAfter / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return &apperr.Error{Kind: apperr.KindUnavailable, Detail: fmt.Sprintf(
		"The server is busy with other large reads (charts, exports or comparisons of long results): retry in %d seconds", secs)}
}

// mib writes n bytes in MiB, at least 1.
func mib(n int64) string { return fmt.Sprintf("%d MiB", max(1, (n+(1<<20)-1)>>20)) }
