package auth

import (
	"strings"
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
	if _, err := hashPassword("short"); err == nil {
		t.Error("a 5-character password was accepted")
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
	for i := range loginBurst {
		if w := l.wait("1.2.3.4", "alice"); w != 0 {
			t.Fatalf("attempt %d throttled", i+1)
		}
		l.failed("1.2.3.4", "alice")
	}
	if w := l.wait("1.2.3.4", "bob"); w <= 0 {
		t.Error("the address is not throttled after the burst")
	}
	if w := l.wait("5.6.7.8", "alice"); w <= 0 {
		t.Error("the name is not throttled after the burst")
	}
	if w := l.wait("5.6.7.8", "bob"); w != 0 {
		t.Error("an unrelated address and name are throttled")
	}
}
