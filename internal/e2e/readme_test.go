package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/proctest"
)

// readmeSections are the sections whose sh blocks are a contract: the README's tour, then
// the studies examples of docs/studies.md (which use the tour's $B and $S), run in this
// order in one shell as a reader would.
var readmeSections = []struct {
	file     string
	sections []string
}{
	{"README.md", []string{"## A five-minute tour with curl"}},
	{"docs/studies.md", []string{"## Studies in the service", "## Walk-forward analysis"}},
}

// readmeBlocks returns the sh code blocks of the named level-2 sections of a markdown text,
// in order, with the heading each was found under.
func readmeBlocks(text string, sections []string) (blocks []string, err error) {
	var in, fenced bool
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case fenced && line == "```":
			fenced = false
			blocks = append(blocks, cur.String())
			cur.Reset()
		case fenced:
			cur.WriteString(line + "\n")
		case strings.HasPrefix(line, "## "):
			in = false
			for _, s := range sections {
				in = in || line == s
			}
		case in && line == "```sh":
			fenced = true
		}
	}
	if fenced {
		return nil, fmt.Errorf("an sh block is not closed")
	}
	return blocks, sc.Err()
}

func TestReadmeBlocksParse(t *testing.T) {
	md := "# x\n## A\n```sh\necho a\n```\n## B\n```sh\necho b\n```\n```json\n{}\n```\n## C\n```sh\necho c\n```\n"
	got, err := readmeBlocks(md, []string{"## A", "## C"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"echo a\n", "echo c\n"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("blocks %q, want %q", got, want)
	}
	if _, err := readmeBlocks("## A\n```sh\necho\n", []string{"## A"}); err == nil {
		t.Fatal("an unclosed block was accepted")
	}
}

// TestReadmeTour runs the README's tour and docs/studies.md's examples, as written, against a live
// service on a fresh database: every command must succeed and every request answer 2xx, so
// the README cannot drift from the service. Only the address changes (the test's port), and
// `go run ./cmd/backtestd` is the binary the test already built from the same source.
func TestReadmeTour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			requireOrSkip(t, "%s is not installed", tool)
		}
	}
	root := repoRoot(t)
	var blocks []string
	for _, f := range readmeSections {
		md, err := os.ReadFile(filepath.Join(root, f.file))
		must(t, err)
		bs, err := readmeBlocks(string(md), f.sections)
		must(t, err)
		if len(bs) < 2 {
			t.Fatalf("found %d sh blocks in %s's sections %q", len(bs), f.file, f.sections)
		}
		blocks = append(blocks, bs...)
	}
	script := strings.Join(blocks, "\n")
	for _, want := range []string{"B=http://localhost:8080", "/api/backtests", "/api/studies", "walk_forward", "go run ./cmd/backtestd run"} {
		if !strings.Contains(script, want) {
			t.Fatalf("the README's blocks no longer contain %q: the test would not check it", want)
		}
	}

	srv := startServer(t)
	host := strings.TrimPrefix(srv.url, "http://")
	script = strings.ReplaceAll(script, "localhost:8080", host)

	// The reader's working directory is the repository; the files the tour writes go to a
	// temporary one that sees the repository's examples.
	dir := t.TempDir()
	must(t, os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")))
	preamble := fmt.Sprintf(`set -euo pipefail
# Every request must succeed: curl fails on a 4xx or 5xx and shows the body.
curl() { command curl --fail-with-body --show-error --max-time 60 "$@"; }
# go run ./cmd/backtestd is the binary built from this checkout.
go() { if [ "$1 $2" = "run ./cmd/backtestd" ]; then shift 2; %q "$@"; else command go "$@"; fi; }
set -x
`, proctest.Binary(t))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", preamble+script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands failed (%v):\n%s\nservice log:\n%s", err, shortLines(proctest.Tail(string(out), 60), 400), proctest.Tail(srv.proc.Log(), 30))
	}

	// What the tour says happened did happen.
	var tasks []map[string]any
	must(t, getJSON(srv.url+"/api/backtests?limit=100", &tasks))
	status := map[string]int{}
	for _, tk := range tasks {
		status[fmt.Sprint(tk["status"])]++
	}
	if status["completed"] < 2 || status["cancelled"] < 1 {
		t.Errorf("after the tour the tasks are %v, want at least 2 completed and the slow one cancelled", status)
	}
	for _, f := range []string{"acme.csv", "report.html", "spy_5m.csv"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the tour did not write %s: %v", f, err)
		}
	}
	for _, want := range []string{`"inserted":2608`, `"message":"Task task_2 cancelled"`, "final value"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tour's output lacks %s", want)
		}
	}
}

// shortLines cuts each line of s to at most n bytes: a chart's answer is one long line.
func shortLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if len(l) > n {
			lines[i] = l[:n] + fmt.Sprintf(" … (%d bytes)", len(l))
		}
	}
	return strings.Join(lines, "\n")
}
