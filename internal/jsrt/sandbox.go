package jsrt

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// Defaults for a run's resource limits.
const (
	DefaultWallTimeLimit = 5 * time.Minute
	DefaultMemoryLimit   = 1 << 30                // bytes of heap growth over the start of the run
	InspectTimeLimit     = 500 * time.Millisecond // loading code, at upload
	InspectMemoryLimit   = 256 << 20              // bytes, loading code
	maxCallDepth         = 2000
	watchdogInterval     = 10 * time.Millisecond
)

// ErrorKind says why a run failed; its text is what callers log and compare.
type ErrorKind string

// The kinds of RunError. KindStrategy errors (an exception in the strategy, a bad
// parameter) never succeed on retry; the others report why the run was interrupted.
const (
	KindStrategy  ErrorKind = "strategy"
	KindTimeout   ErrorKind = "timeout"
	KindMemory    ErrorKind = "memory"
	KindCancelled ErrorKind = "cancelled"
)

// RunError is the error of a failed run. Kind tells callers whether a retry
// can help.
type RunError struct {
	Kind    ErrorKind
	Message string
	Line    int // 1-based source line of a strategy error when known
	cause   error
}

func (e *RunError) Error() string { return e.Message }

// Unwrap returns the context error for cancelled runs.
func (e *RunError) Unwrap() error { return e.cause }

// Cancelled is the error of a run stopped because its context ended with err.
func Cancelled(err error) *RunError {
	return &RunError{Kind: KindCancelled, Message: "backtest cancelled: " + err.Error(), cause: err}
}

// recovered turns a panic inside goja (a JavaScript exception or an interruption raised
// through Go code, or a Go runtime error the strategy provoked) into an error.
func recovered(r any) error {
	switch e := r.(type) {
	case *goja.Exception:
		return e
	case *goja.InterruptedError:
		return e
	case *goja.StackOverflowError:
		return e
	case error:
		return fmt.Errorf("strategy caused an internal error: %w", e)
	}
	return fmt.Errorf("strategy caused an internal error: %v", r)
}

