// Package strategydir loads strategies from directories (STRATEGY_DIRS) and keeps them in
// step with the files. Every *.js file directly inside a configured directory is a
// strategy whose origin is the file's absolute path and whose name is its class name.
//
// Rules:
//   - At start every file is synced, and a live file strategy of a configured directory
//     whose file is gone is soft-deleted.
//   - Changes are watched with fsnotify and debounced (Options.Debounce, 200 ms by
//     default): a file whose content hash differs from its current version becomes a new
//     version, usually well within one second of the write.
//   - A file whose code does not load is logged with the loader's error and leaves the
//     previous version in place.
//   - A removed file soft-deletes its strategy (versions stay for tasks and results); a
//     file that comes back revives the same strategy id with a new version.
//   - Nothing running is affected: a task keeps the exact version it was started with.
//
// Subdirectories are not scanned. Strategies of directories that are no longer configured
// are left as they are.
package strategydir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/backtestd/backtestd/internal/strategy"
)

// DefaultDebounce is how long a file must be quiet before it is loaded.
const DefaultDebounce = 200 * time.Millisecond

// Event reports the outcome of one sync of a file.
type Event struct {
	Path       string
	StrategyID string // empty when nothing was stored
	Version    int
	Result     strategy.SyncResult
	Removed    bool  // the file is gone and its strategy was deleted
	Err        error // the loader's *strategy.CodeError, or a database error
}

// Options tune a Watcher.
type Options struct {
	Debounce time.Duration // 0 means DefaultDebounce
	Logger   *slog.Logger
	// Events, when set, receives every sync outcome (tests use it). Sends block.
	Events chan<- Event
}

// Watcher keeps the strategies of some directories in step with their files.
type Watcher struct {
	dirs   []string // absolute
	svc    *strategy.Service
	opts   Options
	log    *slog.Logger
	fsw    *fsnotify.Watcher
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	pending map[string]*time.Timer
	ready   chan string
}

// Start syncs every *.js file of dirs, then watches them until ctx ends or Close is
// called. A directory that does not exist is logged and skipped.
func Start(ctx context.Context, dirs []string, svc *strategy.Service, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("strategy directories: %w", err)
	}
	w := &Watcher{svc: svc, opts: opts, log: log, fsw: fsw, done: make(chan struct{}),
		pending: map[string]*time.Timer{}, ready: make(chan string, 64)}
	for _, d := range dirs {
		if strings.TrimSpace(d) == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			log.Error("strategy directory", "dir", d, "err", err)
			continue
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			log.Warn("strategy directory skipped: not a readable directory", "dir", abs, "err", err)
			continue
		}
		// Watch before the first scan so no change between the two is lost.
		if err := fsw.Add(abs); err != nil {
			log.Error("watch strategy directory", "dir", abs, "err", err)
			continue
		}
		w.dirs = append(w.dirs, abs)
	}
	if err := w.initial(ctx); err != nil {
		fsw.Close()
		return nil, err
	}
	ctx, w.cancel = context.WithCancel(ctx)
	go w.loop(ctx)
	return w, nil
}

// Close stops watching and waits for the watcher to finish.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}

// initial syncs every file and deletes the strategies whose files are gone.
func (w *Watcher) initial(ctx context.Context) error {
	present := map[string]bool{}
	for _, dir := range w.dirs {
		files, err := jsFiles(dir)
		if err != nil {
			w.log.Error("read strategy directory", "dir", dir, "err", err)
			continue
		}
		for _, f := range files {
			present[f] = true
			w.sync(ctx, f)
		}
	}
	origins, err := w.svc.FileOrigins(ctx)
	if err != nil {
		return fmt.Errorf("strategy directories: %w", err)
	}
	for _, o := range origins {
		if !present[o] && w.covers(o) {
			w.sync(ctx, o)
		}
	}
	w.log.Info("strategy directories loaded", "dirs", w.dirs, "files", len(present))
	return nil
}

func (w *Watcher) covers(path string) bool {
	for _, d := range w.dirs {
		if filepath.Dir(path) == d {
			return true
		}
	}
	return false
}

func jsFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if isStrategyFile(e.Name()) && e.Type()&fs.ModeDir == 0 {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// isStrategyFile tells *.js files from editors' hidden and backup files.
func isStrategyFile(name string) bool {
	return strings.HasSuffix(name, ".js") && !strings.HasPrefix(name, ".")
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	defer w.fsw.Close()
	defer w.stopTimers()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if isStrategyFile(filepath.Base(ev.Name)) && w.covers(ev.Name) && ev.Op != fsnotify.Chmod {
				w.schedule(ev.Name)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Error("watching strategy directories", "err", err)
		case path := <-w.ready:
			w.sync(ctx, path)
		}
	}
}

// schedule (re)starts the quiet period of path.
func (w *Watcher) schedule(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[path]; ok {
		t.Reset(w.opts.Debounce)
		return
	}
	w.pending[path] = time.AfterFunc(w.opts.Debounce, func() {
		w.mu.Lock()
		delete(w.pending, path)
		w.mu.Unlock()
		select {
		case w.ready <- path:
		case <-w.done:
		}
	})
}

func (w *Watcher) stopTimers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, t := range w.pending {
		t.Stop()
		delete(w.pending, p)
	}
}

// sync makes the strategy of path match the file (or its absence) and reports it.
func (w *Watcher) sync(ctx context.Context, path string) {
	ev := Event{Path: path}
	code, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		id, removed, err := w.svc.RemoveFile(ctx, path)
		ev.StrategyID, ev.Removed, ev.Err = id, removed, err
		if err != nil {
			w.log.Error("strategy file removed, deleting its strategy failed", "file", path, "err", err)
		} else if removed {
			w.log.Info("strategy file removed, strategy deleted", "file", path, "strategy_id", id)
		}
	case err != nil:
		ev.Err = err
		w.log.Error("read strategy file", "file", path, "err", err)
	default:
		st, result, err := w.svc.SyncFile(ctx, path, string(code))
		ev.Result, ev.Err = result, err
		var ce *strategy.CodeError
		switch {
		case errors.As(err, &ce):
			attrs := []any{"file", path, "err", ce.Detail}
			if ce.Line > 0 {
				attrs = append(attrs, "line", ce.Line, "column", ce.Column)
			}
			w.log.Error("strategy file does not load; keeping the previous version", attrs...)
		case err != nil:
			w.log.Error("sync strategy file", "file", path, "err", err)
		default:
			ev.StrategyID, ev.Version = st.ID, st.Version
			if result != strategy.Unchanged {
				w.log.Info("strategy file loaded", "file", path, "strategy_id", st.ID, "version", st.Version, "change", result.String())
			}
		}
	}
	if w.opts.Events != nil {
		select {
		case w.opts.Events <- ev:
		case <-ctx.Done():
		}
	}
}
