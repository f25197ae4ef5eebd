package marketdata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/store"
)

// UpdateArgs is the River job that refreshes one symbol of a source from its upstream. For
// the built-in source the upstream is the watched import folder (IMPORT_DIR): the file
// <SYMBOL>.csv (any case) in the generic or Yahoo layout.
type UpdateArgs struct {
	Source string `json:"source" river:"unique"`
	Symbol string `json:"symbol" river:"unique"`
	Force  bool   `json:"force"`
}

// Kind is the River job kind.
func (UpdateArgs) Kind() string { return "marketdata_update" }

// InsertOpts: one pending update per symbol; an import cannot succeed by retrying forever.
func (UpdateArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Deps are what the update worker needs.
type Deps struct {
	Store     *store.Store
	ImportDir string // IMPORT_DIR; empty means the built-in source has no upstream
	Logger    *slog.Logger
}

// UpdateWorker runs UpdateArgs jobs.
type UpdateWorker struct {
	river.WorkerDefaults[UpdateArgs]
	deps Deps
}

// NewUpdateWorker returns the worker for UpdateArgs jobs.
func NewUpdateWorker(deps Deps) *UpdateWorker {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	return &UpdateWorker{deps: deps}
}

// AddWorkers registers the market-data workers on a River client's worker bundle. The
// process that runs River workers (serve or worker) calls it next to the backtest worker.
func AddWorkers(workers *river.Workers, deps Deps) {
	river.AddWorker(workers, NewUpdateWorker(deps))
}

// Timeout bounds one refresh; a very large file still imports in seconds.
func (w *UpdateWorker) Timeout(*river.Job[UpdateArgs]) time.Duration { return 5 * time.Minute }

// Work imports the symbol's file from the import folder. Failures that retrying cannot fix
// (no folder configured, no file, a bad row, an unknown source) cancel the job with the
// reason; database errors are returned for River to retry.
func (w *UpdateWorker) Work(ctx context.Context, job *river.Job[UpdateArgs]) error {
	a := job.Args
	res, skipped, err := NewService(w.deps.Store, nil).Refresh(ctx, w.deps.ImportDir, a.Source, a.Symbol, a.Force)
	if err != nil {
		var perm *permanentError
		if errors.As(err, &perm) {
			w.deps.Logger.Warn("market data update failed", "source", a.Source, "symbol", a.Symbol, "err", err)
			return river.JobCancel(err)
		}
		return err
	}
	w.deps.Logger.Info("market data updated", "source", a.Source, "symbol", a.Symbol, "skipped", skipped,
		"inserted", res.Inserted, "updated", res.Updated, "unchanged", res.Unchanged)
	_ = river.RecordOutput(ctx, map[string]any{"skipped": skipped, "result": res})
	return nil
}

type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func permanent(format string, a ...any) error { return &permanentError{fmt.Sprintf(format, a...)} }

// Refresh imports symbol from dir (the built-in source's upstream). Without force, a file
// whose last bar is not newer than the stored bars is skipped (skipped = true).
func (svc *Service) Refresh(ctx context.Context, dir, source, symbol string, force bool) (ImportResult, bool, error) {
	var res ImportResult
	if source != BuiltinSource {
		return res, false, permanent("data source %s has no upstream to update from", source)
	}
	if dir == "" {
		return res, false, permanent("no import folder configured (set IMPORT_DIR) for data source %s", source)
	}
	path, err := findSymbolFile(dir, symbol)
	if err != nil {
		return res, false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return res, false, permanent("open %s: %v", path, err)
	}
	defer f.Close()
	loc, err := svc.ImportZone(ctx, source, symbol, "")
	if err != nil {
		return res, false, err
	}
	bars, err := ParseCSV(f, loc)
	if err != nil {
		return res, false, permanent("%s: %v", path, err)
	}
	if len(bars) == 0 {
		return res, false, permanent("%s has no bars", path)
	}
	tf := InferTimeframe(bars)
	if !force {
		last, err := q.LastBarTime(ctx, svc.st.Pool, store.LastBarTimeParams{Source: source, Symbol: symbol, Timeframe: tf})
		if err == nil && !bars[len(bars)-1].Time.After(last) {
			return ImportResult{Source: source, Symbol: symbol, Timeframe: tf, Received: len(bars), Unchanged: len(bars)}, true, nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return res, false, fmt.Errorf("last bar of %s: %w", symbol, err)
		}
	}
	res, err = svc.Import(ctx, source, symbol, "", tf, loc, bars)
	if err != nil {
		if _, isApp := asApp(err); isApp {
			return res, false, permanent("%v", err)
		}
		return res, false, err
	}
	return res, false, nil
}

// findSymbolFile looks for <symbol>.csv in dir, ignoring case.
func findSymbolFile(dir, symbol string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", permanent("read import folder %s: %v", dir, err)
	}
	want := strings.ToLower(symbol) + ".csv"
	for _, e := range entries {
		if !e.IsDir() && strings.ToLower(e.Name()) == want {
			return filepath.Join(dir, e.Name()), nil
		}
	}
	return "", permanent("no file %s.csv in import folder %s", symbol, dir)
}

// Inserter inserts River jobs; *river.Client satisfies it.
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// EnqueueUpdate checks the source and symbol and enqueues an update job. It returns the
// job id and whether an identical update was already waiting (then no new job is made).
func (svc *Service) EnqueueUpdate(ctx context.Context, source, symbol string, force bool) (int64, bool, error) {
	if err := svc.CheckSource(ctx, source); err != nil {
		return 0, false, err
	}
	if err := ValidSymbol(symbol); err != nil {
		return 0, false, err
	}
	if svc.queue == nil {
		return 0, false, errors.New("this process cannot queue refreshes (no job queue)")
	}
	r, err := svc.queue.Insert(ctx, UpdateArgs{Source: source, Symbol: symbol, Force: force}, nil)
	if err != nil {
		return 0, false, fmt.Errorf("enqueue update of %s/%s: %w", source, symbol, err)
	}
	return r.Job.ID, r.UniqueSkippedAsDuplicate, nil
}
