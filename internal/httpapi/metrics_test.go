package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/logtest"
	"github.com/backtestd/backtestd/internal/pgtest"
)

// scrape reads /metrics with token ("" for none).
func (e *taskEnv) scrape(t *testing.T, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetrics: /metrics has the latency of requests under their route pattern (an id in
// the path makes no series of its own), open WebSocket connections, and the tasks' states,
// run durations and queue waits after a backtest ran.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	id := e.submit(t, "")["task_id"].(string)
	e.waitStatus(t, id, "completed")
	e.do(t, "GET", "/api/strategies/", "")
	e.do(t, "GET", "/api/backtests/task_999", "")
	e.do(t, "GET", "/no/such/path", "")
	e.dial(t, "/ws/"+id)

	want := []string{
		`backtestd_http_request_duration_seconds_count{code="200",method="GET",route="/api/strategies"} 1`,
		`backtestd_http_request_duration_seconds_count{code="404",method="GET",route="/api/backtests/{task_id}"} 1`,
		`backtestd_http_request_duration_seconds_count{code="404",method="GET",route="unmatched"} 1`,
		`backtestd_http_request_duration_seconds_count{code="200",method="POST",route="/api/backtests"} 1`,
		`backtestd_websocket_connections 1`,
		`backtestd_tasks{state="completed"} 1`,
		`backtestd_tasks{state="pending"} 0`,
		`backtestd_queue_oldest_wait_seconds 0`,
		`backtestd_task_run_seconds_count{outcome="completed"} 1`,
		`backtestd_queue_wait_seconds_count 1`,
		`backtestd_worker_busy 0`,
	}
	// The WebSocket is counted once its handler runs, and the run once its worker is back
	// from storing it, both a moment after what the test waited for.
	var body string
	var missing []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var status int
		if status, body = e.scrape(t, ""); status != 200 {
			t.Fatalf("/metrics: %d %s", status, body)
		}
		missing = missing[:0]
		for _, w := range want {
			if !strings.Contains(body, w+"\n") {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range missing {
		t.Errorf("/metrics lacks %q", w)
	}
	if strings.Contains(body, "task_999") || strings.Contains(body, id) {
		t.Error("/metrics names an id: a series per task would grow without bound")
	}
}

// TestMetricsAccess: with accounts on, /metrics is for admins and metrics tokens; a metrics
// token reads nothing else, and only admins make one.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	for who, want := range map[string]int{"": 401, "viewer": 403, "researcher": 403, "admin": 200, "metrics": 200} {
		if status, body := e.scrape(t, e.tokens[who]); status != want {
			t.Errorf("/metrics as %q: %d, want %d (%.200s)", who, status, want, body)
		}
	}
	if status, body := e.as(t, "metrics", "GET", "/api/strategies/", ""); status != 403 || !strings.Contains(body.(map[string]any)["detail"].(string), "/metrics only") {
		t.Errorf("metrics token on the API: %d %v, want 403", status, body)
	}
	if status, _ := e.as(t, "researcher", "POST", "/api/tokens", `{"metrics_only":true}`); status != 403 {
		t.Errorf("a researcher made a metrics token: %d, want 403", status)
	}
	status, body := e.as(t, "admin", "POST", "/api/tokens", `{"name":"prometheus","metrics_only":true}`)
	if status != 201 {
		t.Fatalf("admin makes a metrics token: %d %v", status, body)
	}
	made := body.(map[string]any)
	if made["metrics_only"] != true {
		t.Errorf("token listed without metrics_only: %v", made)
	}
	if status, _ := e.scrape(t, made["token"].(string)); status != 200 {
		t.Errorf("/metrics with the new metrics token: %d", status)
	}
	if status, _ := e.doAs(t, made["token"].(string), "POST", "/api/strategies/", `{"name":"x","code":"x"}`); status != 403 {
		t.Errorf("metrics token writes: %d, want 403", status)
	}
}

// TestRequestIDInEveryLogLine: each line logged while serving a request carries the id
// the response gave in X-Request-Id.
func TestRequestIDInEveryLogLine(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgtest.NewDatabase(t))
	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := New(Config{}, Deps{Store: st, Logger: log})
	ids := map[string]string{}
	for _, path := range []string{"/api/strategies/str_999", "/health", "/api/backtests/?status=nonsense", "/api/data/nosuch/symbols"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ids[path] = rec.Header().Get("X-Request-Id")
		if ids[path] == "" {
			t.Fatalf("%s: no X-Request-Id", path)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) < len(ids) {
		t.Fatalf("%d log lines for %d requests:\n%s", len(lines), len(ids), logs.String())
	}
	reqID := regexp.MustCompile(`request_id=(\S+)`)
	for _, l := range lines {
		m := reqID.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("a request's log line without its request id: %s", l)
			continue
		}
		found := false
		for _, id := range ids {
			found = found || m[1] == id
		}
		if !found {
			t.Errorf("log line with a request id no response gave: %s", l)
		}
	}
}

// BenchmarkAuthCost is what accounts add to a request: GET /api/strategies/{id} without
// accounts, with an API token (one indexed lookup of the token and its user) and with the
// page's session cookie (the same for the session).
func BenchmarkAuthCost(b *testing.B) {
	st := openStore(b, pgtest.NewDatabase(b))
	if _, err := st.Pool.Exec(context.Background(), `INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'S', 1);
		INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash) VALUES ('str_1', 1, 'S', 'x', 'S', '[]', 'api', 'h')`); err != nil {
		b.Fatal(err)
	}
	accounts, token := AccountsForTest(b, st)
	sess, err := accounts.Login(context.Background(), auth.LoginAttempt{Name: "root", Password: "tiger-lily-9041", RemoteAddr: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	strategies := StrategiesForTest(b, st)
	for _, c := range []struct {
		name string
		deps Deps
		set  func(*http.Request)
	}{
		{"off", Deps{Store: st, Logger: quietLogger(), Strategies: strategies}, func(*http.Request) {}},
		{"token", Deps{Store: st, Logger: quietLogger(), Strategies: strategies, Auth: accounts}, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }},
		{"session", Deps{Store: st, Logger: quietLogger(), Strategies: strategies, Auth: accounts}, func(r *http.Request) { r.AddCookie(&http.Cookie{Name: sessionCookie, Value: sess.Secret}) }},
	} {
		h := New(Config{}, c.deps)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", "http://localhost/api/strategies/str_1", nil) // a Host the service answers
				c.set(req)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
