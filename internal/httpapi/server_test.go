package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openStore(t testing.TB, url string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func getJSON(t *testing.T, client *http.Client, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, body
}

func TestServiceRoutes(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgtest.NewDatabase(t))
	tests := []struct {
		name       string
		basePath   string
		path       string
		wantStatus int
		want       map[string]any
	}{
		{"root", "", "/", 200, map[string]any{"name": "backtestd", "version": "1.0.0", "docs": "/docs"}},
		{"health", "", "/health", 200, map[string]any{"status": "ok", "accounts": false}},
		{"health detail", "", "/health?detail=1", 200, map[string]any{"status": "ok", "websockets": float64(0)}},
		{"unknown path", "", "/api/nothing", 404, map[string]any{"detail": "Not Found"}},
		{"root under base path", "/bt", "/bt/", 200, map[string]any{"version": "1.0.0", "docs": "/bt/docs"}},
		{"health under base path", "/bt/", "/bt/health", 200, map[string]any{"status": "ok"}},
		{"outside base path", "/bt", "/health", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(New(Config{BasePath: tt.basePath}, Deps{Store: st, Logger: quietLogger()}))
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+tt.path, nil)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.want == nil {
				return
			}
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if body[k] != v {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
		})
	}
}

func TestHealthReportsUnreachableDatabase(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1; the pool connects lazily, so Open succeeds.
	st := openStore(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	srv := httptest.NewServer(New(Config{}, Deps{Store: st, Logger: quietLogger()}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/health", nil)
	status, body := getJSON(t, srv.Client(), req)
	if status != http.StatusServiceUnavailable || body["status"] != "unavailable" {
		t.Fatalf("got %d %v, want 503 unavailable", status, body)
	}
	if d, _ := body["detail"].(string); !strings.Contains(d, "database unreachable") {
		t.Errorf("detail %q does not give the reason", d)
	}
}

// TestCORS: by default no other origin may call (a page the user visits must not read or
// delete their work): no Access-Control-Allow-Origin and failing write preflights.
// CORS_ORIGINS=* without accounts restores the reference's any-origin policy, still
// without credentials; a listed origin gets credentials; with accounts "*" is refused at
// start (service) and unlisted origins get nothing.
func TestCORS(t *testing.T) {
	t.Parallel()
	st := openStore(t, pgtest.NewDatabase(t))
	accounts := auth.NewService(st, 0)
	for _, tt := range []struct {
		origins     []string
		accounts    bool
		origin      string
		allowOrigin string // the Access-Control-Allow-Origin answered, to reads and write preflights
		credentials bool
	}{
		{nil, false, "http://anywhere.example", "", false},
		{nil, false, "null", "", false},
		{[]string{"*"}, false, "http://anywhere.example", "*", false},
		{[]string{"*"}, false, "null", "*", false},
		{[]string{"http://ok.example"}, false, "http://ok.example", "http://ok.example", true},
		{[]string{"http://ok.example"}, false, "http://evil.example", "", false},
		{nil, true, "http://anywhere.example", "", false},
		{[]string{"http://ok.example"}, true, "http://ok.example", "http://ok.example", true},
		{[]string{"http://ok.example"}, true, "http://evil.example", "", false},
	} {
		var logged strings.Builder
		deps := Deps{Store: st, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
		if tt.accounts {
			deps.Auth = accounts
		}
		srv := httptest.NewServer(New(Config{CORSOrigins: tt.origins}, deps))
		if warned := strings.Contains(logged.String(), "level=WARN msg=\"CORS_ORIGINS=*"); warned != (tt.allowOrigin == "*") {
			t.Errorf("origins %v, accounts %v: warned %v at start, want a warning exactly for any origin; log: %s", tt.origins, tt.accounts, warned, logged.String())
		}
		for _, c := range []struct{ method, path, preflight string }{
			{"GET", "/health", ""},
			{"OPTIONS", "/health", "GET"},
			{"OPTIONS", "/api/strategies/str_1", "DELETE"},
			{"OPTIONS", "/api/backtests", "POST"},
		} {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
			req.Header.Set("Origin", tt.origin)
			if c.preflight != "" {
				req.Header.Set("Access-Control-Request-Method", c.preflight)
				req.Header.Set("Access-Control-Request-Headers", "content-type")
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			what := fmt.Sprintf("origins %v, accounts %v, origin %s, %s %s %s", tt.origins, tt.accounts, tt.origin, c.method, c.preflight, c.path)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.allowOrigin {
				t.Errorf("%s: Allow-Origin %q, want %q", what, got, tt.allowOrigin)
			}
			if got := resp.Header.Get("Access-Control-Allow-Credentials") == "true"; got != tt.credentials {
				t.Errorf("%s: credentials %v, want %v", what, got, tt.credentials)
			}
			allowed := strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), c.preflight)
			if c.preflight != "" && allowed != (tt.allowOrigin != "") {
				t.Errorf("%s: preflight allows %q, want it allowed %v", what, resp.Header.Get("Access-Control-Allow-Methods"), tt.allowOrigin != "")
			}
		}
		srv.Close()
	}
}

func TestErrorWriting(t *testing.T) {
	t.Parallel()
	s := &Server{log: quietLogger()}
	tests := []struct {
		name       string
		h          handlerFunc
		wantStatus int
		wantKey    string
		wantValue  string
	}{
		{"invalid", func(http.ResponseWriter, *http.Request) error { return apperr.Invalid("bad %s", "thing") }, 400, "detail", "bad thing"},
		{"not found", func(http.ResponseWriter, *http.Request) error { return apperr.NotFound("Task not found") }, 404, "detail", "Task not found"},
		{"conflict", func(http.ResponseWriter, *http.Request) error { return apperr.Conflict("no") }, 409, "detail", "no"},
		{"text PostgreSQL refuses", func(http.ResponseWriter, *http.Request) error {
			return fmt.Errorf("get task: %w", &pgconn.PgError{Code: "22021"})
		}, 400, "detail", "Invalid text: values must be valid UTF-8 without NUL (\\u0000) characters"},
		// 500s say nothing internal: the request id, which the log has with the cause.
		{"unhandled", func(http.ResponseWriter, *http.Request) error { return errors.New("boom") }, 500, "message", "internal error (request id %s)"},
		{"panic", func(http.ResponseWriter, *http.Request) error { panic("kaboom") }, 500, "message", "internal error (request id %s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			withRequestID(s.recoverer(s.handle(tt.h))).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if strings.Contains(tt.wantValue, "%s") {
				id := rec.Header().Get("X-Request-Id")
				if len(id) != 16 {
					t.Fatalf("request id %q", id)
				}
				tt.wantValue = fmt.Sprintf(tt.wantValue, id)
			}
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body[tt.wantKey] != tt.wantValue {
				t.Errorf("%s = %v, want %v (body %s)", tt.wantKey, body[tt.wantKey], tt.wantValue, rec.Body)
			}
		})
	}
}

// A request its client abandoned is not an internal error: no 500, no ERROR line; the same
// context.Canceled while the client still waits is one.
func TestErrorWritingClientGone(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError}))}
	h := withRequestID(s.handle(func(_ http.ResponseWriter, r *http.Request) error {
		return fmt.Errorf("load study_1: %w", context.Canceled)
	}))
	tests := []struct {
		name       string
		gone       bool
		wantStatus int
		wantLogged bool
	}{
		{"client gone", true, 499, false},
		{"client waiting", false, 500, true},
	}
	for _, tt := range tests {
		logged.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		if tt.gone {
			cancel()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/studies/1/results", nil).WithContext(ctx))
		cancel()
		if rec.Code != tt.wantStatus {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.wantStatus)
		}
		if got := strings.Contains(logged.String(), "internal error"); got != tt.wantLogged {
			t.Errorf("%s: ERROR logged %v, want %v: %q", tt.name, got, tt.wantLogged, logged.String())
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	type target struct {
		Name string  `json:"name"`
		Cash float64 `json:"cash"`
	}
	tests := []struct {
		name       string
		body       string
		strict     bool
		wantStatus int
		wantDetail string
	}{
		{"valid", `{"name":"a","cash":1}`, true, 0, ""},
		{"NUL character", `{"name":"a\u0000b"}`, false, 400, "Invalid text"},
		{"escaped backslash before u0000", `{"name":"a\\u0000b"}`, false, 0, ""},
		{"syntax", `{"name":`, false, 400, "Malformed JSON"},
		{"bad token", `{"name": nope}`, false, 400, "Malformed JSON at byte"},
		{"empty", ``, false, 400, "Request body is empty"},
		{"wrong type", `{"name": 5}`, false, 422, "Field 'name': expected string, got number"},
		{"not an object", `[1,2]`, false, 422, "must be a JSON object"},
		{"unknown field strict", `{"nme":"a"}`, true, 422, `Unknown field "nme"`},
		{"unknown field lax", `{"nme":"a"}`, false, 0, ""},
		{"trailing data", `{"name":"a"} {}`, false, 400, "unexpected data after"},
		{"too large", `{"name":"` + strings.Repeat("x", 200) + `"}`, false, 413, "limit is 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			var dst target
			err := decodeJSON(rec, req, &dst, 100, tt.strict)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			e, isApp := apperr.As(err)
			if !isApp {
				t.Fatalf("error %v is not an apperr", err)
			}
			if statusOf[e.Kind] != tt.wantStatus || !strings.Contains(e.Detail, tt.wantDetail) {
				t.Errorf("got %d %q, want %d containing %q", statusOf[e.Kind], e.Detail, tt.wantStatus, tt.wantDetail)
			}
		})
	}
}
