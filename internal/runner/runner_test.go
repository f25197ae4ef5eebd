package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
)

func TestMain(m *testing.M) {
	if runner.IsChild() {
		os.Exit(runner.ChildMain())
	}
	if os.Getenv("RUNNER_CONFINE_PROBE") == "1" {
		os.Exit(runner.ConfineProbe(os.Stdout))
	}
	os.Exit(m.Run())
}

const smaCross = `
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
    if (this.data.close.length % 500 === 0) this.log('bar ' + this.data.close.length);
  }
}`

func newPool(t *testing.T, cfg runner.Config) *runner.Pool {
	t.Helper()
	p, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func feeds(n int) []engine.Feed {
	return []engine.Feed{{Symbol: "AAA", Bars: engine.RandomWalk(n, 7)}}
}

// A run in a child gives exactly what the same run gives in-process, with its progress
// and log lines streamed to the callbacks.
func TestRunMatchesInProcess(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	ctx := context.Background()
	cfg := jsrt.RunConfig{Code: smaCross, Feeds: feeds(5000), Cash: 10000, Commission: 0.001, Params: map[string]any{"fast": 5}}
	want, err := jsrt.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs []engine.LogEntry
	var lastProgress int
	cfg.OnLog = func(le engine.LogEntry) { logs = append(logs, le) }
	cfg.OnProgress = func(cur, total int) { lastProgress = cur }
	got, err := p.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.FinalValue != want.FinalValue || len(got.Executions) != len(want.Executions) || len(got.Equity) != len(want.Equity) {
		t.Fatalf("child: final %v, %d executions, %d equity points; in-process: %v, %d, %d",
			got.FinalValue, len(got.Executions), len(got.Equity), want.FinalValue, len(want.Executions), len(want.Equity))
	}
	for i := range want.Equity {
		if got.Equity[i] != want.Equity[i] {
			t.Fatalf("equity %d: %+v, want %+v", i, got.Equity[i], want.Equity[i])
		}
	}
	var strategyLines int
	for _, le := range logs {
		if le.Source == "strategy" {
			strategyLines++
		}
	}
	if strategyLines != 10 || lastProgress == 0 {
		t.Fatalf("%d strategy log lines (want 10), last progress %d", strategyLines, lastProgress)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	info, err := p.Inspect(context.Background(), smaCross)
	if err != nil {
		t.Fatal(err)
	}
	if info.ClassName != "SmaCross" || len(info.Params) != 2 || info.Params[0].Name != "fast" {
		t.Fatalf("info %+v", info)
	}
}

// Hostile code fails to load with a clear message within its limit, and the pool (the
// service's process) is unharmed: the next inspection works.
func TestInspectHostile(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	cases := []struct {
		name, code, want string
	}{
		{"syntax", "class A extends Strategy { next( }", "SyntaxError"},
		{"huge buffer", "new ArrayBuffer(2**36); class P extends Strategy {}", "Failed to load strategy"},
		{"deep nesting", strings.Repeat("(", 340_000) + "1" + strings.Repeat(")", 340_000) + "; class P extends Strategy {}", "Failed to load strategy"},
		{"endless loop", "for(;;){} class P extends Strategy {}", "Failed to load strategy"},
		{"catastrophic regex", `/^(\w+)(\w+)+\1y/.test("a".repeat(30)); class P extends Strategy {}`, "Failed to load strategy"},
		{"throwing params", "class P extends Strategy { static get params() { throw new Error('nope') } }", "nope"},
		{"looping params", "class P extends Strategy { static get params() { for(;;){} } }", "Failed to load strategy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := p.Inspect(context.Background(), c.code)
			var le *jsrt.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want a load error, got %v", err)
			}
			if !strings.Contains(le.Message, c.want) {
				t.Fatalf("message %q does not contain %q", le.Message, c.want)
			}
			t.Logf("%s in %s", le.Message, time.Since(start).Round(time.Millisecond))
		})
	}
	t.Cleanup(func() {
		if _, err := p.Inspect(context.Background(), smaCross); err != nil {
			t.Errorf("inspect after hostile code: %v", err)
		}
	})
}

