package httpapi

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
)

// The account routes: sign-in and sign-out, who am I, users (admins), API tokens (one's
// own; admins anyone's) and the audit log (admins).
func (s *Server) mountAccounts(r chi.Router) {
	r.Post("/api/auth/login", s.handle(s.accounts(s.login)))
	r.Post("/api/auth/logout", s.handle(s.accounts(s.logout)))
	r.Get("/api/auth/me", s.handle(s.me))
	r.Get("/api/users", s.handle(s.accounts(s.listUsers)))
	r.Post("/api/users", s.handle(s.accounts(s.addUser)))
	r.Patch("/api/users/{name}", s.handle(s.accounts(s.updateUser)))
	r.Get("/api/tokens", s.handle(s.accounts(s.listTokens)))
	r.Post("/api/tokens", s.handle(s.accounts(s.createToken)))
	r.Delete("/api/tokens/{id}", s.handle(s.accounts(s.revokeToken)))
	r.Get("/api/audit", s.handle(s.accounts(s.audit)))
}

var (
	errAccountsOff = apperr.Conflict("Accounts are off: this service runs for one user on a loopback address (see AUTH in docs/team-and-security.md)")
	errBadScheme   = apperr.Unauthenticated("Unsupported Authorization scheme: send 'Authorization: Bearer <token>'")
	errCSRF        = apperr.Forbidden("Missing or wrong CSRF token: send the csrf_token of GET /api/auth/me in the X-CSRF-Token header")
)

// accounts answers 409 for the account routes when accounts are off.
func (s *Server) accounts(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.auth == nil {
			return errAccountsOff
		}
		return h(w, r)
	}
}

// meBody is GET /api/auth/me: who the caller is, and whether accounts are on at all.
type meBody struct {
	Accounts  bool      `json:"accounts"`
	User      *string   `json:"user"`
	Role      auth.Role `json:"role"`
	ReadOnly  bool      `json:"read_only"`
	Via       auth.Via  `json:"via"`
	CSRFToken string    `json:"csrf_token,omitempty"`
}

func meOf(id auth.Identity, accounts bool) meBody {
	return meBody{Accounts: accounts, User: auth.By(id), Role: id.Role, ReadOnly: id.ReadOnly, Via: id.Via, CSRFToken: id.CSRF}
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, meOf(caller(r), s.auth != nil))
	return nil
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := decodeJSON(w, r, &body, 64<<10, true); err != nil {
		return err
	}
	if body.Name == "" || body.Password == "" {
		return apperr.Unprocessable("name and password are required")
	}
	sess, err := s.auth.Login(r.Context(), auth.LoginAttempt{Name: body.Name, Password: body.Password, RemoteAddr: clientAddr(r), RequestID: requestID(r.Context())})
	if err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, sess.Secret, sess.Expires))
	writeJSON(w, http.StatusOK, meOf(sess.Identity, true))
	return nil
}

// sessionCookie is the session's cookie: not readable by scripts, sent only to this
// service's paths and not with cross-site requests, and only over HTTPS when the request
// came over HTTPS (directly or through a proxy that says so).
func (s *Server) sessionCookie(r *http.Request, value string, expires time.Time) *http.Cookie {
	c := &http.Cookie{
		Name:     sessionCookie,
		Value:    value,
		Path:     s.cfg.BasePath + "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	}
	if value == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	return c
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil && caller(r).Via == auth.ViaSession {
		if err := s.auth.Logout(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, s.sessionCookie(r, "", time.Time{}))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	users, err := s.auth.Users(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, users)
	return nil
}

func (s *Server) addUser(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name     string    `json:"name"`
		Role     auth.Role `json:"role"`
		Password string    `json:"password"`
	}
	if err := decodeJSON(w, r, &body, 64<<10, true); err != nil {
		return err
	}
	u, err := s.auth.AddUser(r.Context(), body.Name, body.Role, body.Password)
	if err != nil {
		return err
	}
	noteTarget(r, u.Name)
	writeJSON(w, http.StatusCreated, u)
	return nil
}

func (s *Server) updateUser(w http.ResponseWriter, r *http.Request) error {
	var c auth.UserChange
	if err := decodeJSON(w, r, &c, 64<<10, true); err != nil {
		return err
	}
	u, err := s.auth.UpdateUser(r.Context(), chi.URLParam(r, "name"), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// listTokens is the caller's tokens; an admin may ask for anyone's (?user=NAME) or
// everyone's (?user=*).
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	id := caller(r)
	user := r.URL.Query().Get("user")
	switch {
	case user == "":
		user = id.User
	case user == "*" && id.Role == auth.RoleAdmin:
		user = ""
	default:
		if err := auth.MayManage(id, user); err != nil {
			return err
		}
	}
	tokens, err := s.auth.Tokens(r.Context(), user)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tokens)
	return nil
}

// createdToken is POST /api/tokens's answer: the token and, this once, its secret.
type createdToken struct {
	auth.Token
	Secret string `json:"token"`
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		User      string `json:"user"`
		Name      string `json:"name"`
		ReadOnly  bool   `json:"read_only"`
		Metrics   bool   `json:"metrics_only"`
		ExpiresIn string `json:"expires_in"`
	}
	if err := decodeJSON(w, r, &body, 64<<10, true); err != nil {
		return err
	}
	id := caller(r)
	if body.User == "" {
		body.User = id.User
	}
	if err := auth.MayManage(id, body.User); err != nil {
		return err
	}
	if body.Metrics && id.Role != auth.RoleAdmin {
		return apperr.Forbidden("Forbidden: only an admin may create a metrics token")
	}
	ttl, err := auth.ParseLifetime(body.ExpiresIn)
	if err != nil {
		return err
	}
	secret, t, err := s.auth.CreateToken(r.Context(), id, auth.NewToken{User: body.User, Name: body.Name, ReadOnly: body.ReadOnly, Metrics: body.Metrics, TTL: ttl})
	if err != nil {
		return err
	}
	noteTarget(r, t.ID)
	writeJSON(w, http.StatusCreated, createdToken{Token: t, Secret: secret})
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	t, err := s.auth.Token(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if err := auth.MayManage(caller(r), t.User); err != nil {
		return err
	}
	if t, err = s.auth.RevokeToken(r.Context(), t.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// audit is GET /api/audit?actor=&action=&since=&until=&skip=&limit=, newest first.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	skip, limit, err := paging(r, 100, 1000)
	if err != nil {
		return err
	}
	f := auth.AuditFilter{Actor: r.URL.Query().Get("actor"), Action: r.URL.Query().Get("action"), Skip: skip, Limit: limit}
	for _, p := range []struct {
		name     string
		endOfDay bool
		dst      **time.Time
	}{{"since", false, &f.Since}, {"until", true, &f.Until}} {
		t, err := queryTime(r, p.name, p.endOfDay)
		if err != nil {
			return err
		}
		if !t.IsZero() {
			*p.dst = &t
		}
	}
	entries, err := s.auth.Audit(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}
