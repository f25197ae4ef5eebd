package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 12 * time.Hour

// TokenPrefix starts every API token, so that a leaked one is recognisable (secret scanners,
// logs) and cannot be mistaken for a session.
const TokenPrefix = "btd_"

// Service is the accounts, sessions, tokens and audit log in PostgreSQL.
type Service struct {
	st         *store.Store
	sessionTTL time.Duration
	limit      *loginLimiter
	argon      *argonGate
	now        func() time.Time
}

// NewService returns the accounts service; sessionTTL <= 0 is DefaultSessionTTL.
func NewService(st *store.Store, sessionTTL time.Duration) *Service {
	if sessionTTL <= 0 {
		sessionTTL = DefaultSessionTTL
	}
	return &Service{st: st, sessionTTL: sessionTTL, limit: newLoginLimiter(), argon: newArgonGate(), now: time.Now}
}

// User is an account as shown to admins (never its password hash).
type User struct {
	Name       string     `json:"name"`
	Role       Role       `json:"role"`
	CreatedAt  time.Time  `json:"created_at"`
	Disabled   bool       `json:"disabled"`
	DisabledAt *time.Time `json:"disabled_at"`
}

func userOf(u store.User) User {
	return User{Name: u.Name, Role: Role(u.Role), CreatedAt: u.CreatedAt, Disabled: u.DisabledAt != nil, DisabledAt: u.DisabledAt}
}

// nameRE is compiled on first use, not at start-up (its {0,63} makes a large program).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`) })

// AddUser creates a user; a name already taken is a 409.
func (s *Service) AddUser(ctx context.Context, name string, role Role, password string) (User, error) {
	if !nameRE().MatchString(name) {
		return User{}, apperr.Invalid("Invalid user name %q: 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit", name)
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if err := checkPassword(name, password); err != nil {
		return User{}, err
	}
	hash, err := s.argon.hash(ctx, password)
	if err != nil {
		return User{}, err
	}
	u, err := s.st.InsertUser(ctx, s.st.Pool, store.InsertUserParams{Name: name, Role: string(role), PasswordHash: hash})
	if errors.Is(err, store.ErrNotFound) {
		return User{}, apperr.Conflict("User %s already exists", name)
	}
	if err != nil {
		return User{}, wrap(err, "add user %s", name)
	}
	return userOf(u), nil
}

// Users lists every account by name.
func (s *Service) Users(ctx context.Context) ([]User, error) {
	rows, err := s.st.ListUsers(ctx, s.st.Pool)
	if err != nil {
		return nil, wrap(err, "list users")
	}
	out := make([]User, len(rows))
	for i, u := range rows {
		out[i] = userOf(u)
	}
	return out, nil
}

// HasUsers says whether any account exists.
func (s *Service) HasUsers(ctx context.Context) (bool, error) {
	n, err := s.st.CountUsers(ctx, s.st.Pool)
	if err != nil {
		return false, wrap(err, "count users")
	}
	return n > 0, nil
}

// ActiveAdmins counts the admins who can sign in.
func (s *Service) ActiveAdmins(ctx context.Context) (int, error) {
	n, err := s.st.CountActiveAdmins(ctx, s.st.Pool)
	if err != nil {
		return 0, wrap(err, "count admins")
	}
	return int(n), nil
}

// UserChange is what UpdateUser changes; nil fields stay.
type UserChange struct {
	Role     *Role   `json:"role"`
	Disabled *bool   `json:"disabled"`
	Password *string `json:"password"`
}

// UpdateUser changes a user's role, password or whether they may sign in, in one
// transaction. Disabling a user or changing their password ends their sessions; their API
// tokens stop working while they are disabled. The last active admin cannot be demoted or
// disabled, so the service always has someone who can manage it.
func (s *Service) UpdateUser(ctx context.Context, name string, c UserChange) (User, error) {
	var hash string
	if c.Password != nil {
		if err := checkPassword(name, *c.Password); err != nil {
			return User{}, err
		}
		var err error
		if hash, err = s.argon.hash(ctx, *c.Password); err != nil {
			return User{}, err
		}
	}
	if c.Role != nil {
		if _, err := ParseRole(string(*c.Role)); err != nil {
			return User{}, err
		}
	}
	var out store.User
	err := s.st.WithTx(ctx, func(tx pgx.Tx) error {
		u, err := s.st.GetUser(ctx, tx, name)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("User %s not found", name)
		}
		if err != nil {
			return err
		}
		if c.Role != nil {
			if u, err = s.st.SetUserRole(ctx, tx, store.SetUserRoleParams{Name: name, Role: string(*c.Role)}); err != nil {
				return err
			}
		}
		if c.Disabled != nil {
			if u, err = s.st.SetUserDisabled(ctx, tx, store.SetUserDisabledParams{Name: name, Disabled: *c.Disabled}); err != nil {
				return err
			}
		}
		if c.Password != nil {
			if u, err = s.st.SetUserPassword(ctx, tx, store.SetUserPasswordParams{Name: name, PasswordHash: hash}); err != nil {
				return err
			}
		}
		if u.DisabledAt != nil || c.Password != nil {
			if err := s.st.DeleteUserSessions(ctx, tx, name); err != nil {
				return err
			}
		}
		if n, err := s.st.CountActiveAdmins(ctx, tx); err != nil {
			return err
		} else if n == 0 {
			return apperr.Conflict("%s is the last active admin: make another admin first", name)
		}
		out = u
		return nil
	})
	if err != nil {
		if _, ok := apperr.As(err); ok {
			return User{}, err
		}
		return User{}, wrap(err, "update user %s", name)
	}
	return userOf(out), nil
}

