package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h, err := hashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q is not an argon2id PHC string with the expected settings", h)
	}
	if h2, _ := hashPassword("correct horse"); h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tt := range []struct {
		encoded, password string
		want              bool
	}{
		{h, "correct horse", true},
		{h, "correct horsE", false},
		{h, "", false},
		{"", "correct horse", false},
		{"$argon2id$v=19$m=0,t=2,p=1$AAAA$AAAA", "x", false}, // no memory
		{strings.Replace(h, "argon2id", "argon2i", 1), "correct horse", false}, // another algorithm
		{"$argon2id$v=19$m=99999999,t=2,p=1$AAAA$AAAA", "x", false},            // a hash that would exhaust memory
	} {
		if got := passwordMatches(tt.encoded, tt.password); got != tt.want {
			t.Errorf("passwordMatches(%q, %q) = %v, want %v", tt.encoded, tt.password, got, tt.want)
		}
	}
}

func TestRuleCheck(t *testing.T) {
	t.Parallel()
	admin := &Identity{User: "root", Role: RoleAdmin}
	researcher := &Identity{User: "alice", Role: RoleResearcher}
	viewer := &Identity{User: "vic", Role: RoleViewer}
	readOnly := &Identity{User: "root", Role: RoleAdmin, ReadOnly: true}
	metrics := &Identity{User: "vic", Role: RoleViewer, Metrics: true}
	for _, tt := range []struct {
		rule  Rule
		id    *Identity
		write bool
		want  apperr.Kind // KindInternal: allowed
	}{
		{Public, nil, true, apperr.KindInternal},
		{Signed, nil, false, apperr.KindUnauthenticated},
		{Signed, viewer, false, apperr.KindInternal},
		{Self, viewer, true, apperr.KindInternal},
		{Create, viewer, true, apperr.KindForbidden},
		{Create, researcher, true, apperr.KindInternal},
		{Owner, researcher, true, apperr.KindInternal},
		{Admin, researcher, false, apperr.KindForbidden},
		{Admin, admin, true, apperr.KindInternal},
		{Admin, readOnly, false, apperr.KindInternal},
		{Admin, readOnly, true, apperr.KindForbidden},
		{Signed, readOnly, true, apperr.KindForbidden},
		{Metrics, nil, false, apperr.KindUnauthenticated},
		{Metrics, viewer, false, apperr.KindForbidden},
		{Metrics, researcher, false, apperr.KindForbidden},
		{Metrics, admin, false, apperr.KindInternal},
		{Metrics, readOnly, false, apperr.KindInternal},
		{Metrics, metrics, false, apperr.KindInternal},
		{Signed, metrics, false, apperr.KindForbidden},
		{Public, metrics, false, apperr.KindInternal},
		{Self, metrics, true, apperr.KindForbidden},
	} {
		err := tt.rule.Check(tt.id, tt.write)
		got := apperr.KindInternal
		if e, ok := apperr.As(err); ok {
			got = e.Kind
		}
		if got != tt.want {
			t.Errorf("%s.Check(%+v, write=%v) = %v, want kind %v", tt.rule, tt.id, tt.write, err, tt.want)
		}
	}
}

func TestMayModify(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id    Identity
		owner string
		ok    bool
	}{
		{Identity{User: "root", Role: RoleAdmin}, "alice", true},
		{Identity{User: "root", Role: RoleAdmin}, "", true},
		{Identity{User: "alice", Role: RoleResearcher}, "alice", true},
		{Identity{User: "alice", Role: RoleResearcher}, "bob", false},
		{Identity{User: "alice", Role: RoleResearcher}, "", false},
		{Identity{User: "vic", Role: RoleViewer}, "vic", false},
		{Local(), "", true},
	} {
		if err := MayModify(tt.id, "strategy str_1", tt.owner); (err == nil) != tt.ok {
			t.Errorf("MayModify(%+v, %q) = %v, want ok=%v", tt.id, tt.owner, err, tt.ok)
		}
	}
}

