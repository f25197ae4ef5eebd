package service

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

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
	bars, _, err := marketdata.NewService(st, nil).Bars(ctx, "builtin", "FLAGGED", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), "1d")
	if err != nil || len(bars) != 2 {
		t.Fatalf("bars after the update: %v %v", bars, err)
	}
}
