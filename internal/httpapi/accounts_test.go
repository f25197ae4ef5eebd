package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/backtestd/backtestd/internal/auth"
)

// send is a request with who's token ("" for none) that returns the whole answer.
func (e *teamEnv) send(t *testing.T, who, method, path, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+e.tokens[who])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func (e *teamEnv) auditCount(t *testing.T, action, target string) int {
	t.Helper()
	entries, err := e.auth.Audit(context.Background(), auth.AuditFilter{Action: action, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range entries {
		if x.Action == action && (target == "" || x.Target == target) {
			n++
		}
	}
	return n
}

func loginBody(name, password string) string {
	b, _ := json.Marshal(map[string]string{"name": name, "password": password})
	return string(b)
}

// TestSignInBurst: 48 wrong sign-ins for one name from one address, sent at once, are
// charged before their passwords are checked: 10 are checked (401), the rest are refused
// with 429 and Retry-After; the refusals are audited once, not per request. Names over 200
// bytes are refused before anything (no audit, no charge to the address).
func TestSignInBurst(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)

	long := strings.Repeat("n", auth.MaxLoginName+1)
	for range 20 {
		resp, body := e.send(t, "", "POST", "/api/auth/login", loginBody(long, "wrong-password"))
		if resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(body["detail"]), "too long") {
			t.Fatalf("a %d-byte name: %d %v, want 400", len(long), resp.StatusCode, body)
		}
	}
	if resp, body := e.send(t, "", "POST", "/api/auth/login", loginBody(strings.Repeat("n", 60<<10), "x")); resp.StatusCode != 400 {
		t.Fatalf("a 60 KB name: %d %v, want 400", resp.StatusCode, body)
	}
	if n := e.auditCount(t, "login", ""); n != 0 {
		t.Errorf("%d audit rows for refused long names, want none", n)
	}
	// A name of exactly 200 bytes is an ordinary wrong sign-in.
	if resp, _ := e.send(t, "", "POST", "/api/auth/login", loginBody(strings.Repeat("n", auth.MaxLoginName), "wrong-password")); resp.StatusCode != 401 {
		t.Fatalf("a 200-byte name: %d, want 401", resp.StatusCode)
	}
	// The long names were not charged to the address, and a success gives its attempt
	// back.
	if resp, body := e.send(t, "", "POST", "/api/auth/login", loginBody("alice", teamPasswords["alice"])); resp.StatusCode != 200 {
		t.Fatalf("right password after the long names: %d %v", resp.StatusCode, body)
	}
	const n = 48
	codes := make([]int, n)
	retry := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, _ := e.send(t, "", "POST", "/api/auth/login", loginBody("vic", "wrong-password"))
			codes[i], retry[i] = resp.StatusCode, resp.Header.Get("Retry-After")
		})
	}
	wg.Wait()
	count := map[int]int{}
	for i, c := range codes {
		count[c]++
		if c == 429 {
			if s, err := strconv.Atoi(retry[i]); err != nil || s < 1 || s > 31 {
				t.Errorf("429 with Retry-After %q, want 1..31 seconds", retry[i])
			}
		}
	}
	// vic from this address had all 10 of its attempts: the 200-byte name was charged to
	// its own pair and to the address, which allows 30 (internal/auth/limit.go).
	if count[401] != 10 || count[429] != n-10 {
		t.Errorf("48 wrong sign-ins at once: %v, want 10 × 401 and %d × 429", count, n-10)
	}
	// Throttled sign-ins keep coming: still one audit row for the key and window.
	for range 20 {
		if resp, _ := e.send(t, "", "POST", "/api/auth/login", loginBody("vic", "wrong-password")); resp.StatusCode != 429 {
			t.Fatalf("sign-in for vic from a throttled address: %d, want 429", resp.StatusCode)
		}
	}
	if got := e.auditCount(t, "login.throttled", ""); got != 1 {
		t.Errorf("%d login.throttled rows for %d throttled sign-ins, want 1", got, count[429]+20)
	}
	if got := e.auditCount(t, "login.failed", "vic"); got != 10 {
		t.Errorf("%d login.failed rows for vic, want 10", got)
	}
}

