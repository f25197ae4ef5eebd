package auth

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// Sign-in throttling. Each attempt is charged, before its password is checked, to three
// token buckets, and refused (429) when any of them is empty:
//
//   - the pair of its client address and user name: pairBurst attempts, then one every
//     pairEvery. This is what slows one client guessing one user's password, and it is
//     the only bucket that names the user, so failures from one address never lock the
//     user out from another (OWASP, Authentication Cheat Sheet, "Account Lockout", and
//     Credential Stuffing Prevention Cheat Sheet: a lockout per account lets anyone who
//     knows a name deny that user service).
//   - its client address: addrBurst attempts, then one every addrEvery, whatever names it
//     tries, so one client cannot spray a password over many names.
//   - the whole service: globalBurst attempts, then one every globalEvery, so that many
//     clients (a botnet, each address under its own limits) guessing one name, or many,
//     still get at most that rate of password checks in all. The trade-off: once the
//     ceiling is reached, sign-ins from other addresses wait too, which is the denial of
//     service the per-pair rule avoids. To bound that, an address and name that signed in
//     successfully in the last knownFor (remembered per process, up to maxTracked pairs)
//     are not charged to the ceiling: a user keeps signing in from where they signed in
//     before; only sign-ins from new places wait while the service is under attack.
//
// A success gives its attempt back to every bucket it was charged to, so only failures
// count. Everything is counted per process.
const (
	pairBurst   = 10
	pairEvery   = 30 * time.Second
	addrBurst   = 30
	addrEvery   = 10 * time.Second
	globalBurst = 100
	globalEvery = time.Second
	knownFor    = 30 * 24 * time.Hour
	// loginAuditEvery is how often a key's refused attempts are written to the audit log:
	// once per this window, not once per request.
	loginAuditEvery = 5 * time.Minute
	// maxTracked caps the pairs and addresses remembered, and separately the known pairs,
	// whatever clients send: keys are at most MaxLoginName bytes of name, so the limiter
	// holds a few MB at most. Past it the least recently seen key is forgotten. The global
	// bucket is never forgotten, so churning keys cannot reset it.
	maxTracked = 10000
)

// MaxLoginName is the longest name a sign-in may give; longer ones are refused before
// anything else (no user has one: names are at most 64 characters).
const MaxLoginName = 200

// loginLimiter throttles password guessing (see the constants above): token buckets per
// address-and-name and per address in a least-recently-used list of at most maxTracked
// keys, one global bucket, and the pairs that signed in successfully.
type loginLimiter struct {
	mu     sync.Mutex
	keys   map[string]*list.Element // of *bucket
	lru    list.List                // front: most recently used
	global bucket
	known  map[string]*list.Element // of *knownPair
	knownL list.List
}

// bucket is a token bucket of burst tokens, one more every every.
type bucket struct {
	key       string
	burst     float64
	every     time.Duration
	tokens    float64
	at        time.Time // when tokens was last brought up to date
	auditedAt time.Time // when a refused attempt on this key was last audited
}

type knownPair struct {
	key string
	at  time.Time // last successful sign-in
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{
		keys:   map[string]*list.Element{},
		known:  map[string]*list.Element{},
		global: bucket{key: "global", burst: globalBurst, every: globalEvery, tokens: globalBurst},
	}
}

// addrOf is the counted form of a client address. An IPv6 client usually holds a whole
// /64, so the prefix is counted, not each address in it.
func addrOf(addr string) string {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	if len(addr) > 64 { // not an address from net/http; still bounded
		addr = addr[:64]
	}
	return addr
}

func nameOf(name string) string {
	if len(name) > MaxLoginName {
		name = name[:MaxLoginName]
	}
	return name
}

func addrKey(addr string) string { return "addr:" + addrOf(addr) }

// pairKey is the key of addr and name; NUL cannot occur in an address.
func pairKey(addr, name string) string { return "pair:" + addrOf(addr) + "\x00" + nameOf(name) }

// refill brings b up to now.
func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+float64(d)/float64(b.every))
		b.at = now
	}
}

// get returns key's bucket brought up to now, making it (full) if it is new.
func (l *loginLimiter) get(key string, burst int, every time.Duration, now time.Time) *bucket {
	if e, ok := l.keys[key]; ok {
		l.lru.MoveToFront(e)
		b := e.Value.(*bucket)
		b.refill(now)
		return b
	}
	for l.lru.Len() >= maxTracked {
		old := l.lru.Back()
		delete(l.keys, old.Value.(*bucket).key)
		l.lru.Remove(old)
	}
	b := &bucket{key: key, burst: float64(burst), every: every, tokens: float64(burst), at: now}
	l.keys[key] = l.lru.PushFront(b)
	return b
}

// isKnown says whether addr and name signed in successfully within knownFor of now.
func (l *loginLimiter) isKnown(key string, now time.Time) bool {
	e, ok := l.known[key]
	return ok && now.Sub(e.Value.(*knownPair).at) < knownFor
}

// charge is what take charged an attempt to, for giveBack.
type charge struct {
	buckets []*bucket
}

// take charges an attempt from addr for name to its pair, its address and (unless the
// pair is known) the global ceiling, if all have one left. Otherwise it charges nothing
// and says how long to wait, and whether this refusal is the first of its key's audit
// window (so that a flood of refused attempts is audited once, not per request).
func (l *loginLimiter) take(addr, name string, now time.Time) (c charge, wait time.Duration, audit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pk := pairKey(addr, name)
	bs := []*bucket{l.get(pk, pairBurst, pairEvery, now), l.get(addrKey(addr), addrBurst, addrEvery, now)}
	if !l.isKnown(pk, now) {
		l.global.refill(now)
		bs = append(bs, &l.global)
	}
	refused := false
	for _, b := range bs {
		if b.tokens < 1 {
			refused = true
			wait = max(wait, time.Duration((1-b.tokens)*float64(b.every)))
			if b.auditedAt.IsZero() || now.Sub(b.auditedAt) >= loginAuditEvery {
				b.auditedAt = now
				audit = true
			}
		}
	}
	if refused {
		return charge{}, wait, audit
	}
	for _, b := range bs {
		b.tokens--
	}
	return charge{buckets: bs}, 0, false
}

// giveBack returns an attempt charged by take that did not count: it succeeded, or its
// password could not be checked (the service was busy, the client left). A bucket
// forgotten since simply stays full.
func (l *loginLimiter) giveBack(c charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range c.buckets {
		b.tokens = min(b.burst, b.tokens+1)
	}
}

// succeeded remembers that addr signed in as name at now: that pair is not charged to
// the global ceiling for knownFor.
func (l *loginLimiter) succeeded(addr, name string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := pairKey(addr, name)
	if e, ok := l.known[key]; ok {
		e.Value.(*knownPair).at = now
		l.knownL.MoveToFront(e)
		return
	}
	for l.knownL.Len() >= maxTracked {
		old := l.knownL.Back()
		delete(l.known, old.Value.(*knownPair).key)
		l.knownL.Remove(old)
	}
	l.known[key] = l.knownL.PushFront(&knownPair{key: key, at: now})
}

// tracked is how many keys the limiter holds (buckets and known pairs).
func (l *loginLimiter) tracked() (buckets, known int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys), len(l.known)
}
