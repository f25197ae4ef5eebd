package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

func TestImportCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "bars.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,12,10,11,200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,9,10,11,200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"first import", []string{"--database-url", url, "--symbol", "MINE", "--name", "Mine", good}, "imported 2 1d bars of builtin/MINE (2024-01-02 to 2024-01-03): 2 new, 0 updated, 0 unchanged", ""},
		{"again", []string{"--database-url", url, "--symbol", "MINE", good}, "0 new, 0 updated, 2 unchanged", ""},
		{"bad row", []string{"--database-url", url, "--symbol", "MINE", bad}, "", "Invalid CSV at line 3: high 9 is below low 10"},
		{"no symbol", []string{"--database-url", url, good}, "", "--symbol and exactly one file are required"},
		{"unknown source", []string{"--database-url", url, "--source", "nope", "--symbol", "X", good}, "", "Data source not found: nope"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"import"}, tc.args...), getenv, &out, &errOut)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(out.String(), tc.wantOut) {
			t.Errorf("%s: %v, output %q, want %q", tc.name, err, out.String(), tc.wantOut)
		}
	}
}

// TestUpdateWorkerUsesImportDirFlag runs the market-data update job on the workers the
// registration hook adds, configured by -import-dir alone (no IMPORT_DIR in the environment).
func TestUpdateWorkerUsesImportDirFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flagged.csv"), []byte("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,12,10,11,200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load("worker", []string{"-import-dir", dir}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := marketdata.EnsureBuiltin(ctx, st, false); err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	register := registerJobWorkers(cfg, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if register == nil {
		t.Fatal("no job workers registered")
	}
	register(workers)
	client, err := river.NewClient(riverpgxv5.New(st.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Workers: workers,
		FetchPollInterval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Stop(ctx) }()
	if _, _, err := marketdata.NewService(st, client).EnqueueUpdate(ctx, "builtin", "FLAGGED", false); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-done:
		if ev.Kind != river.EventKindJobCompleted {
			t.Fatalf("update job ended %s: %v", ev.Kind, ev.Job.Errors)
		}
	case <-time.After(time.Minute):
		t.Fatal("update job did not finish within a minute")
	}
	bars, err := marketdata.NewService(st, nil).Bars(ctx, "builtin", "FLAGGED", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), "1d")
	if err != nil || len(bars) != 2 {
		t.Fatalf("bars after the update: %v %v", bars, err)
	}
}
