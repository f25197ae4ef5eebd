package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/backtestd/backtestd/internal/apperr"
)

// argon2id settings: OWASP's recommended minimum (19 MiB, 2 passes, 1 lane), about 30 ms
// a check on one core, so a stolen hash costs an attacker as much per guess.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16

	minPassword = 10
	maxPassword = 1024
)

var b64 = base64.RawStdEncoding

// hashPassword returns the PHC string of password: $argon2id$v=19$m=…,t=…,p=…$salt$key.
// It checks no rule: see checkPassword.
func hashPassword(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkPassword is the rule for a new password of user name: at least minPassword
// characters, not containing the name (case-insensitive), not one of the 10,000 most
// common passwords (case-insensitive).
func checkPassword(name, p string) error {
	if len(p) > maxPassword || !utf8.ValidString(p) {
		return apperr.Invalid("Password must be valid UTF-8 of at most %d bytes", maxPassword)
	}
	if utf8.RuneCountInString(p) < minPassword {
		return apperr.Invalid("Password too short: at least %d characters", minPassword)
	}
	lower := strings.ToLower(p)
	if name != "" && strings.Contains(lower, strings.ToLower(name)) {
		return apperr.Invalid("Password must not contain the user name")
	}
	if _, common := slices.BinarySearch(commonPasswords(), lower); common {
		return apperr.Invalid("Password is one of the 10,000 most common passwords: choose another")
	}
	return nil
}

// commonPasswordList is the 10,000 most common passwords, most common first, one a line:
// the first 10,000 of the "passwords" frequency list of the npm package zxcvbn 4.4.2
// (lib/frequency_lists.js; MIT, (c) 2012-2016 Dan Wheeler and Dropbox, Inc.), which
// ranks passwords from leaked password sets by how often they occur.
//
//go:embed common-passwords.txt
var commonPasswordList string

// commonPasswords is that list sorted, for binary search, made on first use (substrings
// of the embedded text: no copies).
var commonPasswords = sync.OnceValue(func() []string {
	list := strings.Fields(commonPasswordList)
	slices.Sort(list)
	return list
})

// argonGate bounds how many argon2id computations (19 MiB each) run at once, so that a
// burst of sign-ins queues for the CPU instead of multiplying the process's memory. At
// most maxWaiting callers wait; more are refused at once with a 503.
type argonGate struct {
	slots      chan struct{}
	waiting    atomic.Int64
	maxWaiting int64
	done       atomic.Int64 // checks finished, to collect their garbage every collectEvery
}

// collectEvery is how many argon2id checks may leave their 19 MiB as garbage before the
// gate asks for a collection. Left to the pacer, a burst piles up far more: the service
// runs at GOGC 400, so the collector waits until the heap is five times what was live at
// its last cycle, and two checks in flight count as live (measured: 276 MB resident for 200
// sign-ins at once; 136–154 MB with a cycle every second check). A cycle on the service's
// small heap takes a few ms of CPU against the ~70 ms of two checks.
const collectEvery = 2

// newArgonGate allows a slot per CPU up to 2: a check takes a core for ~30 ms, so more
// in flight adds memory without finishing a burst sooner on a small machine. The queue
// holds about five seconds of checks.
func newArgonGate() *argonGate {
	n := min(runtime.GOMAXPROCS(0), 2)
	return &argonGate{slots: make(chan struct{}, n), maxWaiting: int64(128 * n)}
}

// errHashBusy answers a sign-in or password change that found the queue full.
var errHashBusy = &apperr.Error{Kind: apperr.KindUnavailable, Detail: "Too many sign-ins at once: try again in a second", RetryAfter: time.Second}

// do runs fn when a slot is free, waiting at most as long as ctx lives.
func (g *argonGate) do(ctx context.Context, fn func()) error {
	select {
	case g.slots <- struct{}{}:
	default:
		if g.waiting.Add(1) > g.maxWaiting {
			g.waiting.Add(-1)
			return errHashBusy
		}
		select {
		case g.slots <- struct{}{}:
			g.waiting.Add(-1)
		case <-ctx.Done():
			g.waiting.Add(-1)
			return &apperr.Error{Kind: apperr.KindUnavailable, Detail: "Sign-in abandoned while waiting for a password check", RetryAfter: time.Second, Err: ctx.Err()}
		}
	}
	func() {
		defer func() { <-g.slots }()
		fn()
	}()
	if g.done.Add(1)%collectEvery == 0 {
		runtime.GC()
	}
	return nil
}

// hash is hashPassword through the gate.
func (g *argonGate) hash(ctx context.Context, password string) (h string, err error) {
	if gerr := g.do(ctx, func() { h, err = hashPassword(password) }); gerr != nil {
		return "", gerr
	}
	return h, err
}

// matches is passwordMatches through the gate.
func (g *argonGate) matches(ctx context.Context, encoded, password string) (ok bool, err error) {
	err = g.do(ctx, func() { ok = passwordMatches(encoded, password) })
	return ok, err
}

// passwordMatches checks password against a PHC string made by hashPassword, with the
// parameters the string records (so stronger settings later still verify old hashes).
func passwordMatches(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || len(password) > maxPassword {
		return false
	}
	var version int
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<22 || t > 64 {
		return false
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when a sign-in names no such user, so that the answer takes
// as long as for a wrong password and does not tell which names exist.
// It is made on first use, so that programs that never check a password (the runner
// processes are this program too) do not pay for it at start.
var dummyHash = sync.OnceValue(func() string {
	h, err := hashPassword("not-a-password-anyone-has")
	if err != nil {
		panic(err)
	}
	return h
})
