package service_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/pgcluster"
	"github.com/backtestd/backtestd/internal/results/resultstest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/service"
)

// TestDumpAndRestore does what docs/operations.md tells an operator to do for a backup:
// pg_dump (custom format) of a database with results, pg_restore into a fresh database,
// then the service on the restored database answers every result route byte for byte as
// it did on the original.
func TestDumpAndRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(600, 21)
	b.Bars(t, "RW", bars)
	b.Completed(t, "task_1", "RW", bars, map[string]any{"fast": 5, "slow": 20, "size": 10})
	b.Completed(t, "task_2", "RW", bars, map[string]any{"fast": 10, "slow": 40, "size": 10})
	b.Exec(t, `UPDATE tasks SET pinned_at = now() WHERE id = 'task_2'`)
	src := b.Store.Pool.Config().ConnString()

	dump, err := pgcluster.Tool("pg_dump")
	if err != nil {
		t.Fatal(err)
	}
	restore, err := pgcluster.Tool("pg_restore")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backtestd.dump")
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
	}
	// A BI role (docs/sql.md) puts its GRANTs in the dump, and roles are the cluster's, not
	// the dump's: the documented restore (--no-privileges, then bi-role create again) must
	// work where the role does not exist, so the role is dropped before restoring.
	biRole := fmt.Sprintf("bi_restore_%d", time.Now().UnixNano()%1_000_000_000)
	biCfg, err := service.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	biCfg.DatabaseURL = src
	if _, err := service.CreateBIRole(ctx, biCfg, nil, biRole, "Restore-role-pw-48213", store.DefaultBIRoleOptions); err != nil {
		t.Fatal(err)
	}
	run(dump, "--format=custom", "--file", file, "--dbname", src)
	b.Exec(t, "DROP OWNED BY "+biRole)
	b.Exec(t, "DROP ROLE "+biRole)

	// A fresh, empty database beside the original.
	name := "backtestd_restored_" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_")
	admin, err := pgx.Connect(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(src)
	if err != nil {
		t.Fatal(err)
	}
	restored := strings.Replace(src, "/"+cfg.Database, "/"+name, 1)
	run(restore, "--no-owner", "--no-privileges", "--exit-on-error", "--dbname", restored, file)
	biCfg.DatabaseURL = restored
	if _, err := service.CreateBIRole(ctx, biCfg, nil, biRole, "Restore-role-pw-48213", store.DefaultBIRoleOptions); err != nil {
		t.Fatalf("bi-role create on the restored database: %v", err)
	}
	t.Cleanup(func() {
		// Runs after the restored database is dropped, with the role's grants.
		c, err := pgx.Connect(context.Background(), src)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+biRole)
			c.Close(context.Background())
		}
	})

	serve := func(url string) *httptest.Server {
		t.Helper()
		c, err := service.LoadConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		c.DatabaseURL, c.Workers, c.SampleData = url, 0, false
		svc, err := service.New(ctx, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatalf("the service on %s: %v", url, err)
		}
		srv := httptest.NewServer(svc.Handler())
		t.Cleanup(func() { srv.Close(); svc.Close() })
		return srv
	}
	before, after := serve(src), serve(restored)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), src)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	get := func(srv *httptest.Server, path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	for _, path := range []string{
		"/api/backtests/task_1", "/api/backtests/task_2", "/api/backtests?limit=10",
		"/api/results/task_1/summary", "/api/results/task_1/statistics", "/api/results/task_1/trades?limit=1000",
		"/api/results/task_1/chart", "/api/results/task_1/drawdowns", "/api/results/task_1/export?format=json",
		"/api/results/task_2/summary", "/api/results/compare?task_ids=task_1,task_2",
	} {
		if a, b := get(before, path), get(after, path); a != b {
			t.Errorf("GET %s differs after the restore:\nbefore %.400s\nafter  %.400s", path, a, b)
		}
	}
	if body := get(after, "/api/backtests/task_2"); !strings.Contains(body, `"pinned_at":"`) {
		t.Errorf("the restored run lost its pin: %.300s", body)
	}
}