// TestPasswordRules: an admin cannot give a user a weak password, through the API, when
// adding them or changing it.
func TestPasswordRules(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	for _, tt := range []struct{ password, want string }{
		{"short-pw", "too short"},
		{"password", "too short"},
		{"{name}-the-builder", "must not contain the user name"}, // {name}: the user's
		{"xx{NAME}xx-2718", "must not contain the user name"},
		{"qwertyuiop", "most common"},
		{"PASSWORD123", "most common"},
	} {
		pw := func(name string) string {
			return strings.NewReplacer("{name}", name, "{NAME}", strings.ToUpper(name)).Replace(tt.password)
		}
		resp, body := e.send(t, "admin", "POST", "/api/users", fmt.Sprintf(`{"name":"bob","role":"viewer","password":%q}`, pw("bob")))
		if resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(body["detail"]), tt.want) {
			t.Errorf("add bob with %q: %d %v, want 400 %q", tt.password, resp.StatusCode, body, tt.want)
		}
		resp, body = e.send(t, "admin", "PATCH", "/api/users/vic", fmt.Sprintf(`{"password":%q}`, pw("vic")))
		if resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(body["detail"]), tt.want) {
			t.Errorf("set vic's password to %q: %d %v, want 400 %q", tt.password, resp.StatusCode, body, tt.want)
		}
	}
	if resp, body := e.send(t, "admin", "POST", "/api/users", `{"name":"bob","role":"viewer","password":"sandy-dune-5772"}`); resp.StatusCode != 201 {
		t.Fatalf("add bob with a good password: %d %v", resp.StatusCode, body)
	}
	if resp, body := e.send(t, "", "POST", "/api/auth/login", loginBody("bob", "sandy-dune-5772")); resp.StatusCode != 200 {
		t.Errorf("bob signs in: %d %v", resp.StatusCode, body)
	}
	if resp, body := e.send(t, "admin", "PATCH", "/api/users/vic", `{"password":"amber-fox-1618"}`); resp.StatusCode != 200 {
		t.Errorf("set vic's password to a good one: %d %v", resp.StatusCode, body)
	}
}

// TestTokenCannotOutliveItsMaker: a token made with an API token expires no later, and
// does no more, than that token; signed in (or with a token that never expires) a user may
// make any token they may have.
func TestTokenCannotOutliveItsMaker(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	resp, body := e.send(t, "researcher", "POST", "/api/tokens", `{"name":"short","expires_in":"1h"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("alice's 1-hour token: %d %v", resp.StatusCode, body)
	}
	e.tokens["1h"] = body["token"].(string)
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"name":"forever"}`, 403},
		{`{"name":"longer","expires_in":"2h"}`, 403},
		{`{"name":"days","expires_in":"90d"}`, 403},
		{`{"name":"shorter","expires_in":"30m"}`, 201},
		{`{"name":"shorter-ro","expires_in":"59m","read_only":true}`, 201},
		{`{"name":"for root","user":"root","expires_in":"30m"}`, 403}, // not hers to manage
		{`{"name":"metrics","metrics_only":true,"expires_in":"30m"}`, 403},
	} {
		resp, body := e.send(t, "1h", "POST", "/api/tokens", tt.body)
		if resp.StatusCode != tt.want {
			t.Errorf("with a 1-hour token, create %s: %d %v, want %d", tt.body, resp.StatusCode, body, tt.want)
		}
		if tt.want == 403 && strings.Contains(tt.body, "forever") && !strings.Contains(fmt.Sprint(body["detail"]), "expire no later") {
			t.Errorf("the refusal does not say why: %v", body)
		}
	}
	// A token made by the 1-hour token is itself bound by its own expiry.
	resp, body = e.send(t, "1h", "POST", "/api/tokens", `{"name":"child","expires_in":"20m"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("child token: %d %v", resp.StatusCode, body)
	}
	e.tokens["child"] = body["token"].(string)
	if resp, body := e.send(t, "child", "POST", "/api/tokens", `{"name":"grandchild","expires_in":"30m"}`); resp.StatusCode != 403 {
		t.Errorf("a 20-minute token makes a 30-minute one: %d %v, want 403", resp.StatusCode, body)
	}
	// A read-only token cannot write at all, so it makes no token either.
	if resp, body := e.send(t, "read-only admin", "POST", "/api/tokens", `{"name":"x","read_only":true}`); resp.StatusCode != 403 {
		t.Errorf("read-only token makes a token: %d %v, want 403", resp.StatusCode, body)
	}
	// Her token that never expires may make one that never expires.
	if resp, body := e.send(t, "researcher", "POST", "/api/tokens", `{"name":"lasting"}`); resp.StatusCode != 201 {
		t.Errorf("a lasting token from a lasting one: %d %v", resp.StatusCode, body)
	}
}

// TestHealthDetail: with accounts on, /health answers anyone, but its detail (the process's
// memory, goroutines, connections, files) only an admin or a metrics token.
func TestHealthDetail(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	for _, tt := range []struct {
		who, path string
		want      int
		detail    bool
	}{
		{"", "/health", 200, false},
		{"viewer", "/health", 200, false},
		{"", "/health?detail=1", 401, false},
		{"viewer", "/health?detail=1", 403, false},
		{"researcher", "/health?detail=1", 403, false},
		{"admin", "/health?detail=1", 200, true},
		{"read-only admin", "/health?detail=1", 200, true},
		{"metrics", "/health?detail=1", 200, true},
	} {
		resp, body := e.send(t, tt.who, "GET", tt.path, "")
		_, hasDetail := body["goroutines"]
		if resp.StatusCode != tt.want || hasDetail != tt.detail {
			t.Errorf("%s as %q: %d %v, want %d with detail %v", tt.path, tt.who, resp.StatusCode, body, tt.want, tt.detail)
		}
	}
}
