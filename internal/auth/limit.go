package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Sign-in failures allowed per client address and per user name: a burst of loginBurst,
// then one every loginEvery. Counted per process; the audit log sees them all.
const (
	loginBurst = 10
	loginEvery = 30 * time.Second
	maxTracked = 10000
)

// loginLimiter throttles password guessing: by address, so one client cannot try many
// names, and by name, so many clients cannot try one.
type loginLimiter struct {
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

func newLoginLimiter() *loginLimiter { return &loginLimiter{keys: map[string]*rate.Limiter{}} }

func (l *loginLimiter) get(key string) *rate.Limiter {
	lim, ok := l.keys[key]
	if !ok {
		if len(l.keys) >= maxTracked {
			l.forgetIdle()
		}
		lim = rate.NewLimiter(rate.Every(loginEvery), loginBurst)
		l.keys[key] = lim
	}
	return lim
}

// forgetIdle drops limiters that are full again: they hold nothing a new one would not.
func (l *loginLimiter) forgetIdle() {
	for k, lim := range l.keys {
		if lim.Tokens() >= loginBurst {
			delete(l.keys, k)
		}
	}
}

// wait is how long the next attempt from addr for name must wait; 0 when it may go.
func (l *loginLimiter) wait(addr, name string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for _, k := range []string{"addr:" + addr, "name:" + name} {
		lim := l.get(k)
		if tok := lim.Tokens(); tok < 1 {
			d = max(d, time.Duration((1-tok)*float64(loginEvery)))
		}
	}
	return d
}

// failed charges a failed attempt to its address and name.
func (l *loginLimiter) failed(addr, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.get("addr:" + addr).Allow()
	l.get("name:" + name).Allow()
}
