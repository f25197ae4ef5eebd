// Package reftest locates the backtrader reference fixtures (market data and expected
// figures) for tests, and reads their bars. They live outside the repository, in
// ../shared/reference, and are never copied into it.
package reftest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
)

// Dir returns the reference folder: BACKTESTD_REFERENCE_DIR when set, else the first
// shared/reference beside the repository or one of its parents. It skips t with a clear
// message when none exists (.ci/run points the variable at the machine's copy for clones
// elsewhere).
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("BACKTESTD_REFERENCE_DIR"); d != "" {
		if !isDir(filepath.Join(d, "expected")) {
			t.Fatalf("BACKTESTD_REFERENCE_DIR=%s has no expected/ folder", d)
		}
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	for dir := filepath.Join(filepath.Dir(file), "..", ".."); ; {
		if d := filepath.Join(dir, "..", "shared", "reference"); isDir(filepath.Join(d, "expected")) {
			return filepath.Clean(d)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Skip("reference fixtures not found: expected ../shared/reference beside the repository (or set BACKTESTD_REFERENCE_DIR)")
	return ""
}

// Path joins parts onto Dir.
func Path(t testing.TB, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, parts...)...)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Bars reads the CSV bars at path (a reference file, or one of the project's own fixtures
// in testdata/backtrader/data), failing t on any error.
func Bars(t testing.TB, path string) []engine.Bar {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bars, err := barcsv.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return bars
}
