package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/pgtest"
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
		err := run(context.Background(), append([]string{"import"}, tc.args...), getenv, strings.NewReader(""), &out, &errOut)
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