// LoginAttempt is one sign-in: the name and password given, and where from (for the rate
// limit and the audit log). RemoteAddr is the client's address (the TCP peer's host).
type LoginAttempt struct {
	Name, Password        string
	RemoteAddr, RequestID string
}

// Session is a signed-in browser: Secret goes into the cookie (only its hash is stored),
// CSRF must come back with every write.
type Session struct {
	Secret   string
	Expires  time.Time
	Identity Identity
}

// Login checks a name and password and opens a session.
//
// A name over MaxLoginName bytes is a 400 before anything else. Every attempt is then
// charged, before the password is checked, to its address-and-name, its address and the
// global ceiling (see limit.go); past a limit it is a 429 with the wait, its password
// unchecked, audited once per key and window. A success gives its attempt back, so only
// failures count, and exempts its address and name from the global ceiling. Failures are a 401 that does not
// say whether the name exists, recorded in the audit log. Passwords are checked a few at a
// time (argonGate): a burst waits its turn, and a flood beyond the queue is a 503.
func (s *Service) Login(ctx context.Context, a LoginAttempt) (Session, error) {
	if len(a.Name) > MaxLoginName {
		return Session{}, apperr.Invalid("User name too long: at most %d bytes", MaxLoginName)
	}
	charged, wait, audit := s.limit.take(a.RemoteAddr, a.Name, s.now())
	if wait > 0 {
		if audit {
			s.record(ctx, Entry{Action: "login.throttled", Target: a.Name, Status: 429, RemoteAddr: a.RemoteAddr, RequestID: a.RequestID})
		}
		secs := int(wait.Seconds()) + 1
		return Session{}, &apperr.Error{Kind: apperr.KindTooManyRequests, Detail: fmt.Sprintf("Too many failed sign-ins: try again in %d s", secs), RetryAfter: time.Duration(secs) * time.Second}
	}
	u, err := s.st.GetUser(ctx, s.st.Pool, a.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.limit.giveBack(charged)
		return Session{}, wrap(err, "sign in")
	}
	hash := dummyHash()
	if err == nil {
		hash = u.PasswordHash
	}
	match, gerr := s.argon.matches(ctx, hash, a.Password)
	if gerr != nil { // not checked: it does not count
		s.limit.giveBack(charged)
		return Session{}, gerr
	}
	if !match || err != nil || u.DisabledAt != nil {
		s.record(ctx, Entry{Action: "login.failed", Target: a.Name, Status: 401, RemoteAddr: a.RemoteAddr, RequestID: a.RequestID})
		return Session{}, apperr.Unauthenticated("Wrong user name or password")
	}
	s.limit.giveBack(charged)
	s.limit.succeeded(a.RemoteAddr, a.Name, s.now())
	secret, hashed := newSecret("")
	csrf, _ := newSecret("")
	expires := s.now().Add(s.sessionTTL)
	err = s.st.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.st.DeleteExpiredSessions(ctx, tx); err != nil {
			return err
		}
		if err := s.st.InsertSession(ctx, tx, store.InsertSessionParams{SecretHash: hashed, UserName: u.Name, CsrfToken: csrf, ExpiresAt: expires}); err != nil {
			return err
		}
		return s.st.InsertAudit(ctx, tx, store.InsertAuditParams{Actor: &u.Name, Action: "login", Target: u.Name, Status: 200, RemoteAddr: a.RemoteAddr, RequestID: a.RequestID})
	})
	if err != nil {
		return Session{}, wrap(err, "open session")
	}
	return Session{Secret: secret, Expires: expires, Identity: Identity{User: u.Name, Role: Role(u.Role), Via: ViaSession, CSRF: csrf}}, nil
}

