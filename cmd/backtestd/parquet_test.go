package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/tabular"
)

// elapsed is the time a local run reports it took.
var elapsed = regexp.MustCompile(`\(\d+ ms\)`)

// TestRunLocalParquet: `run --data orcl.parquet` (the reference CSV written as Parquet) says
// what `run --data orcl.csv` says, to the byte but for the time it took.
func TestRunLocalParquet(t *testing.T) {
	t.Parallel()
	csvPath := refData(t, "orcl.csv")
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	bars, err := barcsv.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pqPath := filepath.Join(t.TempDir(), "orcl.parquet")
	var b bytes.Buffer
	if err := tabular.WriteBars(&b, bars); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pqPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, 2)
	for i, path := range []string{csvPath, pqPath} {
		var out, errb bytes.Buffer
		if err := runLocal(context.Background(), []string{"--strategy", "../../examples/sma_cross.js", "--data", path, "--from", "2000-01-01", "--to", "2005-12-31"}, &out, &errb); err != nil {
			t.Fatal(path, err, errb.String())
		}
		outputs[i] = elapsed.ReplaceAllString(out.String(), "(… ms)") // the run's own time differs
	}
	if outputs[0] != outputs[1] || !strings.Contains(outputs[1], "SmaCross on orcl: 1508 bars") {
		t.Fatalf("from Parquet:\n%s\nfrom CSV:\n%s", outputs[1], outputs[0])
	}
}

// TestImportCommandParquet imports a file written by Apache Arrow (testdata/parquet) and
// refuses one with a bad row, naming it.
func TestImportCommandParquet(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	day := tabular.Column{Name: "date", Kind: tabular.Date, Cell: func(i int) any { return time.Date(2024, 1, 2+i, 0, 0, 0, 0, time.UTC) }}
	price := func(name string, v ...float64) tabular.Column {
		return tabular.Column{Name: name, Kind: tabular.Float, Cell: func(i int) any { return v[i] }}
	}
	var b bytes.Buffer
	if err := tabular.WriteParquet(&b, tabular.Table{Rows: 2, Columns: []tabular.Column{day, price("open", 10, 10.5), price("high", 11, 9),
		price("low", 9, 10), price("close", 10.5, 11)}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	for _, tc := range []struct {
		name, file, wantOut, wantErr string
	}{
		{"arrow", filepath.Join("..", "..", "testdata", "parquet", "arrow_daily.parquet"), "imported 3 1d bars of builtin/PQ (2016-07-13 to 2016-07-15): 3 new, 0 updated, 0 unchanged", ""},
		{"bad row", bad, "", "Invalid Parquet at row 2: high 9 is below low 10"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"import", "--database-url", url, "--symbol", "PQ", tc.file}, getenv, strings.NewReader(""), &out, &errOut)
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
