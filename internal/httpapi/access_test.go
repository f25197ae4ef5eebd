package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/auth"
)

// teamPasswords are the test users' passwords (long enough, not containing the name, not
// common: see auth.checkPassword); root's is AccountsForTest's.
var teamPasswords = map[string]string{"root": "tiger-lily-9041", "alice": "blue-heron-2718", "vic": "quiet-maple-3141"}

// teamEnv is the task environment with accounts on: root (admin, owns str_1 and task_1),
// alice (researcher), vic (viewer), each with an API token, a read-only token of root and a
// metrics token of vic.
type teamEnv struct {
	*taskEnv
	auth   *auth.Service
	tokens map[string]string // who → API token
	task   string            // root's task
	study  string            // root's study
	rootTk string            // id of root's token
}

func newTeamEnv(t *testing.T) *teamEnv {
	t.Helper()
	e := &teamEnv{taskEnv: newTaskEnvAccounts(t, 0, true), tokens: map[string]string{}}
	e.auth = auth.NewService(e.st, 0)
	e.tokens["admin"] = e.token
	ctx := context.Background()
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"alice", auth.RoleResearcher}, {"vic", auth.RoleViewer}} {
		if _, err := e.auth.AddUser(ctx, u.name, u.role, teamPasswords[u.name]); err != nil {
			t.Fatal(err)
		}
		secret, _, err := e.auth.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: u.name})
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[string(u.role)] = secret
	}
	ro, tok, err := e.auth.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: "root", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	e.tokens["read-only admin"] = ro
	e.rootTk = tok.ID
	// A viewer's metrics token: /metrics only, though a viewer may not read the metrics.
	if e.tokens["metrics"], _, err = e.auth.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: "vic", Metrics: true}); err != nil {
		t.Fatal(err)
	}
	e.task = e.submit(t, "")["task_id"].(string)
	code, body := e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31","space":{"fast":[5,10]}}`)
	if code != 200 {
		t.Fatalf("study: %d %v", code, body)
	}
	e.study = body.(map[string]any)["id"].(string)
	return e
}

// as sends a request with who's token ("" for none).
func (e *teamEnv) as(t *testing.T, who, method, path, body string) (int, any) {
	t.Helper()
	return e.doAs(t, e.tokens[who], method, path, body)
}

// TestRouteAccessByRole walks the router: every route, as every role and anonymously,
// answers 401 or 403 exactly when its rule says so. A route added without a rule cannot be
// built (checkRoutes), and one added with a rule is checked here. Writes by the admin go
// to unknown ids so that nothing they delete spoils the other cases; everyone else aims at
// root's strategy, task and token, which only root and admins may change.
func TestRouteAccessByRole(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	routes, ok := New(Config{}, Deps{Store: e.st}).(chi.Routes)
	if !ok {
		t.Fatal("the handler is not a chi router")
	}
	type route struct{ method, pattern string }
	var all []route
	if err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		all = append(all, route{method, pattern})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// checkRoutes has every route a rule; here every rule has its route (no stale entry).
	walked := map[string]bool{}
	for _, r := range all {
		walked[r.method+" "+r.pattern] = true
	}
	for key := range routeAccess {
		if !walked[key] {
			t.Errorf("routeAccess has %q, which no route serves", key)
		}
	}
	fill := func(pattern, who string) string {
		own := who != "admin" // the admin aims at ids that do not exist
		pick := func(mine, unknown string) string {
			if own {
				return mine
			}
			return unknown
		}
		r := strings.NewReplacer(
			"{strategy_id}", pick("str_1", "str_999"),
			"{task_id}", pick(e.task, "task_999"),
			"{study_id}", pick(e.study, "study_999"),
			"{version}", "1", "{source}", "testsrc", "{symbol}", "AAA",
			"{name}", pick("root", "nobody"),
			"{id}", pick(e.rootTk, "tok_999"),
			"*", "index.html",
		)
		p := r.Replace(pattern)
		if strings.HasPrefix(pattern, "/backtest/") {
			p = "/backtest/" + e.task
		}
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		return p
	}
	// want is 0 when the rule lets who through, else the refusal's status.
	want := func(a access, method, who string) int {
		write := method != "GET" && method != "HEAD"
		switch {
		case a.rule == auth.Public:
			return 0
		case who == "":
			return 401
		case who == "metrics":
			if a.rule == auth.Metrics {
				return 0
			}
			return 403
		case who == "read-only admin":
			if write {
				return 403
			}
			return 0
		case who == "admin":
			return 0
		case a.rule == auth.Admin, a.rule == auth.Metrics, a.rule == auth.Owner: // root owns the targets
			return 403
		case a.rule == auth.Create && who == "viewer":
			return 403
		case a.rule == auth.Self && method == "DELETE": // root's token
			return 403
		}
		return 0
	}
	for _, r := range all {
		a := routeAccess[r.method+" "+r.pattern]
		for _, c := range []struct {
			who     string
			slash   bool // the path as the pattern has it, with a trailing slash where it has one
			escaped bool // a data source and symbol with an escaped slash (AC%2FME), which chi routes as one segment
		}{{"", false, false}, {"", true, false}, {"viewer", false, false}, {"viewer", true, false}, {"viewer", false, true}, {"researcher", false, false}, {"researcher", true, false}, {"researcher", false, true}, {"read-only admin", false, false}, {"metrics", false, false}, {"admin", false, false}} {
			who := c.who
			if c.escaped && !strings.Contains(r.pattern, "{symbol}") && !strings.Contains(r.pattern, "{source}") {
				continue
			}
			body := ""
			if r.method != "GET" && r.method != "HEAD" && r.method != "DELETE" {
				body = "{}"
			}
			path := fill(r.pattern, who)
			if c.escaped {
				if strings.Contains(r.pattern, "{symbol}") {
					path = strings.Replace(path, "/AAA", "/AC%2FME", 1)
				} else {
					path = strings.Replace(path, "/testsrc/", "/test%2Fsrc/", 1)
				}
			}
			if c.slash && len(r.pattern) > 1 && strings.HasSuffix(r.pattern, "/") {
				path += "/"
			}
			status, _ := e.as(t, who, r.method, path, body)
			w := want(a, r.method, who)
			if r.method == "POST" && r.pattern == mcpPath && who == "read-only admin" {
				w = 0 // an MCP request is not a write itself: each tool call is checked (isRelay)
			}
			switch {
			case status >= 500:
				t.Errorf("%s %s as %q (rule %s): %d", r.method, path, who, a.rule, status)
			case w == 0 && (status == 401 || status == 403):
				t.Errorf("%s %s as %q (rule %s): %d, want it let through", r.method, path, who, a.rule, status)
			case w != 0 && status != w:
				t.Errorf("%s %s as %q (rule %s): %d, want %d", r.method, path, who, a.rule, status, w)
			}
		}
	}
}

