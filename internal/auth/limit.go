package auth

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// Sign-in attempts allowed per client address and per user name: a burst of loginBurst,
// then one every loginEvery. An attempt is charged before its password is checked, and
// given back when it succeeds, so only failures count. Counted per process.
const (
	loginBurst = 10
	loginEvery = 30 * time.Second
	// loginAuditEvery is how often a key's refused attempts are written to the audit log:
	// once per this window (the time its bucket takes to fill again), not once per request.
	loginAuditEvery = loginBurst * loginEvery
	// maxTracked caps the names and addresses remembered, whatever clients send: keys are
	// at most MaxLoginName bytes, so the limiter holds a few MB at most. Past it the least
	// recently seen key is forgotten.
	maxTracked = 10000
)

// MaxLoginName is the longest name a sign-in may give; longer ones are refused before
// anything else (no user has one: names are at most 64 characters).
const MaxLoginName = 200

// loginLimiter throttles password guessing: by address, so one client cannot try many
// names, and by name, so many clients cannot try one. It is a token bucket per key kept in
// a least-recently-used list of at most maxTracked keys.
type loginLimiter struct {
	mu   sync.Mutex
	keys map[string]*list.Element // of *bucket
	lru  list.List                // front: most recently used
}

type bucket struct {
	key       string
	tokens    float64
	at        time.Time // when tokens was last brought up to date
	auditedAt time.Time // when a refused attempt on this key was last audited
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{keys: map[string]*list.Element{}}
}

// addrKey is the key of a client address. An IPv6 client usually holds a whole /64, so
// the prefix is counted, not each address in it.
func addrKey(addr string) string {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		p, _ := ip.Prefix(64)
		return "addr:" + p.String()
	}
	if len(addr) > 64 { // not an address from net/http; still bounded
		addr = addr[:64]
	}
	return "addr:" + addr
}

func nameKey(name string) string {
	if len(name) > MaxLoginName {
		name = name[:MaxLoginName]
	}
	return "name:" + name
}

// get returns key's bucket brought up to now, making it (full) if it is new.
func (l *loginLimiter) get(key string, now time.Time) *bucket {
	if e, ok := l.keys[key]; ok {
		l.lru.MoveToFront(e)
		b := e.Value.(*bucket)
		if d := now.Sub(b.at); d > 0 {
			b.tokens = min(loginBurst, b.tokens+float64(d)/float64(loginEvery))
			b.at = now
		}
		return b
	}
	for l.lru.Len() >= maxTracked {
		old := l.lru.Back()
		delete(l.keys, old.Value.(*bucket).key)
		l.lru.Remove(old)
	}
	b := &bucket{key: key, tokens: loginBurst, at: now}
	l.keys[key] = l.lru.PushFront(b)
	return b
}

// take charges an attempt from addr for name to both, if both have one left. Otherwise it
// charges nothing and says how long to wait, and whether this refusal is the first of its
// key's audit window (so that a flood of refused attempts is audited once, not per request).
func (l *loginLimiter) take(addr, name string, now time.Time) (wait time.Duration, audit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bs := [2]*bucket{l.get(addrKey(addr), now), l.get(nameKey(name), now)}
	if bs[0].tokens >= 1 && bs[1].tokens >= 1 {
		bs[0].tokens--
		bs[1].tokens--
		return 0, false
	}
	for _, b := range bs {
		if b.tokens >= 1 {
			continue
		}
		wait = max(wait, time.Duration((1-b.tokens)*float64(loginEvery)))
		if b.auditedAt.IsZero() || now.Sub(b.auditedAt) >= loginAuditEvery {
			b.auditedAt = now
			audit = true
		}
	}
	return wait, audit
}

// giveBack returns an attempt charged by take that did not count: it succeeded, or its
// password could not be checked (the service was busy, the client left).
func (l *loginLimiter) giveBack(addr, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range []string{addrKey(addr), nameKey(name)} {
		if e, ok := l.keys[k]; ok {
			b := e.Value.(*bucket)
			b.tokens = min(loginBurst, b.tokens+1)
		}
	}
}

// tracked is how many keys the limiter holds.
func (l *loginLimiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}
