package auth

import (
	"context"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// TestLoginNoLockoutByStranger: eleven wrong passwords for jack from address A throttle A
// for jack (even with the right password), while jack signs in from address B; and past the
// global ceiling a new address waits, but jack's address that signed in before does not.
// Real sign-ins against PostgreSQL, on a fixed clock so that nothing refills meanwhile.
func TestLoginNoLockoutByStranger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	s := NewService(st, 0)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	const password = "quiet-maple-3141"
	if _, err := s.AddUser(ctx, "jack", RoleResearcher, password); err != nil {
		t.Fatal(err)
	}
	login := func(addr, pw string) apperr.Kind {
		t.Helper()
		_, err := s.Login(ctx, LoginAttempt{Name: "jack", Password: pw, RemoteAddr: addr, RequestID: "test"})
		if err == nil {
			return -1
		}
		e, ok := apperr.As(err)
		if !ok {
			t.Fatalf("sign-in from %s: %v", addr, err)
		}
		return e.Kind
	}
	const signedIn = apperr.Kind(-1)
	for _, tt := range []struct {
		step, addr, password string
		want                 apperr.Kind
	}{
		{"A's 10th wrong password", "203.0.113.1", "wrong", apperr.KindUnauthenticated},
		{"A's 11th", "203.0.113.1", "wrong", apperr.KindTooManyRequests},
		{"A with the right password while throttled", "203.0.113.1", password, apperr.KindTooManyRequests},
		{"B with the right password while A is throttled", "198.51.100.7", password, signedIn},
		{"B with a wrong password: B's own count", "198.51.100.7", "wrong", apperr.KindUnauthenticated},
		{"B again", "198.51.100.7", password, signedIn},
	} {
		if tt.step == "A's 10th wrong password" {
			for range pairBurst - 1 {
				if k := login(tt.addr, "wrong"); k != apperr.KindUnauthenticated {
					t.Fatalf("A's first wrong passwords: kind %v, want 401", k)
				}
			}
		}
		if got := login(tt.addr, tt.password); got != tt.want {
			t.Errorf("%s: kind %v, want %v", tt.step, got, tt.want)
		}
	}

	// The ceiling with one attempt left (as after a botnet's burst): one new address takes
	// it, the next waits, jack from B (where he signed in) does not.
	s.limit.mu.Lock()
	s.limit.global.tokens = 1
	s.limit.mu.Unlock()
	if k := login("192.0.2.10", "wrong"); k != apperr.KindUnauthenticated {
		t.Errorf("the last attempt under the ceiling: kind %v, want 401", k)
	}
	if k := login("192.0.2.11", password); k != apperr.KindTooManyRequests {
		t.Errorf("a new address past the ceiling: kind %v, want 429", k)
	}
	if k := login("198.51.100.7", password); k != signedIn {
		t.Errorf("jack from B past the ceiling: kind %v, want signed in", k)
	}
	var throttled int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'login.throttled'`).Scan(&throttled); err != nil {
		t.Fatal(err)
	}
	if throttled != 2 { // A for jack once in its window, and the ceiling once
		t.Errorf("%d login.throttled audit rows, want 2", throttled)
	}
}
