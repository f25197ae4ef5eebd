// Package retention bounds what a year of use leaves in the database: it deletes finished
// runs (with their results, logs and attempts) and studies (with their combinations) older
// than an age, in small batches that never hold up the service, keeps what users pinned,
// can first write what it deletes to a JSON-lines file, and vacuums so the space is reused.
// It serves `backtestd prune`, the admin API route and the daily RETENTION schedule.
package retention

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pnlmonths"
	"github.com/backtestd/backtestd/internal/store"
)

// DefaultBatch is how many runs (or studies) one transaction deletes: small enough that
// each commits in well under a second, so the runs list, workers and other writers never
// wait on a prune.
const DefaultBatch = 200

// MinAge is the youngest age a prune takes unless forced: one typed by mistake (1ns, 1e-9d,
// 36s for 36d) would otherwise delete every finished run in one go.
const MinAge = 24 * time.Hour

// CheckAge refuses (400) a prune of what is younger than MinAge unless force. It is the
// one owner of the rule: `backtestd prune`, POST /api/admin/prune and Prune itself (the
// daily RETENTION prune included) ask it.
func CheckAge(age time.Duration, force bool) error {
	if age >= MinAge || force {
		return nil
	}
	return apperr.Invalid("Refusing to prune runs and studies younger than one day: the age %s would delete nearly every finished run. "+
		"Give an age of at least 1d, or force it (--force on the command line, \"force\": true in the API) if that is what you mean", age)
}

// Options say what Prune deletes and how.
type Options struct {
	// Before: runs and studies created before it go (finished and unpinned ones only).
	Before time.Time
	// Export, when not nil, receives every deleted run and study as one JSON document per
	// line, written (and synced, when it can be) before the batch holding it is deleted.
	Export io.Writer
	// Batch is how many rows one transaction deletes; 0 is DefaultBatch.
	Batch int
	// Pause between batches leaves the database to other work; 0 none.
	Pause time.Duration
	// Vacuum runs VACUUM (INDEX_CLEANUP ON) on the result tables after deleting anything.
	Vacuum bool
	// DryRun counts what would go without deleting or exporting anything.
	DryRun bool
	// Force allows a Before less than MinAge ago (see CheckAge).
	Force bool
}

// Report is what Prune deleted (or, for a dry run, would delete).
type Report struct {
	Tasks    int64     `json:"tasks"`
	Studies  int64     `json:"studies"`
	Versions int64     `json:"versions"` // bar versions whose bars went (see pruneVersions)
	Before   time.Time `json:"before"`
	DryRun   bool      `json:"dry_run"`
	Vacuumed bool      `json:"vacuumed"`
}

// Service prunes and pins.
type Service struct {
	st  *store.Store
	log *slog.Logger
}

// New returns a Service over st.
func New(st *store.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{st: st, log: log}
}

// syncer is an export file that can be flushed to disk.
type syncer interface{ Sync() error }

