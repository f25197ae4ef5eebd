package runner

import (
	"context"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/fairshare"
)

type who struct {
	owner string
	kind  fairshare.Kind
	name  string
}

// queue starts a waiter for w and returns once it waits; its name is sent on got when it
// has a place, with the function that gives the place back.
func queue(t *testing.T, s *slots, ctx context.Context, w who, got chan<- granted) {
	t.Helper()
	before := s.waiting()
	go func() {
		release, ok := s.acquire(ctx, w.owner, w.kind)
		got <- granted{w.name, release, ok}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.waiting() == before {
		if time.Now().After(deadline) {
			t.Fatalf("%s does not wait", w.name)
		}
		time.Sleep(time.Millisecond)
	}
}

type granted struct {
	name    string
	release func()
	ok      bool
}

// TestSlotsOrder: a freed place goes to the waiter whose owner holds the fewest places,
// then to a single backtest before a study job, then to the first come.
func TestSlotsOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		places  int
		holders []who // hold every place; released one by one, in order
		waiters []who // queue in this order
		want    []string
	}{
		{"first come among equals", 2,
			[]who{{"x", fairshare.Backtest, ""}, {"x", fairshare.Backtest, ""}},
			[]who{{"b", fairshare.Backtest, "b1"}, {"c", fairshare.Backtest, "c1"}},
			[]string{"b1", "c1"}},
		{"without accounts a backtest goes before the study's jobs", 1,
			[]who{{"", fairshare.Study, ""}},
			[]who{{"", fairshare.Study, "s1"}, {"", fairshare.Study, "s2"}, {"", fairshare.Backtest, "b1"}},
			[]string{"b1"}},
		{"the owner holding fewer places first", 2,
			[]who{{"a", fairshare.Study, ""}, {"a", fairshare.Study, ""}},
			[]who{{"a", fairshare.Study, "a3"}, {"a", fairshare.Backtest, "a4"}, {"b", fairshare.Backtest, "b1"}},
			[]string{"b1", "a4"}},
		{"another user's study before a busy user's backtest", 2,
			[]who{{"a", fairshare.Backtest, ""}, {"a", fairshare.Backtest, ""}},
			[]who{{"a", fairshare.Backtest, "a1"}, {"b", fairshare.Study, "b1"}},
			[]string{"b1", "a1"}},
		{"a user's study jobs take turns with another's backtests", 3,
			[]who{{"a", fairshare.Study, ""}, {"a", fairshare.Study, ""}, {"b", fairshare.Backtest, ""}},
			[]who{{"a", fairshare.Study, "a1"}, {"b", fairshare.Backtest, "b1"}, {"b", fairshare.Backtest, "b2"}},
			// a holds 1 after the first release, b 1: b's backtest goes; then a 0, b 2: a's.
			[]string{"b1", "a1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSlots(tt.places)
			s.hogWait = time.Hour // no extra places here
			ctx := context.Background()
			var held []func()
			for _, h := range tt.holders {
				release, ok := s.acquire(ctx, h.owner, h.kind)
				if !ok {
					t.Fatal("a free place was refused")
				}
				held = append(held, release)
			}
			got := make(chan granted, len(tt.waiters))
			for _, w := range tt.waiters {
				queue(t, s, ctx, w, got)
			}
			for i, want := range tt.want {
				held[i]()
				select {
				case g := <-got:
					if g.name != want {
						t.Fatalf("place %d went to %s, want %s", i+1, g.name, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("place %d went to nobody, want %s", i+1, want)
				}
			}
			if n := s.waiting(); n != len(tt.waiters)-len(tt.want) {
				t.Errorf("%d waiting, want %d", n, len(tt.waiters)-len(tt.want))
			}
		})
	}
}

// TestSlotsHogged: while the places are held without any handed on, the first waiter in
// the queue's order goes ahead on an extra place, but no more runs than there are places;
// a waiter whose context ends leaves the queue.
func TestSlotsHogged(t *testing.T) {
	t.Parallel()
	s := newSlots(1)
	s.hogWait = time.Hour // hogged is called below instead
	ctx := context.Background()
	hog, _ := s.acquire(ctx, "a", fairshare.Study)
	got := make(chan granted, 3)
	queue(t, s, ctx, who{"a", fairshare.Study, "a1"}, got)
	cctx, cancel := context.WithCancel(ctx)
	queue(t, s, cctx, who{"c", fairshare.Study, "c1"}, got)
	queue(t, s, ctx, who{"b", fairshare.Backtest, "b1"}, got)
	seen := s.hogged(s.releases)
	b1 := <-got
	if b1.name != "b1" || !b1.ok {
		t.Fatalf("the extra place went to %s, want b1 (its owner holds none, and it is a backtest)", b1.name)
	}
	s.hogged(seen)
	if n := s.waiting(); n != 2 {
		t.Fatalf("%d waiting, want 2: one extra place for one place", n)
	}
	cancel()
	if c1 := <-got; c1.name != "c1" || c1.ok {
		t.Fatalf("cancelled waiter: %+v, want c1 refused", c1)
	}
	hog()
	a1 := <-got
	if a1.name != "a1" || !a1.ok {
		t.Fatalf("the freed place went to %+v, want a1", a1)
	}
	a1.release()
	a1.release() // a second call does nothing
	if r, ok := s.acquire(ctx, "z", fairshare.Study); !ok {
		t.Fatal("no place after every run gave its own back")
	} else {
		r()
	}
	s.mu.Lock()
	if s.used != 0 || s.extra != 1 || len(s.held) != 1 || s.held["b"] != 1 {
		t.Errorf("used %d, extra %d, held %v: want only b1's extra place", s.used, s.extra, s.held)
	}
	s.mu.Unlock()
	b1.release()
}

// TestSlotsHogTimer: a waiter behind a run that holds the only place goes ahead on an
// extra place after about hogAfter, without the place being handed on.
func TestSlotsHogTimer(t *testing.T) {
	t.Parallel()
	s := newSlots(1)
	s.hogWait = 10 * time.Millisecond
	ctx := context.Background()
	hog, _ := s.acquire(ctx, "a", fairshare.Study)
	defer hog()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	release, ok := s.acquire(c, "a", fairshare.Study)
	if !ok {
		t.Fatal("the waiter never went ahead of the run holding the place")
	}
	release()
}
