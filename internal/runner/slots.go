package runner

import (
	"context"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/fairshare"
)

// slots bounds how many runs compute at once in a process (a burst runs a few at a time,
// each finishing sooner, and the database keeps time for the API's reads), and decides
// who goes next: a freed place goes to the waiter whose owner holds the fewest places
// now, then to a single backtest before a study job, then to the first come. So another
// user's backtest does not queue behind a study's jobs, and without accounts (one owner)
// a single backtest still goes before the study's waiting jobs.
//
// While no place has been handed on for hogAfter (long runs hold them all), the first
// waiter in that order may go ahead on an extra place, but no more runs than there are
// places: a flood of short runs slowed by one another must not turn into all of them at
// once. A nil *slots is unlimited.
type slots struct {
	n       int // places, and as many extra ones
	hogWait time.Duration

	mu       sync.Mutex
	used     int // places held
	extra    int // extra places held
	held     map[string]int
	queue    []*slotWaiter
	seq      uint64
	releases uint64 // places handed on so far
}

// hogAfter is how long waiters wait without any place handed on before one goes ahead on
// an extra place.
const hogAfter = 250 * time.Millisecond

type slotWaiter struct {
	owner   string
	kind    fairshare.Kind
	seq     uint64
	granted chan struct{} // closed when the waiter has its place
	extra   bool          // the place is an extra one; set before granted is closed
}

// newSlots returns n places; nil (no limit) when n <= 0.
func newSlots(n int) *slots {
	if n <= 0 {
		return nil
	}
	return &slots{n: n, hogWait: hogAfter, held: map[string]int{}}
}

// acquire waits for a place for a run of kind for owner ("" for nobody). It returns the
// function that gives the place back after the run (once; later calls do nothing), and
// false when ctx ended first.
func (s *slots) acquire(ctx context.Context, owner string, kind fairshare.Kind) (release func(), ok bool) {
	if s == nil {
		return func() {}, ctx.Err() == nil
	}
	if ctx.Err() != nil {
		return nil, false
	}
	s.mu.Lock()
	if s.used < s.n && len(s.queue) == 0 {
		s.used++
		s.held[owner]++
		s.mu.Unlock()
		return s.releaser(owner, false), true
	}
	s.seq++
	w := &slotWaiter{owner: owner, kind: kind, seq: s.seq, granted: make(chan struct{})}
	s.queue = append(s.queue, w)
	seen := s.releases
	s.mu.Unlock()

	t := time.NewTimer(s.hogWait)
	defer t.Stop()
	for {
		select {
		case <-w.granted:
			return s.releaser(owner, w.extra), true
		case <-ctx.Done():
			s.mu.Lock()
			select {
			case <-w.granted: // granted meanwhile: hand it on
				s.mu.Unlock()
				s.releaser(owner, w.extra)()
				return nil, false
			default:
			}
			s.remove(w)
			s.mu.Unlock()
			return nil, false
		case <-t.C:
			seen = s.hogged(seen)
			t.Reset(s.hogWait)
		}
	}
}

// hogged gives the first waiter an extra place when no place was handed on since seen (a
// count of releases) and an extra place is free. It returns the count now.
func (s *slots) hogged(seen uint64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.releases == seen && s.extra < s.n && len(s.queue) > 0 {
		s.grant(s.next(), true)
	}
	return s.releases
}

// waiting is how many runs wait for a place.
func (s *slots) waiting() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *slots) releaser(owner string, extra bool) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.held[owner]--; s.held[owner] <= 0 {
				delete(s.held, owner)
			}
			if extra {
				s.extra--
				return
			}
			s.used--
			s.releases++
			if len(s.queue) > 0 {
				s.grant(s.next(), false)
			}
		})
	}
}

// next is the waiter a place goes to (s.mu held, queue not empty).
func (s *slots) next() *slotWaiter {
	best := s.queue[0]
	for _, w := range s.queue[1:] {
		if s.before(w, best) {
			best = w
		}
	}
	return best
}

// before is the order of the queue: fewest places held by the owner, then kind, then
// arrival.
func (s *slots) before(a, b *slotWaiter) bool {
	if ha, hb := s.held[a.owner], s.held[b.owner]; ha != hb {
		return ha < hb
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// grant gives w a place (s.mu held).
func (s *slots) grant(w *slotWaiter, extra bool) {
	s.remove(w)
	if extra {
		s.extra++
	} else {
		s.used++
	}
	s.held[w.owner]++
	w.extra = extra
	close(w.granted)
}

func (s *slots) remove(w *slotWaiter) {
	for i, q := range s.queue {
		if q == w {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return
		}
	}
}
