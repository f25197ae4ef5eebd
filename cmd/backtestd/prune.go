package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/service"
)

// pruneCmd is `backtestd prune --older-than 180d [--export FILE] [--dry-run] [--force]`.
func pruneCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := addDBFlags(fs, getenv)
	olderThan := fs.String("older-than", "", "delete finished runs and studies created longer ago than this: 180d, 26w, 36h (required)")
	export := fs.String("export", "", "first append everything deleted to this file, one JSON document per line")
	dryRun := fs.Bool("dry-run", false, "only count what would be deleted")
	vacuum := fs.Bool("vacuum", true, "vacuum the result tables afterwards, so that new results reuse the space at once")
	batch := fs.Int("batch", retention.DefaultBatch, "runs or studies deleted per transaction")
	force := fs.Bool("force", false, "allow an age under one day (which deletes nearly every finished run)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: backtestd prune --older-than 180d [--export FILE] [--dry-run]\n\n"+
			"Deletes finished runs (with results, logs and attempts) and studies created before the age,\n"+
			"except pinned ones, in small batches while the service runs.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("prune: unexpected argument %q", fs.Arg(0))
	}
	if *olderThan == "" {
		fs.Usage()
		return errors.New("prune: --older-than is required")
	}
	age, err := config.ParseAge(*olderThan)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if err := retention.CheckAge(age, *force); err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if *batch < 1 {
		return errors.New("prune: --batch must be at least 1")
	}
	o := retention.Options{Before: time.Now().Add(-age), DryRun: *dryRun, Vacuum: *vacuum, Batch: *batch, Force: *force}
	if *export != "" && !*dryRun {
		f, err := os.OpenFile(*export, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("prune: export file: %w", err)
		}
		defer f.Close()
		o.Export = f
	}
	cfg, err := db.config("prune", getenv)
	if err != nil {
		return err
	}
	rep, err := service.Prune(ctx, cfg, newLogger(stderr, cfg.LogLevel), o)
	verb := "deleted"
	if *dryRun {
		verb = "would delete"
	}
	fmt.Fprintf(stdout, "%s %d runs and %d studies created before %s, and the bars of %d unreferenced bar versions\n", verb, rep.Tasks, rep.Studies, o.Before.UTC().Format(time.RFC3339), rep.Versions)
	return err
}