// Logout ends the session with this secret (nothing if there is none).
func (s *Service) Logout(ctx context.Context, secret string) error {
	if err := s.st.DeleteSession(ctx, s.st.Pool, hashSecret(secret)); err != nil {
		return wrap(err, "sign out")
	}
	return nil
}

// SessionIdentity is who the session with this secret belongs to; a 401 when it does not
// exist, has expired or its user is disabled.
func (s *Service) SessionIdentity(ctx context.Context, secret string) (Identity, error) {
	row, err := s.st.SessionIdentity(ctx, s.st.Pool, hashSecret(secret))
	if errors.Is(err, store.ErrNotFound) {
		return Identity{}, apperr.Unauthenticated("Session expired or ended: sign in again")
	}
	if err != nil {
		return Identity{}, wrap(err, "read session")
	}
	return Identity{User: row.Name, Role: Role(row.Role), Via: ViaSession, CSRF: row.CsrfToken}, nil
}

// CSRFMatches compares a CSRF token sent with a request to the session's in constant time.
func CSRFMatches(id Identity, sent string) bool {
	return id.CSRF != "" && subtle.ConstantTimeCompare([]byte(id.CSRF), []byte(sent)) == 1
}

// Token is an API token as listed (never its secret).
type Token struct {
	ID         string     `json:"id"`
	User       string     `json:"user"`
	Name       string     `json:"name"`
	ReadOnly   bool       `json:"read_only"`
	Metrics    bool       `json:"metrics_only"`
	CreatedBy  *string    `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func tokenOf(t store.ApiToken) Token {
	return Token{ID: t.ID, User: t.UserName, Name: t.Name, ReadOnly: t.ReadOnly, Metrics: t.MetricsOnly, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt, RevokedAt: t.RevokedAt}
}

// NewToken is what CreateToken is asked for.
type NewToken struct {
	User     string        // whose token; it acts with their role
	Name     string        // what it is for, e.g. "ci"
	ReadOnly bool          // reads only
	Metrics  bool          // reads /metrics only, whatever the user's role
	TTL      time.Duration // 0: does not expire
}

// CreateToken makes an API token for a user and returns its secret, which is not stored
// and cannot be shown again. A token made with an API token (by.Via is ViaToken) may do no
// more and last no longer than the token it was made with: a 403 otherwise.
func (s *Service) CreateToken(ctx context.Context, by Identity, n NewToken) (string, Token, error) {
	if n.TTL < 0 {
		return "", Token{}, apperr.Invalid("A token's lifetime must be positive")
	}
	if len(n.Name) > 100 {
		return "", Token{}, apperr.Invalid("Token name too long: at most 100 characters")
	}
	if err := s.withinToken(ctx, by, n); err != nil {
		return "", Token{}, err
	}
	u, err := s.st.GetUser(ctx, s.st.Pool, n.User)
	if errors.Is(err, store.ErrNotFound) {
		return "", Token{}, apperr.NotFound("User %s not found", n.User)
	}
	if err != nil {
		return "", Token{}, wrap(err, "create token")
	}
	if u.DisabledAt != nil {
		return "", Token{}, apperr.Conflict("User %s is disabled", n.User)
	}
	secret, hashed := newSecret(TokenPrefix)
	var expires *time.Time
	if n.TTL > 0 {
		t := s.now().Add(n.TTL)
		expires = &t
	}
	row, err := s.st.InsertToken(ctx, s.st.Pool, store.InsertTokenParams{UserName: n.User, Name: n.Name, SecretHash: hashed, ReadOnly: n.ReadOnly, MetricsOnly: n.Metrics, CreatedBy: By(by), ExpiresAt: expires})
	if err != nil {
		return "", Token{}, wrap(err, "create token")
	}
	return secret, tokenOf(row), nil
}

// withinToken refuses a token that would outlive or outdo the API token it is made with,
// so that a short-lived or narrowed token given to a script cannot mint itself a lasting
// or wider one. (A token acts with its user's role, and only an admin may make tokens for
// others, so the role cannot grow.)
func (s *Service) withinToken(ctx context.Context, by Identity, n NewToken) error {
	if by.Via != ViaToken {
		return nil
	}
	if by.ReadOnly && !n.ReadOnly {
		return apperr.Forbidden("Forbidden: a read-only API token can only create read-only tokens")
	}
	if by.Metrics && !n.Metrics {
		return apperr.Forbidden("Forbidden: a metrics token can only create metrics tokens")
	}
	parent, err := s.st.GetToken(ctx, s.st.Pool, by.TokenID)
	if err != nil {
		return wrap(err, "read token %s", by.TokenID)
	}
	if parent.ExpiresAt == nil {
		return nil
	}
	now := s.now()
	if n.TTL == 0 || now.Add(n.TTL).After(*parent.ExpiresAt) {
		left := max(parent.ExpiresAt.Sub(now).Truncate(time.Second), 0)
		return apperr.Forbidden("Forbidden: this API token expires at %s, and a token it creates must expire no later: give expires_in of at most %s, or create it signed in",
			parent.ExpiresAt.UTC().Format(time.RFC3339), left)
	}
	return nil
}

// Tokens lists a user's tokens, or everyone's for user "", newest first.
func (s *Service) Tokens(ctx context.Context, user string) ([]Token, error) {
	rows, err := s.st.ListTokens(ctx, s.st.Pool, user)
	if err != nil {
		return nil, wrap(err, "list tokens")
	}
	out := make([]Token, len(rows))
	for i, t := range rows {
		out[i] = tokenOf(t)
	}
	return out, nil
}

// Token is one token by id.
func (s *Service) Token(ctx context.Context, id string) (Token, error) {
	t, err := s.st.GetToken(ctx, s.st.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, apperr.NotFound("Token %s not found", id)
	}
	if err != nil {
		return Token{}, wrap(err, "read token")
	}
	return tokenOf(t), nil
}

// RevokeToken ends a token at once: the next request with it is a 401.
func (s *Service) RevokeToken(ctx context.Context, id string) (Token, error) {
	t, err := s.st.RevokeToken(ctx, s.st.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, apperr.NotFound("Token %s not found", id)
	}
	if err != nil {
		return Token{}, wrap(err, "revoke token")
	}
	return tokenOf(t), nil
}

// TokenIdentity is who an API token acts for; a 401 when it is unknown, revoked or expired,
// or its user is disabled. Its last use is recorded (at most once a minute).
func (s *Service) TokenIdentity(ctx context.Context, secret string) (Identity, error) {
	bad := apperr.Unauthenticated("Invalid, expired or revoked API token")
	if !strings.HasPrefix(secret, TokenPrefix) {
		return Identity{}, bad
	}
	row, err := s.st.TokenIdentity(ctx, s.st.Pool, hashSecret(secret))
	if errors.Is(err, store.ErrNotFound) {
		return Identity{}, bad
	}
	if err != nil {
		return Identity{}, wrap(err, "read token")
	}
	if row.LastUsedAt == nil || s.now().Sub(*row.LastUsedAt) > time.Minute {
		if err := s.st.TouchToken(ctx, s.st.Pool, row.ID); err != nil {
			return Identity{}, wrap(err, "record token use")
		}
	}
	return Identity{User: row.Name, Role: Role(row.Role), ReadOnly: row.ReadOnly, Metrics: row.MetricsOnly, Via: ViaToken, TokenID: row.ID}, nil
}

// newSecret returns prefix + 32 random bytes (base64url) and the SHA-256 that is stored.
// Such a secret cannot be guessed, so a fast hash is enough (unlike passwords).
func newSecret(prefix string) (string, []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux
	}
	s := prefix + base64.RawURLEncoding.EncodeToString(b)
	return s, hashSecret(s)
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
