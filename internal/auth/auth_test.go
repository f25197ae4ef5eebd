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

func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	l := newLoginLimiter()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range loginBurst {
		if w, _ := l.take("1.2.3.4", "alice", now); w != 0 {
			t.Fatalf("attempt %d throttled", i+1)
		}
	}
	w, audit := l.take("1.2.3.4", "bob", now)
	if w <= 0 || !audit {
		t.Errorf("the address after the burst: wait %v, audit %v; want a wait and the first refusal audited", w, audit)
	}
	if _, audit := l.take("1.2.3.4", "bob", now.Add(time.Second)); audit {
		t.Error("a second refusal of the address within its window is audited again")
	}
	if w, audit := l.take("5.6.7.8", "alice", now); w <= 0 || !audit {
		t.Errorf("the name after the burst: wait %v, audit %v", w, audit)
	}
	if w, _ := l.take("5.6.7.8", "bob", now); w != 0 {
		t.Error("an unrelated address and name are throttled")
	}
	// A refused attempt charges nothing, so the bucket fills again at its pace.
	if w, _ := l.take("1.2.3.4", "carol", now.Add(loginEvery)); w != 0 {
		t.Errorf("one period later the address has no attempt left: wait %v", w)
	}
	// Given back: a success does not count.
	l.giveBack("1.2.3.4", "carol")
	if w, _ := l.take("1.2.3.4", "dave", now.Add(loginEvery)); w != 0 {
		t.Errorf("an attempt given back is not there: wait %v", w)
	}
	// A window later the address is refused again, and audited again.
	later := now.Add(loginEvery + loginAuditEvery)
	for i := range loginBurst {
		if w, _ := l.take("1.2.3.4", fmt.Sprint("later-", i), later); w != 0 {
			t.Fatalf("a window later, attempt %d throttled", i+1)
		}
	}
	if w, audit := l.take("1.2.3.4", "later", later); w <= 0 || !audit {
		t.Errorf("a window later: wait %v, audit %v; want a wait, audited", w, audit)
	}
	// An IPv6 client is one /64.
	for i := range loginBurst {
		if w, _ := l.take(fmt.Sprintf("2001:db8::%x", i+1), fmt.Sprintf("v6-%d", i), now); w != 0 {
			t.Fatalf("IPv6 attempt %d throttled", i+1)
		}
	}
	if w, _ := l.take("2001:db8::ffff:1", "v6-new", now); w <= 0 {
		t.Error("another address of the same /64 is not throttled")
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
		l.take(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), fmt.Sprint(i, long), now)
	}
	if n := l.tracked(); n > maxTracked {
		t.Errorf("%d keys tracked, want at most %d", n, maxTracked)
	}
	for k := range l.keys {
		if len(k) > len("name:")+MaxLoginName {
			t.Fatalf("a key of %d bytes is kept", len(k))
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
