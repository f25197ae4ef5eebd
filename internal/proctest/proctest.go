// Package proctest runs the backtestd binary as a real process for tests: built once per
// test binary, started with a subcommand and environment, its log kept for failure
// reports, and stopped (SIGTERM, then SIGKILL) when the test ends.
package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// Main runs the package's tests and removes the built binary afterwards. Call it from
// TestMain: `func TestMain(m *testing.M) { proctest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Binary builds cmd/backtestd once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "backtestd-bin-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "backtestd")
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/backtestd")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Proc is a running backtestd process.
type Proc struct {
	Cmd  *exec.Cmd
	addr chan string
	mu   sync.Mutex
	log  strings.Builder
}

var servingRE = regexp.MustCompile(`msg=serving addr=(http://\S+)`)

// Start runs `backtestd args...` with env added to the test's environment.
func Start(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, addr: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start backtestd %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case p.addr <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("backtestd %s output (last 80 lines):\n%s", args[0], Tail(p.Log(), 80))
		}
	})
	return p
}

// URL waits until the process serves HTTP and returns its base URL.
func (p *Proc) URL(t testing.TB) string {
	t.Helper()
	select {
	case a := <-p.addr:
		return a
	case <-time.After(60 * time.Second):
		t.Fatalf("backtestd did not start serving:\n%s", Tail(p.Log(), 40))
	}
	return ""
}

// Log is everything the process has written to stderr so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
