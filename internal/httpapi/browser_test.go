package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/pgtest"
)

// TestHostGuard: without accounts only loopback names and addresses and ALLOWED_HOSTS are
// served, over HTTP and for the WebSocket upgrade; any other Host (a name rebound to
// 127.0.0.1) gets 421. With accounts the check applies only once ALLOWED_HOSTS is set.
func TestHostGuard(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgtest.NewDatabase(t))
	accounts := auth.NewService(st, 0)
	for _, tt := range []struct {
		name     string
		accounts bool
		allowed  []string
		host     string
		served   bool
	}{
		{"localhost", false, nil, "localhost", true},
		{"localhost with port", false, nil, "localhost:8080", true},
		{"localhost, upper case, trailing dot", false, nil, "LocalHost.:8080", true},
		{"a .localhost name", false, nil, "app.localhost:8080", true},
		{"127.0.0.1", false, nil, "127.0.0.1:8080", true},
		{"another 127/8 address", false, nil, "127.9.8.7", true},
		{"::1", false, nil, "[::1]:8080", true},
		{"::1 without port", false, nil, "[::1]", true},
		{"a rebound name", false, nil, "evil.example:8080", false},
		{"a name ending in localhost", false, nil, "evillocalhost", false},
		{"localhost as a subdomain", false, nil, "localhost.evil.example", false},
		{"127.0.0.1 as a subdomain", false, nil, "127.0.0.1.evil.example", false},
		{"this machine's LAN address", false, nil, "192.168.1.5:8080", false},
		{"listed", false, []string{"backtests.example.com"}, "Backtests.Example.com:443", true},
		{"listed with a port", false, []string{"backtests.example.com:8443"}, "backtests.example.com", true},
		{"loopback still served when a list is set", false, []string{"backtests.example.com"}, "localhost:8080", true},
		{"not listed", false, []string{"backtests.example.com"}, "evil.example", false},
		{"any", false, []string{"*"}, "evil.example", true},
		{"accounts, no list", true, nil, "evil.example", true},
		{"accounts, not listed", true, []string{"backtests.example.com"}, "evil.example", false},
		{"accounts, listed", true, []string{"backtests.example.com"}, "backtests.example.com", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deps := Deps{Store: st, Logger: quietLogger(), Hub: events.NewHub()}
			if tt.accounts {
				deps.Auth = accounts
			}
			srv := httptest.NewServer(New(Config{AllowedHosts: tt.allowed}, deps))
			defer srv.Close()
			for _, path := range []string{"/health", "/docs", "/ui/", "/api/backtests"} {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Host = tt.host
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if refused := resp.StatusCode == http.StatusMisdirectedRequest; refused == tt.served {
					t.Errorf("GET %s with Host %q: %d, want it served %v", path, tt.host, resp.StatusCode, tt.served)
				}
			}
			h := http.Header{"Host": {tt.host}}
			if tt.accounts {
				h.Set("Authorization", "Bearer nothing")
			}
			conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/logs", h)
			if conn != nil {
				conn.Close()
			}
			status := 101
			if resp != nil {
				status = resp.StatusCode
			}
			switch {
			case !tt.served && status != http.StatusMisdirectedRequest:
				t.Errorf("WebSocket upgrade with Host %q: %d (%v), want 421", tt.host, status, err)
			case tt.served && !tt.accounts && err != nil:
				t.Errorf("WebSocket upgrade with Host %q: %v (%d), want it open", tt.host, err, status)
			case tt.served && status == http.StatusMisdirectedRequest:
				t.Errorf("WebSocket upgrade with Host %q: 421, want it served", tt.host)
			}
		})
	}
}

// TestSecurityHeaders: the page and the docs carry the policy their scripts need, every
// other answer (the HTML report, JSON) one without scripts; none may be framed.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	id := e.submit(t, "")["task_id"].(string)
	e.waitStatus(t, id, "completed")
	for _, tt := range []struct {
		path, policy string
	}{
		{"/ui/", pagePolicy},
		{"/ui/runs", pagePolicy},
		{"/docs", "script-src 'self' 'sha256-"},
		{"/api/results/" + id + "/export?format=html", documentPolicy},
		{"/api/strategies", documentPolicy},
		{"/health", documentPolicy},
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", tt.path, resp.StatusCode)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, tt.policy) || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q with frame-ancestors 'none'", tt.path, csp, tt.policy)
		}
		if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q, want DENY", tt.path, got)
		}
	}
	if strings.Contains(documentPolicy, "script-src") || !strings.Contains(documentPolicy, "default-src 'none'") {
		t.Errorf("the report's policy %q lets scripts run", documentPolicy)
	}
}

// TestDocsPolicyHash: the hash in the docs page's policy is that of its inline script, so
// a changed script that would no longer run fails here rather than in a browser.
func TestDocsPolicyHash(t *testing.T) {
	t.Parallel()
	policy := docsPolicy([]byte("<p><script>let a = 1;</script>"))
	// echo -n 'let a = 1;' | openssl dgst -sha256 -binary | base64
	if want := "'sha256-" + "xY6QKfH9PRsQnLz56nj6MBwiK5oHg+im1Jkpdp1x/Ck=" + "'"; !strings.Contains(policy, want) {
		t.Errorf("policy %q, want %s", policy, want)
	}
}