// Each hostile run fails once with the right kind, stopped within a couple of seconds of
// its limit.
func TestRunHostile(t *testing.T) {
	t.Parallel()
	const limit = 4 * time.Second
	p := newPool(t, runner.Config{TimeLimit: limit, MemoryLimit: 512 << 20})
	cases := []struct {
		name, body string
		kind       jsrt.ErrorKind
		want       string
	}{
		{"catastrophic regex", `/^(\w+)(\w+)+\1y/.test("a".repeat(40));`, "timeout", "time limit"},
		// Depending on the machine's speed this one runs out of memory, overflows the
		// stack or its time: any of them, as long as it fails cleanly.
		{"deep JSON", `JSON.parse("[".repeat(3e6) + "]".repeat(3e6));`, "", "strategy"},
		{"big typed array", `this.a = new Uint8Array(2*2**30); for (let i = 0; ; i += 4096) this.a[i % this.a.length] = 1;`, "memory", "out of memory"},
		{"giant buffer", `new ArrayBuffer(2**36);`, "memory", "out of memory"},
		{"allocation loop", `this.a = []; for (;;) this.a.push(new Float64Array(1 << 24));`, "memory", "memory"},
		{"endless loop", `for(;;){}`, "timeout", "time limit"},
		{"throw with NUL", `throw new Error("bad" + String.fromCharCode(0));`, "strategy", "bad"},
		{"NaN result", `if (this.position.size === 0) this.sell({size: 1e307});`, "strategy", "finite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := fmt.Sprintf("class H extends Strategy { next() { %s } }", c.body)
			start := time.Now()
			// A memory bomb gets a long time limit: touching 512 MB costs seconds of page
			// faults on a small virtual machine, more on a busy one, and it must reach
			// its budget before its time.
			limit := limit
			if c.kind == "memory" {
				limit = 30 * time.Second
			}
			_, err := p.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: feeds(300), WallTimeLimit: limit})
			took := time.Since(start)
			var re *jsrt.RunError
			if !errors.As(err, &re) {
				t.Fatalf("want a run error, got %v", err)
			}
			if c.kind == "" && re.Kind != "cancelled" {
				c.kind = re.Kind
			}
			if re.Kind != c.kind || !strings.Contains(re.Message, c.want) {
				t.Fatalf("got %s %q, want %s containing %q", re.Kind, re.Message, c.kind, c.want)
			}
			// A guard against runs going on long past their limit, not a timing assertion:
			// the time also holds the wait for a runner process on a busy machine.
			if took > limit+15*time.Second {
				t.Fatalf("took %s, limit %s", took, limit)
			}
			t.Logf("%s: %s in %s", re.Kind, re.Message, took.Round(time.Millisecond))
		})
	}
}

// Cancel kills the child at once, even in a built-in that never yields.
func TestRunCancel(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{TimeLimit: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.Run(ctx, jsrt.RunConfig{Code: `class H extends Strategy { next() { /^(\w+)(\w+)+\1y/.test("a".repeat(40)); } }`, Feeds: feeds(100)})
	var re *jsrt.RunError
	if !errors.As(err, &re) || re.Kind != "cancelled" || !errors.Is(err, context.Canceled) {
		t.Fatalf("want a cancelled run error wrapping context.Canceled, got %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("cancel took %s", took)
	}
}

// Ten runs at once, two of them memory bombs: the other eight complete with the same
// result, because each run has its own process and budget.
func TestMemoryBombsDoNotHarmNeighbours(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{TimeLimit: time.Minute, MemoryLimit: 512 << 20})
	ctx := context.Background()
	want, err := jsrt.Run(ctx, jsrt.RunConfig{Code: smaCross, Feeds: feeds(3000)})
	if err != nil {
		t.Fatal(err)
	}
	// Cheap in CPU, so that it meets its memory budget before its time limit even when the
	// machine is busy (runners run at a lower priority than everything else).
	bomb := `class B extends Strategy { next() { this.a = []; for (;;) this.a.push(new Float64Array(1 << 24)); } }`
	var wg sync.WaitGroup
	errs := make([]error, 10)
	results := make([]*engine.Result, 10)
	for i := range 10 {
		wg.Go(func() {
			code := smaCross
			if i%5 == 0 {
				code = bomb
			}
			results[i], errs[i] = p.Run(ctx, jsrt.RunConfig{Code: code, Feeds: feeds(3000)})
		})
	}
	wg.Wait()
	for i := range 10 {
		if i%5 == 0 {
			var re *jsrt.RunError
			if !errors.As(errs[i], &re) || re.Kind != "memory" {
				t.Errorf("bomb %d: want a memory error, got %v", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
			continue
		}
		if results[i].FinalValue != want.FinalValue || math.IsNaN(results[i].FinalValue) {
			t.Errorf("run %d: final value %v, want %v", i, results[i].FinalValue, want.FinalValue)
		}
	}
}

func TestLogCap(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{MaxLogLines: 50})
	var lines []engine.LogEntry
	_, err := p.Run(context.Background(), jsrt.RunConfig{
		Code:  `class L extends Strategy { next() { this.log('line ' + this.data.close.length); } }`,
		Feeds: feeds(500), OnLog: func(le engine.LogEntry) { lines = append(lines, le) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 51 || !strings.HasPrefix(lines[50].Message, "log truncated") || lines[50].Level != "WARNING" {
		t.Fatalf("%d lines, last %+v", len(lines), lines[len(lines)-1])
	}
}

// The child's confinement really holds: files, sockets and programs are refused.
func TestConfinement(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "RUNNER_CONFINE_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	for _, want := range []string{"open: refused", "create: refused", "socket: refused", "exec: refused"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
}

// TestStats: the pool counts the run in progress and its process, and neither once the
// run is cancelled and the pool closed.
func TestStats(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{TimeLimit: time.Minute, Warm: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, jsrt.RunConfig{Code: `class H extends Strategy { next() { /^(\w+)(\w+)+\1y/.test("a".repeat(40)); } }`, Feeds: feeds(100)})
		done <- err
	}()
	waitFor := func(what string, ok func(runner.Stats) bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(p.Stats()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: stats %+v", what, p.Stats())
			}
		}
	}
	waitFor("a run in progress", func(s runner.Stats) bool { return s.Busy == 1 && s.Processes == 1 })
	cancel()
	<-done
	waitFor("after the run", func(s runner.Stats) bool { return s.Busy == 0 })
	p.Close()
	waitFor("after Close", func(s runner.Stats) bool { return s.Processes == 0 })
}