func TestParseLifetime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, true},
		{"90d", 90 * 24 * time.Hour, true},
		{"12h", 12 * time.Hour, true},
		{"0d", 0, false},
		{"-1h", 0, false},
		{"soon", 0, false},
		{"99999999d", 0, false},
	} {
		got, err := ParseLifetime(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseLifetime(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestLoginLimiter: the buckets per address-and-name, per address and global, as one table
// of attempts in order on a fixed clock (each row's wait > 0 means refused).
func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type attempt struct {
		addr, name string
		at         time.Duration // after t0
		n          int           // attempts (1 if 0)
		refused    bool          // the last of them is refused
		audit      bool          // ... and its refusal audited
		succeed    bool          // give it back and remember the pair as a success
	}
	for _, tt := range []struct {
		name     string
		attempts []attempt
	}{
		{"a pair is throttled after its burst, the name elsewhere is not", []attempt{
			{addr: "10.0.0.1", name: "jack", n: pairBurst},
			{addr: "10.0.0.1", name: "jack", refused: true, audit: true},
			{addr: "10.0.0.1", name: "jack", at: time.Second, refused: true}, // audited once a window
			{addr: "10.0.0.2", name: "jack"},                                 // another address: jack is not locked out
			{addr: "10.0.0.1", name: "alice"},                                // the address is not (yet) throttled for other names
			{addr: "10.0.0.1", name: "jack", at: pairEvery},                  // one more a period later
			{addr: "10.0.0.1", name: "jack", at: pairEvery, refused: true},
			{addr: "10.0.0.1", name: "jack", at: pairEvery + loginAuditEvery + time.Second, n: 1}, // refilled
		}},
		{"an address spraying names is throttled after its burst", []attempt{
			{addr: "10.0.0.3", name: "u", n: 1},
			{addr: "10.0.0.3", name: "v", n: pairBurst},
			{addr: "10.0.0.3", name: "w", n: pairBurst},
			{addr: "10.0.0.3", name: "x", n: addrBurst - 2*pairBurst - 1},
			{addr: "10.0.0.3", name: "y", refused: true, audit: true},
			{addr: "10.0.0.4", name: "y"}, // another address is not
			{addr: "10.0.0.3", name: "y", at: addrEvery},
		}},
		{"a success gives its attempt back", []attempt{
			{addr: "10.0.0.5", name: "jack", n: pairBurst - 1},
			{addr: "10.0.0.5", name: "jack", succeed: true},
			{addr: "10.0.0.5", name: "jack"},
			{addr: "10.0.0.5", name: "jack", refused: true, audit: true},
		}},
		{"an IPv6 client is one /64", []attempt{
			{addr: "2001:db8::1", name: "jack", n: pairBurst},
			{addr: "2001:db8::ffff:2", name: "jack", refused: true, audit: true},
			{addr: "2001:db8:0:1::1", name: "jack"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLoginLimiter()
			for i, a := range tt.attempts {
				n := max(a.n, 1)
				for j := range n {
					c, wait, audit := l.take(a.addr, a.name, t0.Add(a.at))
					last := j == n-1
					want := last && a.refused
					if (wait > 0) != want {
						t.Fatalf("row %d (%+v), attempt %d of %d: wait %v, want refused %v", i, a, j+1, n, wait, want)
					}
					if last && audit != a.audit {
						t.Errorf("row %d (%+v): audit %v, want %v", i, a, audit, a.audit)
					}
					if wait > 0 && len(c.buckets) != 0 {
						t.Errorf("row %d: a refused attempt was charged", i)
					}
					if a.succeed {
						l.giveBack(c)
						l.succeeded(a.addr, a.name, t0.Add(a.at))
					}
				}
			}
		})
	}
}

// TestLoginLimiterGlobalCeiling: many addresses guessing one name, each within its own
// limits, reach the global ceiling; past it a new address waits too, but an address that
// signed in as that user before does not, and the ceiling refills at its pace.
func TestLoginLimiterGlobalCeiling(t *testing.T) {
	t.Parallel()
	l := newLoginLimiter()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, _, _ := l.take("192.0.2.1", "jack", t0)
	l.giveBack(c)
	l.succeeded("192.0.2.1", "jack", t0) // jack's own address
	for i := range globalBurst {
		if _, wait, _ := l.take(fmt.Sprintf("10.1.%d.%d", i>>8, i&255), "jack", t0); wait != 0 {
			t.Fatalf("bot %d of the global burst refused", i+1)
		}
	}
	_, wait, audit := l.take("10.2.0.1", "jack", t0)
	if wait <= 0 || wait > globalEvery || !audit {
		t.Errorf("a new address past the global ceiling: wait %v, audit %v; want up to %v, audited", wait, audit, globalEvery)
	}
	if _, wait, _ := l.take("10.2.0.2", "alice", t0); wait <= 0 {
		t.Error("past the global ceiling another name from a new address is not refused")
	}
	if _, wait, _ := l.take("192.0.2.1", "jack", t0); wait != 0 {
		t.Errorf("jack from the address he signed in from is refused past the ceiling: wait %v", wait)
	}
	if _, wait, _ := l.take("10.2.0.1", "jack", t0.Add(globalEvery)); wait != 0 {
		t.Errorf("one period later the ceiling has no attempt: wait %v", wait)
	}
	// Known pairs expire.
	if _, wait, _ := l.take("10.2.0.3", "jack", t0.Add(knownFor)); wait != 0 {
		t.Fatalf("refused after the ceiling refilled: %v", wait)
	}
	l.global.tokens = 0
	if _, wait, _ := l.take("192.0.2.1", "jack", t0.Add(knownFor)); wait <= 0 {
		t.Error("a success older than knownFor still exempts its pair from the ceiling")
	}
}

// TestLoginLimiterBounded: whatever is sent, the limiter holds at most maxTracked keys,
// each at most MaxLoginName bytes of name.
func TestLoginLimiterBounded(t *testing.T) {
	t.Parallel()
	l := newLoginLimiter()
	now := time.Now()
	long := strings.Repeat("x", 60<<10)
	for i := range 3 * maxTracked {
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		l.take(addr, fmt.Sprint(i, long), now)
		l.succeeded(addr, fmt.Sprint(i, long), now)
	}
	if n, k := l.tracked(); n > maxTracked || k > maxTracked {
		t.Errorf("%d keys and %d known pairs tracked, want at most %d each", n, k, maxTracked)
	}
	for k := range l.keys {
		if len(k) > len("pair:")+64+1+MaxLoginName {
			t.Fatalf("a key of %d bytes is kept", len(k))
		}
	}
	for k := range l.known {
		if len(k) > len("pair:")+64+1+MaxLoginName {
			t.Fatalf("a known pair of %d bytes is kept", len(k))
		}
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, password string
		want           string // in the error; "" for accepted
	}{
		{"alice", "blue-heron-2718", ""},
		{"alice", "short-pw", "too short"},
		{"alice", "ñandú-cóndor", ""}, // 12 characters, more bytes
		{"alice", "ñandú-có", "too short"},
		{"alice", "my-Alice-secret", "must not contain the user name"},
		{"alice", "ALICE12345678", "must not contain the user name"},
		{"alice", "qwertyuiop", "most common"},
		{"alice", "Password123", "most common"}, // case-insensitive
		{"alice", "1234567890", "most common"},
		{"alice", strings.Repeat("x", maxPassword+1), "at most"},
		{"alice", "invalid-\xff-utf8-pw", "UTF-8"},
	} {
		err := checkPassword(tt.name, tt.password)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("checkPassword(%q, %q) = %v, want %q", tt.name, tt.password, err, tt.want)
		}
	}
	if n := len(commonPasswords()); n != 10000 {
		t.Errorf("%d common passwords, want 10,000", n)
	}
}

// TestArgonGate: however many callers arrive at once, at most the gate's slots compute at
// once; past its queue they are refused with a 503 and Retry-After at once; a caller whose
// context ends while waiting leaves the queue.
func TestArgonGate(t *testing.T) {
	t.Parallel()
	g := &argonGate{slots: make(chan struct{}, 2), maxWaiting: 8}
	release := make(chan struct{})
	var running, peak atomic.Int64
	var refused atomic.Int64
	var wg sync.WaitGroup
	started := make(chan struct{}, 20)
	for range 20 {
		wg.Go(func() {
			err := g.do(context.Background(), func() {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				started <- struct{}{}
				<-release
				running.Add(-1)
			})
			if err != nil {
				if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable || e.RetryAfter <= 0 {
					t.Errorf("refused with %v, want a 503 with Retry-After", err)
				}
				refused.Add(1)
			}
		})
	}
	// 2 run, 8 wait, 10 are refused; then the rest run as slots free.
	<-started
	<-started
	deadline := time.Now().Add(30 * time.Second)
	for refused.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if peak.Load() != 2 || refused.Load() != 10 {
		t.Errorf("peak %d at once and %d refused, want 2 and 10", peak.Load(), refused.Load())
	}
	// A waiter whose request ends leaves.
	g.slots <- struct{}{}
	g.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := g.do(ctx, func() { t.Error("ran without a slot") }); err == nil {
		t.Error("a waiter whose context ended was not refused")
	}
	if w := g.waiting.Load(); w != 0 {
		t.Errorf("%d still counted as waiting", w)
	}
}
