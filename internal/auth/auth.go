// Package auth decides who may do what in a team deployment. It owns the accounts (users
// with a role and an argon2id password hash), browser sessions, API tokens (stored as
// SHA-256 hashes, shown once), the rule each route asks of its caller, ownership checks,
// the login rate limit and the audit log. It knows nothing of HTTP: the API reads
// credentials from requests and asks this package what they are worth.
package auth

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
)

// Role is what a user may do: admins everything, researchers create and change their own
// strategies and tasks and read everything, viewers read.
type Role string

// The roles.
const (
	RoleAdmin      Role = "admin"
	RoleResearcher Role = "researcher"
	RoleViewer     Role = "viewer"
)

// ParseRole checks a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAdmin, RoleResearcher, RoleViewer:
		return r, nil
	}
	return "", apperr.Invalid("Unknown role %q: want admin, researcher or viewer", s)
}

// Via is how a request proved who it comes from.
type Via string

// The ways in.
const (
	ViaLocal   Via = "local"   // accounts are off: the single user of a loopback service
	ViaSession Via = "session" // the page's session cookie
	ViaToken   Via = "token"   // an API token (Authorization: Bearer)
)

// Identity is who a request comes from.
type Identity struct {
	User     string // the user's name; empty for the single user when accounts are off
	Role     Role
	ReadOnly bool   // a read-only API token: reads only, whatever the role
	Metrics  bool   // a metrics token: reads /metrics only, whatever the role
	Via      Via    //
	CSRF     string // the session's CSRF token, which cookie-authenticated writes must send
	TokenID  string // the API token used, for ViaToken
}

// Local is the identity of every request when accounts are off: one user who may do
// everything, and who is recorded as nobody.
func Local() Identity { return Identity{Role: RoleAdmin, Via: ViaLocal} }

// Rule is what a route asks of its caller.
type Rule int

// The rules, from open to closed.
const (
	Public  Rule = iota // anyone, signed in or not: health, the sign-in page and route, static assets
	Signed              // any signed-in user: reads, and the caller's own session
	Self                // any signed-in user on their own account (tokens); admins on anyone's
	Create              // researchers and admins: creates something the caller will own
	Owner               // researchers and admins; the handler checks that the caller owns the target
	Admin               // admins only
	Metrics             // admins, and metrics tokens (which may call nothing else): /metrics
)

var ruleNames = [...]string{"public", "signed", "self", "create", "owner", "admin", "metrics"}

func (r Rule) String() string { return ruleNames[r] }

// Check says whether id (nil: no credentials) may call a route with this rule; write is
// whether the call changes anything.
func (r Rule) Check(id *Identity, write bool) error {
	if r == Public {
		return nil
	}
	if id == nil {
		return apperr.Unauthenticated("Not signed in: sign in, or send an API token as 'Authorization: Bearer <token>'")
	}
	if id.Metrics && r != Metrics {
		return apperr.Forbidden("Forbidden: this API token reads /metrics only")
	}
	if write && id.ReadOnly {
		return apperr.Forbidden("Forbidden: this API token is read-only")
	}
	switch r {
	case Create, Owner:
		if id.Role != RoleAdmin && id.Role != RoleResearcher {
			return apperr.Forbidden("Forbidden: the %s role may only read", id.Role)
		}
	case Admin:
		if id.Role != RoleAdmin {
			return apperr.Forbidden("Forbidden: only an admin may do this")
		}
	case Metrics:
		if id.Role != RoleAdmin && !id.Metrics {
			return apperr.Forbidden("Forbidden: only an admin or a metrics token may read the metrics")
		}
	}
	return nil
}

// OwnerOf is the owner of a row from its created_by column, as MayModify takes it: the user
// who made it, or "" for nobody (made before accounts, or by a strategy file).
func OwnerOf(createdBy *string) string {
	if createdBy == nil {
		return ""
	}
	return *createdBy
}

// MayModify says whether id may change or run-control something that owner made ("": made
// before accounts, by a strategy file or by nobody, which only admins may change).
func MayModify(id Identity, what, owner string) error {
	switch {
	case id.Role == RoleAdmin:
		return nil
	case id.Role == RoleResearcher && owner != "" && owner == id.User:
		return nil
	case owner == "":
		return apperr.Forbidden("Forbidden: %s has no owner; only an admin may change it", what)
	}
	return apperr.Forbidden("Forbidden: %s belongs to %s; only its owner or an admin may change it", what, owner)
}

// MayManage says whether id may manage the account of user (its tokens): their own, or
// anyone's for an admin.
func MayManage(id Identity, user string) error {
	if id.Role == RoleAdmin || (user != "" && user == id.User) {
		return nil
	}
	return apperr.Forbidden("Forbidden: only %s or an admin may manage %s's tokens", user, user)
}

// By is the name a change made by id is recorded under; nil for nobody (accounts off).
func By(id Identity) *string {
	if id.User == "" {
		return nil
	}
	return &id.User
}

func wrap(err error, format string, a ...any) error {
	return fmt.Errorf(format+": %w", append(a, err)...)
}

// ParseLifetime reads a token lifetime: days ("90d"), or a Go duration ("12h", "30m").
// Empty is 0: no expiry.
func ParseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d > 0 && d <= 36500 {
			return time.Duration(d) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, apperr.Invalid("Invalid lifetime %q: want days such as 90d, or a duration such as 12h", s)
}
