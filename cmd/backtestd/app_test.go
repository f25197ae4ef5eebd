package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/logtest"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/service"
)

func TestMain(m *testing.M) {
	service.RunnerMain() // the test binary is also the app's runner process
	// A child process that is the program itself (see mcp_test.go).
	if os.Getenv(asMainEnv) == "1" {
		main() // exits with 1 on an error
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAppOnPortZero boots the whole program as `backtestd serve` does, on a port the system
// picks, runs a backtest through its HTTP API and stops it as SIGTERM would.
func TestAppOnPortZero(t *testing.T) {
	t.Parallel()
	cfg, _, err := config.Load("serve", []string{"-listen", "127.0.0.1:0", "-database-url", pgtest.NewDatabase(t), "-workers", "2"},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	a, err := openApp(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	base := "http://" + a.Addr().String()
	call := func(method, path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %v %v", method, path, res.StatusCode, m, err)
		}
		return m
	}
	code := `class Hold extends Strategy { next() { if (!this.position.size) this.buy({ size: 1 }); } }`
	body, _ := json.Marshal(map[string]any{"name": "Hold", "code": code})
	st := call("POST", "/api/strategies", string(body))
	task := call("POST", "/api/backtests", fmt.Sprintf(`{"strategy_id": %q, "symbol": "GLOBEX", "start_date": "2020-01-01", "end_date": "2020-12-31"}`, st["id"]))
	id, ok := task["task_id"].(string)
	if !ok {
		t.Fatalf("submit answered %v", task)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		status := call("GET", "/api/backtests/"+id, "")["status"]
		if status == "completed" {
			break
		}
		if status == "failed" || time.Now().After(deadline) {
			t.Fatalf("task %s is %v", id, status)
		}
	}
	if sum, _ := call("GET", "/api/results/"+id+"/summary", "")["data"].(map[string]any); sum["total_trades"] != 1.0 {
		t.Errorf("summary %v", sum)
	}
	waitMetrics(t, base+"/metrics", `backtestd_workers 2`, `backtestd_tasks{state="completed"} 1`,
		`backtestd_task_run_seconds_count{outcome="completed"} 1`, `backtestd_db_pool_max_connections{pool="api"}`,
		`backtestd_db_pool_connections{pool="workers",state="idle"}`, `backtestd_runner_processes`, `backtestd_runner_busy 0`,
		`backtestd_http_request_duration_seconds_count{code="200",method="GET",route="/api/backtests/{task_id}"}`,
		`go_goroutines`, `process_resident_memory_bytes`)

	// The listener is wrapped in httpapi.GuardFraming: a request with both Content-Length
	// and Transfer-Encoding is answered 400 and its connection closed, so the request
	// smuggled behind it is never answered.
	conn, err := net.Dial("tcp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, "POST /api/backtests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+
		"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	answer, _ := io.ReadAll(conn) // to the server's close
	conn.Close()
	if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") || strings.Count(string(answer), "HTTP/1.1 ") != 1 {
		t.Errorf("Content-Length with Transfer-Encoding: %q, want one 400 and the connection closed", answer)
	}

	stop() // as SIGTERM does
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the signal: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the context ended")
	}
	if _, err := http.Get(base + "/health"); err == nil {
		t.Error("the app still answers after Run returned")
	}
}

// waitMetrics reads url until its metrics hold every line prefix in want (a run is counted
// a moment after its task shows completed), and fails the test if they do not in time.
func waitMetrics(t *testing.T, url string, want ...string) {
	t.Helper()
	var missing []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", url, res.StatusCode, b)
		}
		missing = missing[:0]
		for _, w := range want {
			if !strings.Contains("\n"+string(b), "\n"+w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range missing {
		t.Errorf("%s lacks %s", url, w)
	}
}

// TestWorkerServesMetrics: `backtestd worker -metrics-listen` serves its metrics, and
// stops with the worker.
func TestWorkerServesMetrics(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker(ctx, []string{"-database-url", pgtest.NewDatabase(t), "-workers", "3", "-metrics-listen", "127.0.0.1:0"},
			func(string) string { return "" }, &logs)
	}()
	addr := regexp.MustCompile(`msg="serving /metrics" addr=(\S+)`)
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil; time.Sleep(50 * time.Millisecond) {
		if m = addr.FindStringSubmatch(logs.String()); m == nil && time.Now().After(deadline) {
			stop()
			t.Fatalf("the worker did not serve /metrics:\n%s", logs.String())
		}
	}
	waitMetrics(t, "http://"+m[1]+"/metrics", `backtestd_workers 3`, `backtestd_tasks{state="pending"} 0`,
		`backtestd_db_pool_connections{pool="workers",state="acquired"}`, `backtestd_runner_processes`)
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker did not stop")
	}
	if _, err := http.Get("http://" + m[1] + "/metrics"); err == nil {
		t.Error("/metrics still answers after the worker stopped")
	}
}
