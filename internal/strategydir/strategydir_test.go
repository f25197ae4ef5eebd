package strategydir_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/logtest"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
	"github.com/backtestd/backtestd/internal/strategydir"
)

func code(class string, fast int) string {
	return "/** " + class + " strategy. fast: fast period */\nclass " + class +
		" extends Strategy {\n  static params = { fast: " + itoa(fast) + " };\n  next() {}\n}\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

const broken = "class Broken extends Strategy {\n  next() {\n    x = ;\n  }\n}\n"

type bundle struct {
	svc    *strategy.Service
	events chan strategydir.Event
	logs   *logtest.Buffer
	w      *strategydir.Watcher
}

func setup(t *testing.T, svc *strategy.Service, dirs ...string) *bundle {
	t.Helper()
	b := &bundle{svc: svc, events: make(chan strategydir.Event, 100), logs: &logtest.Buffer{}}
	log := slog.New(slog.NewTextHandler(b.logs, nil))
	w, err := strategydir.Start(context.Background(), dirs, svc, strategydir.Options{Logger: log, Events: b.events, Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b.w = w
	// Drop the events of the initial sync, which Start sends before it returns.
	for len(b.events) > 0 {
		<-b.events
	}
	t.Cleanup(func() { _ = w.Close() })
	return b
}

func TestMain(m *testing.M) { runnertest.Main(m) }

func newService(t *testing.T) *strategy.Service {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return strategy.NewService(st, runnertest.Pool(t), nil)
}

// next waits for the next sync event of path, skipping others.
func (b *bundle) next(t *testing.T, path string) strategydir.Event {
	t.Helper()
	timeout := time.After(30 * time.Second) // a guard against hangs, not a timing assertion
	for {
		select {
		case ev := <-b.events:
			if ev.Path == path {
				return ev
			}
		case <-timeout:
			t.Fatalf("no sync event for %s", path)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func byOrigin(t *testing.T, svc *strategy.Service, origin string) *strategy.Strategy {
	t.Helper()
	list, err := svc.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Origin == origin {
			return s
		}
	}
	return nil
}

func TestInitialLoad(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	d1, d2 := t.TempDir(), t.TempDir()
	write(t, filepath.Join(d1, "alpha.js"), code("Alpha", 1))
	write(t, filepath.Join(d1, "broken.js"), broken)
	write(t, filepath.Join(d1, "notes.txt"), "not a strategy")
	write(t, filepath.Join(d2, "beta.js"), code("Beta", 2))
	b := setup(t, svc, d1, d2, filepath.Join(d1, "missing"))

	list, err := svc.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d strategies loaded, want 2", len(list))
	}
	alpha := byOrigin(t, svc, filepath.Join(d1, "alpha.js"))
	if alpha == nil || alpha.Name != "Alpha" || alpha.Version != 1 || alpha.Description != "Alpha strategy. fast: fast period" {
		t.Fatalf("alpha = %+v", alpha)
	}
	if beta := byOrigin(t, svc, filepath.Join(d2, "beta.js")); beta == nil || beta.Name != "Beta" {
		t.Fatalf("beta = %+v", beta)
	}
	logs := b.logs.String()
	if !strings.Contains(logs, "broken.js") || !strings.Contains(logs, "Invalid strategy code: Failed to load strategy: SyntaxError") || !strings.Contains(logs, "line=3") {
		t.Fatalf("the broken file is not reported with the loader error:\n%s", logs)
	}
	if !strings.Contains(logs, "missing") {
		t.Fatalf("the missing directory is not reported:\n%s", logs)
	}

	t.Run("a restart changes nothing", func(t *testing.T) {
		_ = b.w.Close()
		setup(t, svc, d1, d2)
		if again := byOrigin(t, svc, filepath.Join(d1, "alpha.js")); again.ID != alpha.ID || again.Version != 1 {
			t.Fatalf("after restart %+v", again)
		}
	})
}

func TestWatch(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "gamma.js")
	write(t, path, code("Gamma", 1))
	b := setup(t, svc, dir)
	first := byOrigin(t, svc, path)
	if first == nil {
		t.Fatal("gamma not loaded at start")
	}

	t.Run("a change becomes a new version", func(t *testing.T) {
		start := time.Now()
		write(t, path, code("Gamma", 2))
		ev := b.next(t, path)
		t.Logf("write to new version: %s (debounce 50ms)", time.Since(start))
		if ev.Err != nil || ev.Result != strategy.Updated || ev.Version != 2 || ev.StrategyID != first.ID {
			t.Fatalf("event %+v", ev)
		}
		if got := byOrigin(t, svc, path); fmt.Sprint(got.Params[0].Default) != "2" {
			t.Fatalf("params after change %+v", got.Params)
		}
	})

	t.Run("rewriting the same content adds no version", func(t *testing.T) {
		write(t, path, code("Gamma", 2))
		if ev := b.next(t, path); ev.Err != nil || ev.Result != strategy.Unchanged || ev.Version != 2 {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("broken code keeps the previous version", func(t *testing.T) {
		write(t, path, broken)
		ev := b.next(t, path)
		if ev.Err == nil {
			t.Fatalf("event %+v", ev)
		}
		if got := byOrigin(t, svc, path); got == nil || got.Version != 2 || got.ClassName != "Gamma" {
			t.Fatalf("strategy after broken write %+v", got)
		}
		if !strings.Contains(b.logs.String(), "keeping the previous version") {
			t.Fatalf("broken write not logged:\n%s", b.logs.String())
		}
	})

	t.Run("a new file becomes a strategy", func(t *testing.T) {
		other := filepath.Join(dir, "delta.js")
		write(t, other, code("Delta", 3))
		if ev := b.next(t, other); ev.Err != nil || ev.Result != strategy.Created {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("a removed file deletes its strategy and its return revives it", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if ev := b.next(t, path); !ev.Removed || ev.StrategyID != first.ID {
			t.Fatalf("event %+v", ev)
		}
		if got := byOrigin(t, svc, path); got != nil {
			t.Fatalf("strategy still listed after its file was removed: %+v", got)
		}
		if _, err := svc.VersionOf(context.Background(), first.ID, 2); err != nil {
			t.Fatalf("versions not kept: %v", err)
		}
		write(t, path, code("Gamma", 4))
		ev := b.next(t, path)
		if ev.Err != nil || ev.StrategyID != first.ID || ev.Version != 3 {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("an atomic rename over the file is seen", func(t *testing.T) {
		tmp := filepath.Join(dir, ".gamma.js.tmp")
		write(t, tmp, code("Gamma", 5))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		if ev := b.next(t, path); ev.Err != nil || ev.Version != 4 {
			t.Fatalf("event %+v", ev)
		}
	})
}

func TestRemovedWhileStopped(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "eps.js")
	write(t, path, code("Eps", 1))
	b := setup(t, svc, dir)
	_ = b.w.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	setup(t, svc, dir)
	if got := byOrigin(t, svc, path); got != nil {
		t.Fatalf("strategy of a file removed while stopped is still live: %+v", got)
	}
}