// guard interrupts a runtime when the context ends, the wall-time limit
// passes or the process heap grows beyond the memory budget.
type guard struct {
	rt       *goja.Runtime
	lim      limits
	base     uint64 // heap bytes at the start
	start    time.Time
	cpuStart time.Duration
	stopCtx  func() bool // undoes the context's AfterFunc
	mu       sync.Mutex
	stopped  bool // no interruption after stop
	reason   *RunError
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// startGuard watches rt for a run: interrupted when ctx ends, wall time passes or the heap
// grows by more than mem.
func startGuard(ctx context.Context, rt *goja.Runtime, wall time.Duration, mem uint64) *guard {
	return watch(ctx, rt, limits{wall: wall, mem: mem})
}

// startLoadGuard watches rt while it loads code: the limit is on computing, not waiting.
// It interrupts when both wall time and this process's CPU time since the start pass
// limit, so code that computes for longer is cut, but a valid strategy is not rejected
// because a busy machine left its process waiting for a core; and in any case after
// LoadWallCap times limit.
func startLoadGuard(ctx context.Context, rt *goja.Runtime, limit time.Duration, mem uint64) *guard {
	return watch(ctx, rt, limits{wall: limit, cpu: limit, wallCap: LoadWallCap * limit, mem: mem})
}

// LoadWallCap bounds a load on a starved machine: this many times its limit of computing.
const LoadWallCap = 20

type limits struct {
	wall    time.Duration // time limit (with cpu set: the wall-time half of it)
	cpu     time.Duration // when set, the limit also needs this much CPU time of the process
	wallCap time.Duration // with cpu set: the wall time after which the limit applies anyway
	mem     uint64        // heap growth in bytes
}

func watch(ctx context.Context, rt *goja.Runtime, lim limits) *guard {
	g := &guard{rt: rt, lim: lim, base: heapBytes(), start: time.Now()}
	if lim.cpu != 0 {
		g.cpuStart = processCPU()
	}
	g.stopCtx = context.AfterFunc(ctx, func() { g.interrupt(Cancelled(ctx.Err())) })
	watchdog.add(g)
	return g
}

// watchdog checks every guard that runs, every watchdogInterval, on one goroutine that runs
// while there are guards: a run starts no goroutine or timer of its own (a study's runs of
// a few milliseconds each woke an idle core for one, and their start and end were a share
// of the study's CPU that did not run in parallel with it).
var watchdog = watchdogs{guards: map[*guard]struct{}{}}

type watchdogs struct {
	mu      sync.Mutex
	guards  map[*guard]struct{}
	running bool
}

func (w *watchdogs) add(g *guard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.guards[g] = struct{}{}
	if !w.running {
		w.running = true
		go w.loop()
	}
}

func (w *watchdogs) remove(g *guard) {
	w.mu.Lock()
	delete(w.guards, g)
	w.mu.Unlock()
}

func (w *watchdogs) loop() {
	tick := time.NewTicker(watchdogInterval)
	defer tick.Stop()
	for range tick.C {
		w.mu.Lock()
		if len(w.guards) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		heap := heapBytes()
		for g := range w.guards {
			if g.check(heap) {
				delete(w.guards, g) // interrupted: once is enough
			}
		}
		w.mu.Unlock()
	}
}

// check interrupts the guard's runtime when the heap (heap bytes now) grew past its
// budget or its time is up, and says whether it did.
func (g *guard) check(heap uint64) bool {
	if heap > g.base && heap-g.base > g.lim.mem {
		g.interrupt(&RunError{Kind: KindMemory, Message: fmt.Sprintf("strategy ran out of memory (budget %d MB)", g.lim.mem>>20)})
		return true
	}
	// The wall time is up and, for a load, so is the CPU time (or the cap).
	elapsed := time.Since(g.start)
	if elapsed >= g.lim.wall && (g.lim.cpu == 0 || elapsed >= g.lim.wallCap || processCPU()-g.cpuStart >= g.lim.cpu) {
		g.interrupt(&RunError{Kind: KindTimeout, Message: fmt.Sprintf("strategy exceeded its time limit of %s", g.lim.wall)})
		return true
	}
	return false
}

func (g *guard) interrupt(e *RunError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	if g.reason == nil {
		g.reason = e
	}
	g.rt.Interrupt(e)
}

// stop ends the watch and returns the interruption reason, if any; nothing interrupts the
// runtime after it.
func (g *guard) stop() *RunError {
	watchdog.remove(g)
	g.stopCtx()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	return g.reason
}

// interrupted returns the reason recorded by the watchdog for an
// interrupted runtime, or nil.
func (g *guard) interrupted(err error) *RunError {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if re, ok := ie.Value().(*RunError); ok {
			return re
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason
}

// named makes fn a JavaScript function called name. goja names Go functions after their
// Go symbol (package path, receiver, "-fm"), which String(fn) and fn.name would show to
// a strategy: nothing of the host's internals should.
func named(rt *goja.Runtime, name string, fn any) goja.Value {
	v := rt.ToValue(fn)
	if o, ok := v.(*goja.Object); ok {
		_ = o.DefineDataProperty("name", rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return v
}

// newRuntime returns a runtime with only the language built-ins plus the
// given globals. Host objects such as require, process or timers do not
// exist in goja unless installed, so nothing else is reachable.
func newRuntime() *goja.Runtime {
	rt := goja.New()
	rt.SetMaxCallStackSize(maxCallDepth)
	rt.SetFieldNameMapper(goja.UncapFieldNameMapper())
	return rt
}

// goInternals matches goja messages that print Go values (addresses, Go type names).
var goInternals = regexp.MustCompile(`Could not convert .* to primitive`)

// jsErrorInfo extracts a message and 1-based line from a goja error, in JavaScript's
// words rather than Go's.
func jsErrorInfo(err error) (msg string, line, col int) {
	msg, line, col = rawErrorInfo(err)
	return goInternals.ReplaceAllLiteralString(msg, "Cannot convert object to primitive value"), line, col
}

func rawErrorInfo(err error) (msg string, line, col int) {
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		msg = "RangeError: Maximum call stack size exceeded"
		for _, f := range so.Stack() {
			if f.SrcName() == scriptName {
				p := f.Position()
				return msg, p.Line, p.Column
			}
		}
		return msg, 0, 0
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if v := ex.Value(); v != nil {
			msg = v.String()
			if o, ok := v.(*goja.Object); ok {
				if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
					name := "Error"
					if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
						name = n.String()
					}
					msg = name + ": " + m.String()
				}
			}
		}
		for _, f := range ex.Stack() {
			if f.SrcName() == scriptName {
				p := f.Position()
				return msg, p.Line, p.Column
			}
		}
		return msg, 0, 0
	}
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		if se.File != nil {
			p := se.File.Position(se.Offset)
			return "SyntaxError: " + se.Message, p.Line, p.Column
		}
		return "SyntaxError: " + se.Message, 0, 0
	}
	return err.Error(), 0, 0
}
