package pgcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, v := range []string{"13", "15"} {
		dir := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pg_ctl"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	notFound := func(string) (string, error) { return "", errors.New("not found") }
	onPath := func(name string) (string, error) { return "/opt/pg/bin/" + name, nil }
	tests := []struct {
		name     string
		lookPath func(string) (string, error)
		glob     string
		want     string
		wantErr  error
	}{
		{"on the PATH", onPath, filepath.Join(root, "*", "bin"), "/opt/pg/bin", nil},
		{"newest Debian version", notFound, filepath.Join(root, "*", "bin"), filepath.Join(root, "15", "bin"), nil},
		{"nowhere", notFound, filepath.Join(root, "none", "*", "bin"), "", ErrNoServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findBinDir(tt.lookPath, tt.glob)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("got (%q, %v), want (%q, %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
	// The error is the one line `make run` prints: what to install, or what to set.
	if msg := ErrNoServer.Error(); !(strings.Contains(msg, "apt-get install postgresql") && strings.Contains(msg, "DATABASE_URL")) {
		t.Errorf("ErrNoServer = %q: it must say what to install or set", msg)
	}
}
