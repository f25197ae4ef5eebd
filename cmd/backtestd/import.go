package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/service"
)

// importBars is `backtestd import --source builtin --symbol X [--name N] [--timeframe tf]
// FILE.csv|FILE.json`: an all-or-nothing upsert of one file's bars, registering the symbol.
func importBars(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	source := fs.String("source", marketdata.BuiltinSource, "data source to import into")
	symbol := fs.String("symbol", "", "ticker to store the bars under (required)")
	name := fs.String("name", "", "display name of the symbol (kept when empty)")
	tf := fs.String("timeframe", "", "bar interval: "+strings.Join(marketdata.Timeframes, ", ")+" (default: inferred from the bars)")
	zone := fs.String("timezone", "", "IANA time zone of times without an offset in the file (default: the symbol's, UTC for a new one)")
	db := addDBFlags(fs, getenv)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: backtestd import --symbol X [--source builtin] [--name N] [--timeframe 1d] [--timezone America/New_York] FILE.csv|FILE.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *symbol == "" || fs.NArg() != 1 {
		fs.Usage()
		return errors.New("import: --symbol and exactly one file are required")
	}
	path := fs.Arg(0)
	if _, err := os.Stat(path); err != nil {
		return err
	}
	cfg, err := db.config("import", getenv)
	if err != nil {
		return err
	}
	read := func(loc *time.Location) ([]engine.Bar, error) {
		bars, err := readBarFile(path, loc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, publicError(err))
		}
		return bars, nil
	}
	res, err := service.Import(ctx, cfg, newLogger(stderr, cfg.LogLevel), *source, *symbol, *name, *tf, *zone, read)
	if err != nil {
		return publicError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "imported %d %s bars of %s/%s (%s to %s): %d new, %d updated, %d unchanged\n",
		res.Received, res.Timeframe, res.Source, res.Symbol, res.First, res.Last, res.Inserted, res.Updated, res.Unchanged)
	return nil
}

func readBarFile(path string, loc *time.Location) ([]engine.Bar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		return marketdata.ParseJSON(f, loc)
	}
	if isParquet(path) {
		return marketdata.ParseParquet(f, loc)
	}
	return marketdata.ParseCSV(f, loc)
}

// isParquet is whether a bars file is read as Parquet: its name ends in .parquet.
func isParquet(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".parquet") }

// publicError shows an apperr's detail without its internal cause.
func publicError(err error) error {
	if e, ok := apperr.As(err); ok && e.Kind != apperr.KindInternal {
		return errors.New(e.Detail)
	}
	return err
}
