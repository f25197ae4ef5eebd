package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/store"
)

// dbSnapshot is a digest of every row of every table the service's database holds (the
// River queue included), to show that a refused request changed nothing.
func dbSnapshot(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := st.Pool.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	out := map[string]string{}
	for _, tbl := range tables {
		var digest string
		if err := st.Pool.QueryRow(ctx, `SELECT coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM `+tbl+` x`).Scan(&digest); err != nil {
			t.Fatalf("%s: %v", tbl, err)
		}
		out[tbl] = digest
	}
	return out
}

func changedTables(before, after map[string]string) []string {
	var changed []string
	for k := range maps.Keys(after) {
		if before[k] != after[k] {
			changed = append(changed, k)
		}
	}
	slices.Sort(changed)
	return changed
}

// TestCrossSiteWritesRefused walks the router: every state-changing route (every method
// but GET, HEAD and OPTIONS), with accounts off and on, is refused with 403 when a browser
// sends it from another site (a cross-site Origin; Sec-Fetch-Site: cross-site; a "simple"
// text/plain request as a page's fetch or form makes), with bodies that would succeed
// otherwise, and the database is unchanged afterwards. Reads are not refused. The same
// pin sent same-origin does change the database, so the check can see a change.
func TestCrossSiteWritesRefused(t *testing.T) {
	t.Parallel()
	for _, accounts := range []bool{false, true} {
		t.Run(fmt.Sprintf("accounts=%v", accounts), func(t *testing.T) {
			t.Parallel()
			e := newTaskEnvAccounts(t, 0, accounts)
			task := e.submit(t, "")["task_id"].(string)
			code, body := e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31","space":{"fast":[5,10]}}`)
			if code != 200 {
				t.Fatalf("study: %d %v", code, body)
			}
			study := body.(map[string]any)["id"].(string)
			routes := New(Config{}, Deps{Store: e.st}).(chi.Routes)
			fill := strings.NewReplacer("{strategy_id}", "str_1", "{task_id}", task, "{study_id}", study, "{version}", "1",
				"{source}", "testsrc", "{symbol}", "AAA", "{name}", "root", "{id}", "tok_1", "*", "index.html")
			// Bodies that would be served if the request were let through.
			bodies := map[string]string{
				"POST /api/backtests/":                  `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"}`,
				"POST /backtest":                        `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"}`,
				"POST /api/strategies/":                 `{"name":"Evil","code":` + jsonString(taskTestStrategy) + `}`,
				"PUT /api/strategies/{strategy_id}/":    `{"code":` + jsonString(taskTestStrategy) + `}`,
				"POST /api/admin/prune":                 `{"older_than":"1d","dry_run":false}`,
				"POST /api/users":                       `{"name":"mallory","role":"admin","password":"long-enough-pass-771"}`,
				"POST /api/data/{source}/{symbol}/bars": `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1}]`,
			}
			before := dbSnapshot(t, e.st)
			writes := 0
			_ = chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
				path := fill.Replace(pattern)
				if len(path) > 1 {
					path = strings.TrimSuffix(path, "/")
				}
				b, ok := bodies[method+" "+pattern]
				if !ok && !safeMethod(method) {
					b = "{}"
				}
				if !safeMethod(method) {
					writes++
				}
				for _, attack := range []struct {
					name    string
					headers map[string]string
				}{
					{"cross-site Origin", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}},
					{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example", "Content-Type": "application/json"}},
					{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://app.127.0.0.1.example", "Content-Type": "application/json"}},
					{"simple request", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example", "Content-Type": "text/plain; charset=application/json"}},
					{"form", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}},
					{"opaque origin", map[string]string{"Origin": "null", "Content-Type": "application/json"}},
				} {
					req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(b))
					for k, v := range attack.headers {
						req.Header.Set(k, v)
					}
					if e.token != "" {
						req.Header.Set("Authorization", "Bearer "+e.token)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					var out struct{ Detail string }
					_ = json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					refused := resp.StatusCode == 403 && strings.HasPrefix(out.Detail, "Cross-site request refused")
					if safeMethod(method) == refused {
						t.Errorf("%s %s (%s): %d %q, want refused: %v", method, path, attack.name, resp.StatusCode, out.Detail, !safeMethod(method))
					}
				}
				return nil
			})
			inTable := 0 // the route table's state-changing entries: all must have been walked
			for key := range routeAccess {
				if method, _, _ := strings.Cut(key, " "); !safeMethod(method) {
					inTable++
				}
			}
			if writes != inTable || writes < 20 {
				t.Fatalf("%d state-changing routes walked, the route table has %d", writes, inTable)
			}
			if changed := changedTables(before, dbSnapshot(t, e.st)); len(changed) > 0 {
				t.Errorf("refused requests changed %v", changed)
			}
			// Control: the page's own pin (same origin) goes through and changes the database.
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/backtests/"+task+"/pin", nil)
			req.Header.Set("Origin", e.srv.URL)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			if e.token != "" {
				req.Header.Set("Authorization", "Bearer "+e.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || len(changedTables(before, dbSnapshot(t, e.st))) == 0 {
				t.Errorf("same-origin pin: %d, or no change seen", resp.StatusCode)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCrossSiteRule holds crossSite to its rule case by case: who is let through (the
// service's own pages, directly, behind BASE_PATH or a proxy; listed origins; clients
// that are not browsers) and who is not.
func TestCrossSiteRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		origins []string
		host    string
		headers map[string]string
		allowed bool
	}{
		{"curl: no Origin, no Sec-Fetch-Site", nil, "127.0.0.1:8080", nil, true},
		{"the page itself, older browser", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:8080"}, true},
		{"the page itself, by name", nil, "Localhost:8080", map[string]string{"Origin": "http://localhost:8080"}, true},
		{"the page itself, current browser", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}, true},
		{"behind a proxy that rewrites Host", nil, "127.0.0.1:8080", map[string]string{"Origin": "https://bt.example.com", "X-Forwarded-Host": "bt.example.com"}, true},
		{"behind two proxies", nil, "127.0.0.1:8080", map[string]string{"Origin": "https://bt.example.com", "X-Forwarded-Host": "bt.example.com, edge.internal"}, true},
		{"behind a proxy, current browser", nil, "127.0.0.1:8080", map[string]string{"Origin": "https://bt.example.com", "Sec-Fetch-Site": "same-origin"}, true},
		{"a bookmark or typed address", nil, "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"a listed origin", []string{"https://dash.example.com"}, "127.0.0.1:8080", map[string]string{"Origin": "https://dash.example.com", "Sec-Fetch-Site": "cross-site"}, true},
		{"a listed origin written with a slash", []string{"https://Dash.example.com/"}, "127.0.0.1:8080", map[string]string{"Origin": "https://dash.example.com", "Sec-Fetch-Site": "cross-site"}, true},
		{"CORS_ORIGINS=*", []string{"*"}, "127.0.0.1:8080", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, true},
		{"another site, older browser", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://evil.example"}, false},
		{"another site, current browser", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, false},
		{"another site claiming the host as forwarded host is still cross-site", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "X-Forwarded-Host": "evil.example"}, false},
		{"a sibling subdomain", nil, "bt.example.com", map[string]string{"Origin": "https://evil.example.com", "Sec-Fetch-Site": "same-site"}, false},
		{"another port", nil, "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:9999"}, false},
		{"an opaque origin (sandboxed frame, data: URL)", nil, "127.0.0.1:8080", map[string]string{"Origin": "null"}, false},
		{"a cross-site browser request without Origin", nil, "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"not a listed origin", []string{"https://dash.example.com"}, "127.0.0.1:8080", map[string]string{"Origin": "https://dash.example.com.evil.example"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := &Server{cfg: Config{CORSOrigins: c.origins}}
			r := httptest.NewRequest("POST", "http://"+c.host+"/api/backtests", nil)
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			err := s.crossSite(r)
			if (err == nil) != c.allowed {
				t.Errorf("crossSite: %v, want allowed %v", err, c.allowed)
			}
		})
	}
}

// TestCrossSiteUnderBasePath: the page served under BASE_PATH writes through (its Origin
// is the service's own; paths play no part in an origin), a page elsewhere does not.
func TestCrossSiteUnderBasePath(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	srv := httptest.NewServer(New(Config{BasePath: "/bt"}, Deps{Store: e.st, Logger: quietLogger(), Tasks: nil}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		origin, site string
		want         int
	}{{srv.URL, "same-origin", 200}, {srv.URL, "", 200}, {"http://evil.example", "cross-site", 403}} {
		req, _ := http.NewRequest("POST", srv.URL+"/bt/api/admin/prune", strings.NewReader(`{"older_than":"3650d","dry_run":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", c.origin)
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Origin %s, Sec-Fetch-Site %q: %d, want %d", c.origin, c.site, resp.StatusCode, c.want)
		}
	}
}

// TestCrossSiteWebSocket: a WebSocket upgrade follows the same rule as a write, accounts
// off: a page elsewhere cannot open one (by Origin, or by Sec-Fetch-Site), the service's
// own page, a page behind a proxy and a client without Origin can.
func TestCrossSiteWebSocket(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws/logs"
	for _, c := range []struct {
		name string
		h    http.Header
		want int
	}{
		{"no Origin", nil, 101},
		{"own origin", http.Header{"Origin": {e.srv.URL}}, 101},
		{"own origin, same-origin", http.Header{"Origin": {e.srv.URL}, "Sec-Fetch-Site": {"same-origin"}}, 101},
		{"behind a proxy", http.Header{"Origin": {"https://bt.example.com"}, "X-Forwarded-Host": {"bt.example.com"}}, 101},
		{"another site", http.Header{"Origin": {"http://evil.example"}}, 403},
		{"another site, cross-site", http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, 403},
		{"cross-site with no Origin", http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403},
	} {
		d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
		conn, resp, err := d.Dial(url, c.h)
		if conn != nil {
			conn.Close()
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, status, err, c.want)
		}
	}
}
