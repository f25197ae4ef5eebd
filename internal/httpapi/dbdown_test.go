package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
)

// TestDatabaseAwayIs503: the database stops accepting connections mid-flight (existing
// ones terminated, new ones refused: ALTER DATABASE … ALLOW_CONNECTIONS false); then every
// GET route of the router answers without a 500, and the routes that read the database,
// the runs list first, answer 503 with Retry-After. With accounts on, the credential check
// itself reads the database: the same.
func TestDatabaseAwayIs503(t *testing.T) {
	t.Parallel()
	for _, accounts := range []bool{false, true} {
		t.Run(fmt.Sprintf("accounts=%v", accounts), func(t *testing.T) {
			t.Parallel()
			e := newTaskEnvAccounts(t, 0, accounts)
			task := e.submit(t, "")["task_id"].(string)
			if code, body := e.do(t, "GET", "/api/backtests", ""); code != 200 {
				t.Fatalf("runs list with the database up: %d %v", code, body)
			}
			stopDatabase(t, e.st.Pool.Config().ConnConfig.Database, e.st.Pool.Config().ConnString())

			routes, ok := New(Config{}, Deps{Store: e.st}).(chi.Routes)
			if !ok {
				t.Fatal("the handler is not a chi router")
			}
			fill := strings.NewReplacer("{strategy_id}", "str_1", "{task_id}", task, "{study_id}", "study_1",
				"{version}", "1", "{source}", "testsrc", "{symbol}", "AAA", "{name}", "root", "{id}", "tok_1", "*", "index.html")
			got := map[string]int{}
			err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
				if method != http.MethodGet {
					return nil
				}
				path := fill.Replace(pattern)
				if len(path) > 1 {
					path = strings.TrimSuffix(path, "/")
				}
				req, err := http.NewRequest(method, e.srv.URL+path, nil)
				if err != nil {
					return err
				}
				if e.token != "" {
					req.Header.Set("Authorization", "Bearer "+e.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return fmt.Errorf("GET %s: %w", path, err)
				}
				resp.Body.Close()
				got[strings.TrimSuffix(pattern, "/")] = resp.StatusCode
				if resp.StatusCode == http.StatusInternalServerError {
					t.Errorf("GET %s with the database away: 500", path)
				}
				if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
					t.Errorf("GET %s: 503 without Retry-After", path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"/health", "/api/backtests", "/api/backtests/{task_id}", "/api/strategies", "/api/studies"} {
				if _, walked := got[p]; !walked {
					t.Errorf("no route %s walked", p)
				} else if got[p] != http.StatusServiceUnavailable {
					t.Errorf("GET %s with the database away: %d, want 503", p, got[p])
				}
			}
			t.Logf("%d GET routes: %v", len(got), got)
		})
	}
}

// stopDatabase makes database db refuse new connections and ends its open ones, as a
// database restart or failover would, until the test ends.
func stopDatabase(t *testing.T, db, connString string) {
	t.Helper()
	ctx := context.Background()
	u, err := url.Parse(connString)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres"
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS true`, pgx.Identifier{db}.Sanitize())); err != nil {
			t.Errorf("allow connections again: %v", err)
		}
		admin.Close(context.Background())
	})
	if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS false`, pgx.Identifier{db}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseUnreachable: which errors are the database being away (503) and which are
// not (a failed query stays a 500).
func TestDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A real connection refused: a port nothing listens on.
	_, refused := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	if refused == nil {
		t.Fatal("connected to port 1")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("list runs: %w", refused), true},
		{"deadline waiting for a connection", fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"client left", canceled.Err(), false},
		{"a query error", fmt.Errorf("list runs: %w", apperr.Invalid("x")), false},
		{"nil", nil, false},
	} {
		if got := apperr.DatabaseUnreachable(tt.err); got != tt.want {
			t.Errorf("%s (%v): %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