// Prune deletes finished, unpinned runs and studies created before o.Before, batch by
// batch, each batch in its own transaction (rows locked by others are skipped and left for
// the next prune). Pending and running tasks and studies are never touched. On error, the
// batches already committed stay deleted (and exported) and the report counts them.
func (s *Service) Prune(ctx context.Context, o Options) (Report, error) {
	rep := Report{Before: o.Before, DryRun: o.DryRun}
	if err := CheckAge(time.Since(o.Before), o.Force); err != nil {
		return rep, err
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.DryRun {
		err := s.st.WithSnapshot(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT
				(SELECT count(*) FROM tasks WHERE created_at < $1 AND pinned_at IS NULL AND status IN ('completed', 'failed', 'cancelled')),
				(SELECT count(*) FROM studies WHERE created_at < $1 AND pinned_at IS NULL AND status IN ('completed', 'failed', 'cancelled'))`,
				o.Before).Scan(&rep.Tasks, &rep.Studies)
		})
		if err != nil {
			return rep, fmt.Errorf("count prunable runs: %w", err)
		}
		// The versions only the runs counted above name are counted too.
		if rep.Versions, err = s.pruneVersions(ctx, true, o.Before); err != nil {
			return rep, err
		}
		return rep, nil
	}
	kinds := []struct {
		name    string
		count   *int64
		batch   func(tx pgx.Tx) ([]string, error)
		export  func(tx pgx.Tx, ids []string) ([]json.RawMessage, error)
		deleted func(tx pgx.Tx, ids []string) (int64, error)
	}{
		{"runs", &rep.Tasks,
			func(tx pgx.Tx) ([]string, error) {
				return s.st.PrunableTasks(ctx, tx, store.PrunableTasksParams{Before: o.Before, Lim: int32(o.Batch)})
			},
			func(tx pgx.Tx, ids []string) ([]json.RawMessage, error) { return s.st.ExportTasks(ctx, tx, ids) },
			func(tx pgx.Tx, ids []string) (int64, error) {
				if err := pnlmonths.Remove(ctx, tx, ids...); err != nil {
					return 0, err
				}
				return s.st.DeleteTasks(ctx, tx, ids)
			}},
		{"studies", &rep.Studies,
			func(tx pgx.Tx) ([]string, error) {
				return s.st.PrunableStudies(ctx, tx, store.PrunableStudiesParams{Before: o.Before, Lim: int32(o.Batch)})
			},
			func(tx pgx.Tx, ids []string) ([]json.RawMessage, error) { return s.st.ExportStudies(ctx, tx, ids) },
			func(tx pgx.Tx, ids []string) (int64, error) { return s.st.DeleteStudies(ctx, tx, ids) }},
	}
	for _, k := range kinds {
		for {
			var n int64
			err := s.st.WithTx(ctx, func(tx pgx.Tx) error {
				ids, err := k.batch(tx)
				if err != nil || len(ids) == 0 {
					return err
				}
				if o.Export != nil {
					docs, err := k.export(tx, ids)
					if err != nil {
						return fmt.Errorf("export %s: %w", k.name, err)
					}
					if err := writeLines(o.Export, docs); err != nil {
						return err
					}
				}
				n, err = k.deleted(tx, ids)
				return err
			})
			if err != nil {
				return rep, fmt.Errorf("prune %s: %w", k.name, err)
			}
			if n == 0 {
				break
			}
			*k.count += n
			if o.Pause > 0 {
				select {
				case <-ctx.Done():
					return rep, ctx.Err()
				case <-time.After(o.Pause):
				}
			}
		}
	}
	var err error
	if rep.Versions, err = s.pruneVersions(ctx, false, time.Time{}); err != nil {
		return rep, fmt.Errorf("prune bar versions: %w", err)
	}
	if o.Vacuum && rep.Tasks+rep.Studies > 0 {
		if err := s.st.VacuumResults(ctx); err != nil {
			return rep, err
		}
		rep.Vacuumed = true
	}
	return rep, nil
}

// writeLines writes docs as JSON lines in one write and syncs w when it is a file, so that
// what a batch deletes is on disk before the batch commits.
func writeLines(w io.Writer, docs []json.RawMessage) error {
	var buf bytes.Buffer
	for _, d := range docs {
		buf.Write(d)
		buf.WriteByte('\n')
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	if f, ok := w.(syncer); ok {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync export: %w", err)
		}
	}
	return nil
}

// PinTask pins (pinned true) or unpins a run for caller, which Prune then keeps or may
// delete. Only its owner or an admin may (auth.MayModify, decided on the locked row). It
// returns when the run was pinned (nil: not pinned); an unknown id is a not-found error.
func (s *Service) PinTask(ctx context.Context, caller auth.Identity, id string, pinned bool) (at *time.Time, err error) {
	err = s.st.WithTx(ctx, func(tx pgx.Tx) error {
		t, err := s.st.GetTaskForUpdate(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("Task %s not found", id)
		}
		if err != nil {
			return fmt.Errorf("get task %s: %w", id, err)
		}
		if err := auth.MayModify(caller, "task "+id, auth.OwnerOf(t.CreatedBy)); err != nil {
			return err
		}
		if at, err = s.st.PinTask(ctx, tx, store.PinTaskParams{ID: id, Pinned: pinned}); err != nil {
			return fmt.Errorf("pin task %s: %w", id, err)
		}
		return nil
	})
	return at, err
}

// PinStudy is PinTask for a study.
func (s *Service) PinStudy(ctx context.Context, caller auth.Identity, id string, pinned bool) (at *time.Time, err error) {
	err = s.st.WithTx(ctx, func(tx pgx.Tx) error {
		st, err := s.st.GetStudyForUpdate(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("Study %s not found", id)
		}
		if err != nil {
			return fmt.Errorf("get study %s: %w", id, err)
		}
		if err := auth.MayModify(caller, "study "+id, auth.OwnerOf(st.CreatedBy)); err != nil {
			return err
		}
		if at, err = s.st.PinStudy(ctx, tx, store.PinStudyParams{ID: id, Pinned: pinned}); err != nil {
			return fmt.Errorf("pin study %s: %w", id, err)
		}
		return nil
	})
	return at, err
}