// TestSessionSignInCSRFAndSignOut: the page's way in. A session cookie reads; a write with
// it needs the CSRF token; signing out ends it; an expired session is refused.
func TestSessionSignInCSRFAndSignOut(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	send := func(method, path, body, csrf string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if csrf != "" {
			req.Header.Set(csrfHeader, csrf)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if s, _ := send("GET", "/api/auth/me", "", ""); s != 401 {
		t.Fatalf("me before sign-in: %d, want 401", s)
	}
	if s, body := send("POST", "/api/auth/login", `{"name":"alice","password":"wrong-password"}`, ""); s != 401 || body["detail"] != "Wrong user name or password" {
		t.Fatalf("wrong password: %d %v", s, body)
	}
	if s, body := send("POST", "/api/auth/login", `{"name":"nobody","password":"wrong-password"}`, ""); s != 401 || body["detail"] != "Wrong user name or password" {
		t.Fatalf("unknown user: %d %v (must not differ from a wrong password)", s, body)
	}
	s, me := send("POST", "/api/auth/login", `{"name":"alice","password":"blue-heron-2718"}`, "")
	if s != 200 || me["user"] != "alice" || me["role"] != "researcher" || me["csrf_token"] == "" {
		t.Fatalf("sign-in: %d %v", s, me)
	}
	u, _ := http.NewRequest("GET", e.srv.URL+"/", nil)
	var cookie *http.Cookie
	for _, ck := range jar.Cookies(u.URL) {
		if ck.Name == sessionCookie {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	csrf := me["csrf_token"].(string)
	if s, _ := send("GET", "/api/strategies", "", ""); s != 200 {
		t.Errorf("read with the session: %d", s)
	}
	if s, body := send("POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01"}`, ""); s != 403 || !strings.Contains(fmt.Sprint(body["detail"]), "CSRF") {
		t.Errorf("write without the CSRF token: %d %v, want 403", s, body)
	}
	if s, _ := send("POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01"}`, "wrong"); s != 403 {
		t.Errorf("write with a wrong CSRF token: %d, want 403", s)
	}
	s, task := send("POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01"}`, csrf)
	if s != 200 || task["created_by"] != "alice" {
		t.Fatalf("write with the CSRF token: %d %v", s, task)
	}
	// Her own task she may cancel; root's she may not.
	if s, _ := send("DELETE", "/api/backtests/"+task["task_id"].(string), "", csrf); s != 200 {
		t.Errorf("cancel own task: %d", s)
	}
	if s, body := send("DELETE", "/api/backtests/"+e.task, "", csrf); s != 403 || !strings.Contains(fmt.Sprint(body["detail"]), "belongs to root") {
		t.Errorf("cancel root's task: %d %v", s, body)
	}
	if s, _ := send("POST", "/api/auth/logout", "", csrf); s != 204 {
		t.Errorf("sign out: %d", s)
	}
	if s, _ := send("GET", "/api/strategies", "", ""); s != 401 {
		t.Errorf("read after signing out: %d, want 401", s)
	}
	// The old cookie, replayed, is dead too.
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/strategies", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie.Value})
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("replayed cookie after sign-out: %v %v", resp.StatusCode, err)
	}

	// An expired session is refused.
	if s, _ := send("POST", "/api/auth/login", `{"name":"alice","password":"blue-heron-2718"}`, ""); s != 200 {
		t.Fatal("second sign-in failed")
	}
	if _, err := e.st.Pool.Exec(context.Background(), `UPDATE sessions SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if s, body := send("GET", "/api/strategies", "", ""); s != 401 || !strings.Contains(fmt.Sprint(body["detail"]), "Session expired") {
		t.Errorf("expired session: %d %v", s, body)
	}
	// Sign-ins are in the audit log, failed ones without an actor.
	entries, err := e.auth.Audit(context.Background(), auth.AuditFilter{Action: "login"})
	if err != nil {
		t.Fatal(err)
	}
	var failed, ok int
	for _, x := range entries {
		switch {
		case x.Action == "login.failed" && x.Actor == nil:
			failed++
		case x.Action == "login" && x.Actor != nil && *x.Actor == "alice":
			ok++
		}
	}
	if failed != 2 || ok != 2 {
		t.Errorf("audit: %d failed and %d successful sign-ins, want 2 and 2: %+v", failed, ok, entries)
	}
}

// TestTokenRevocationAndDisabledUsers: a revoked token and a disabled user's token and
// session stop working at the next request.
func TestTokenRevocationAndDisabledUsers(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	if s, _ := e.as(t, "researcher", "GET", "/api/auth/me", ""); s != 200 {
		t.Fatalf("me: %d", s)
	}
	// alice revokes her own token through the API.
	s, _ := e.as(t, "researcher", "GET", "/api/tokens", "")
	if s != 200 {
		t.Fatalf("list own tokens: %d", s)
	}
	list, err := e.auth.Tokens(context.Background(), "alice")
	if err != nil || len(list) != 1 {
		t.Fatalf("alice's tokens: %v %v", list, err)
	}
	if list[0].LastUsedAt == nil {
		t.Error("last use not recorded")
	}
	if s, _ := e.as(t, "researcher", "DELETE", "/api/tokens/"+list[0].ID, ""); s != 200 {
		t.Fatalf("revoke: %d", s)
	}
	if s, _ := e.as(t, "researcher", "GET", "/api/auth/me", ""); s != 401 {
		t.Errorf("revoked token: %d, want 401", s)
	}
	// Disabling vic ends their token at once; enabling brings it back.
	if s, _ := e.as(t, "admin", "PATCH", "/api/users/vic", `{"disabled":true}`); s != 200 {
		t.Fatalf("disable: %d", s)
	}
	if s, _ := e.as(t, "viewer", "GET", "/api/strategies", ""); s != 401 {
		t.Errorf("disabled user's token: %d, want 401", s)
	}
	if s, _ := e.as(t, "admin", "PATCH", "/api/users/vic", `{"disabled":false}`); s != 200 {
		t.Fatalf("enable: %d", s)
	}
	if s, _ := e.as(t, "viewer", "GET", "/api/strategies", ""); s != 200 {
		t.Errorf("enabled again: %d, want 200", s)
	}
	// The last admin cannot be demoted or disabled.
	if s, _ := e.as(t, "admin", "PATCH", "/api/users/root", `{"role":"viewer"}`); s != 409 {
		t.Errorf("demote the last admin: %d, want 409", s)
	}
	// Bad credentials are a 401, not an anonymous request.
	e.tokens["forged"] = auth.TokenPrefix + "AAAA"
	if s, _ := e.as(t, "forged", "GET", "/health", ""); s != 200 {
		t.Errorf("public route with a bad token: %d, want 200", s)
	}
	if s, _ := e.as(t, "forged", "GET", "/api/strategies", ""); s != 401 {
		t.Errorf("bad token: %d, want 401", s)
	}
}

// TestLoginRateLimit: after the burst of failures, sign-ins are refused with 429 without
// checking the password, even the right one.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	var got []int
	for range 12 {
		s, _ := e.as(t, "", "POST", "/api/auth/login", `{"name":"vic","password":"guess-guess"}`)
		got = append(got, s)
	}
	for i, s := range got {
		want := 401
		if i >= 10 {
			want = 429
		}
		if s != want {
			t.Fatalf("attempt %d: %d, want %d (all: %v)", i+1, s, want, got)
		}
	}
	if s, _ := e.as(t, "", "POST", "/api/auth/login", `{"name":"vic","password":"quiet-maple-3141"}`); s != 429 {
		t.Errorf("right password while throttled: %d, want 429", s)
	}
}

// TestWebSocketNeedsCredentials: without credentials the upgrade is refused; with a token
// it opens; a cross-site page cannot open one with a user's cookie.
func TestWebSocketNeedsCredentials(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws/" + e.task
	dial := func(h http.Header) (int, error) {
		d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
		conn, resp, err := d.Dial(url, h)
		if conn != nil {
			conn.Close()
		}
		if resp != nil {
			return resp.StatusCode, err
		}
		return 0, err
	}
	if s, err := dial(nil); err == nil || s != 401 {
		t.Errorf("no credentials: %d %v, want 401", s, err)
	}
	if s, err := dial(http.Header{"Authorization": {"Bearer " + e.tokens["viewer"]}}); err != nil || s != 101 {
		t.Errorf("viewer token: %d %v, want 101", s, err)
	}
	if s, err := dial(http.Header{"Authorization": {"Bearer " + e.tokens["viewer"]}, "Origin": {"http://evil.example"}}); err == nil || s != 403 {
		t.Errorf("foreign origin: %d %v, want 403", s, err)
	}
	if s, err := dial(http.Header{"Authorization": {"Bearer " + e.tokens["viewer"]}, "Origin": {e.srv.URL}}); err != nil || s != 101 {
		t.Errorf("own origin: %d %v, want 101", s, err)
	}
}

// TestAuditLog: changes are recorded with who made them; only admins read the log.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	s, _ := e.as(t, "researcher", "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01"}`)
	if s != 200 {
		t.Fatalf("submit: %d", s)
	}
	if s, _ := e.as(t, "researcher", "DELETE", "/api/backtests/"+e.task, ""); s != 403 {
		t.Fatalf("refused cancel: %d", s)
	}
	if s, _ := e.as(t, "viewer", "GET", "/api/audit", ""); s != 403 {
		t.Errorf("viewer reads the audit log: %d, want 403", s)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/audit?actor=alice&action=task.", nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens["admin"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []auth.AuditRecord
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil || resp.StatusCode != 200 {
		t.Fatalf("audit: %d %v", resp.StatusCode, err)
	}
	// The refused cancel is not a change; the submission is, naming the new task.
	if len(entries) != 1 || entries[0].Action != "task.run" || *entries[0].Actor != "alice" || !strings.HasPrefix(entries[0].Target, "task_") || entries[0].RequestID == "" {
		t.Errorf("audit entries: %+v", entries)
	}
	var n int
	if err := e.st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bi_audit WHERE actor = 'alice'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("bi_audit: %d rows for alice, %v", n, err)
	}
}

// TestAccessUnderBasePath: the rules hold for a service mounted under a prefix.
func TestAccessUnderBasePath(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	srv := httptest.NewServer(New(Config{BasePath: "/bt"}, Deps{Store: e.st, Logger: quietLogger(), Strategies: StrategiesForTest(t, e.st), Auth: e.auth}))
	t.Cleanup(srv.Close)
	e.srv = srv
	for _, c := range []struct {
		who, method, path string
		want              int
	}{
		{"", "GET", "/bt/health", 200},
		{"", "GET", "/bt/api/strategies", 401},
		{"", "GET", "/bt/api/strategies/", 401},
		{"viewer", "GET", "/bt/api/strategies", 200},
		{"viewer", "POST", "/bt/api/strategies", 403},
		{"viewer", "POST", "/bt/api/strategies/", 403},
		{"researcher", "PUT", "/bt/api/strategies/str_1", 403},
		{"researcher", "GET", "/bt/api/audit", 403},
	} {
		body := ""
		if c.method != "GET" {
			body = "{}"
		}
		if s, _ := e.as(t, c.who, c.method, c.path, body); s != c.want {
			t.Errorf("%s %s as %q: %d, want %d", c.method, c.path, c.who, s, c.want)
		}
	}
}
