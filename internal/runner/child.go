package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	_ "time/tzdata" // TZ names resolve where the machine has no zoneinfo files

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/sweep"
)

// Environment of a runner child. childEnv marks the process as one (test binaries look
// for it in TestMain); the others carry the limits the child sets on itself.
const (
	childEnv    = "BACKTESTD_RUNNER"
	envMemory   = "BACKTESTD_RUNNER_MEMORY"
	envCPU      = "BACKTESTD_RUNNER_CPU"
	flushPeriod = 10 * time.Millisecond
	// maxLogsFrame is the most log lines one Logs frame carries.
	maxLogsFrame = 256
	maxStack     = 256 << 20 // Go stack of the child; deep recursion crashes it, not the service

	// The child's garbage collector: generous while it warms up, so the heap it grows
	// (and the pages the kernel maps for it, some 20 µs each on a small virtual machine)
	// stay for the run, which then allocates in memory already mapped; during the run
	// the heap may grow to three times what is live before a collection (Go's default is
	// two), which halves the collections of a short run. The budget counts resident
	// memory, so a strategy keeping more than about a third of it live can exceed it.
	warmGCPercent = 400
	runGCPercent  = 200
)

// IsChild reports whether this process was started as a runner child.
func IsChild() bool { return os.Getenv(childEnv) == "1" }

// ChildMain is the whole life of a runner child: confine the process, wait for a request
// on stdin, run it, write the frames to stdout; then wait for the next request (the
// parent sends one only with the same strategy code) until stdin closes, and return the
// exit code. The parent starts it ahead of time, so the confinement and start-up are off
// the request's critical path.
func ChildMain() int {
	mem, _ := strconv.ParseUint(os.Getenv(envMemory), 10, 64)
	cpu, _ := time.ParseDuration(os.Getenv(envCPU))
	debug.SetMaxStack(maxStack)
	if err := limit(mem, cpu); err != nil {
		fmt.Fprintln(os.Stderr, "runner: limit:", err)
		return 3
	}
	debug.SetGCPercent(warmGCPercent)
	warmUp()
	w := newFrameWriter(os.Stdout)
	defer w.close()
	if err := w.send(message{Ready: true}); err != nil {
		return 3
	}
	w.flush() // the parent offers this runner for work from now on
	dec := gob.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	for first := true; ; first = false {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0 // the pool is done with this runner
			}
			fmt.Fprintln(os.Stderr, "runner: read request:", err)
			return 3
		}
		if first {
			debug.SetGCPercent(runGCPercent)
			if err := lockDown(); err != nil {
				fmt.Fprintln(os.Stderr, "runner: lock down:", err)
				return 3
			}
			w.start()
		}
		if err := serve(context.Background(), req, w); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 3
		}
		w.flush() // the final frame goes now, not at the next tick
	}
}

// warmUp runs a backtest of the service's own (5,000 bars, a common size) and encodes its
// frames, while the child waits for work: a fresh process would otherwise pay for goja's
// and gob's first use, and grow its heap, on the request's time. Nothing of it is kept:
// every run builds a new JavaScript runtime.
func warmUp() {
	const code = `class W extends Strategy {
  init() { this.c = ind.CrossOver(ind.SMA(this.data.close, 5), ind.SMA(this.data.close, 20)); }
  next() { if (this.position.size === 0 && this.c[0] > 0) this.buy({ size: 1 }); else if (this.position.size > 0 && this.c[0] < 0) this.close(); this.log('w'); }
}`
	feeds := []engine.Feed{{Symbol: "W", Bars: engine.RandomWalk(5000, 1)}}
	var log engine.LogEntry
	res, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: feeds,
		OnLog: func(le engine.LogEntry) { log = le }, OnProgress: func(int, int) {}})
	if err != nil {
		return
	}
	enc := gob.NewEncoder(io.Discard)
	_ = enc.Encode(message{Log: &log})
	_ = enc.Encode(message{Result: res, Equity: toWireEquity(res.Equity)})
	_ = gob.NewDecoder(bytes.NewReader(nil)).Decode(&request{})
	runtime.GC()
}

func serve(ctx context.Context, req request, w *frameWriter) error {
	if req.Inspect {
		info, err := jsrt.Inspect(ctx, req.Code)
		var le *jsrt.LoadError
		switch {
		case errors.As(err, &le):
			return w.send(message{LoadErr: le})
		case err != nil:
			return err
		}
		return w.send(message{Info: info})
	}
	if req.Constraint != "" {
		keep, err := jsrt.Constraint(ctx, req.Constraint, req.Batch)
		var pe *jsrt.ParamError
		switch {
		case errors.As(err, &pe):
			return w.send(message{RunErr: &runError{Kind: jsrt.KindStrategy, Message: pe.Message}})
		case err != nil:
			return err
		}
		return w.send(message{Keep: keep})
	}
	if req.Batch != nil {
		return serveBatch(ctx, req, w)
	}
	if req.Lookahead {
		rep, err := jsrt.Lookahead(ctx, jsrt.RunConfig{Code: req.Code, Params: req.Params, Feeds: fromWireFeeds(req.Feeds),
			Cash: req.Cash, Commission: req.Commission, WallTimeLimit: req.TimeLimit, MemoryLimit: req.MemoryLimit})
		var re *jsrt.RunError
		switch {
		case errors.As(err, &re):
			return w.send(message{RunErr: &runError{Kind: re.Kind, Message: re.Message, Line: re.Line}})
		case err != nil:
			return err
		}
		return w.send(message{Bias: rep})
	}
	var lines, bytes int
	lastProgress := time.Now()
	if lastCompiled == nil || lastCode != req.Code {
		lastCompiled, lastCode = jsrt.Compile(req.Code), req.Code
	}
	res, err := jsrt.Run(ctx, jsrt.RunConfig{
		Code: req.Code, Compiled: lastCompiled, Params: req.Params, Feeds: fromWireFeeds(req.Feeds),
		Cash: req.Cash, Commission: req.Commission, TradeFrom: req.TradeFrom,
		WallTimeLimit: req.TimeLimit, MemoryLimit: req.MemoryLimit,
		OnProgress: func(cur, total int) {
			// The engine reports every 1% of the bars; a frame at most every flush period
			// (and the last) is plenty for the parent, and spares it a wake-up per report.
			if cur < total && time.Since(lastProgress) < flushPeriod {
				return
			}
			lastProgress = time.Now()
			_ = w.send(message{Progress: &progress{cur, total}})
		},
		OnLog: func(le engine.LogEntry) {
			// Past the cap the parent drops lines: send one more (it writes the
			// "truncated" line), then none.
			if lines <= req.MaxLogLines && bytes <= req.MaxLogBytes {
				lines++
				bytes += len(le.Message)
				w.sendLog(le)
			}
		},
	})
	var re *jsrt.RunError
	switch {
	case errors.As(err, &re):
		return w.send(message{RunErr: &runError{Kind: re.Kind, Message: re.Message, Line: re.Line}})
	case err != nil:
		return err
	}
	res.Logs = nil // every line was streamed already
	eq := toWireEquity(res.Equity)
	res.Equity = nil
	return w.send(message{Result: res, Equity: eq})
}

// lastCompiled is the code of this runner's last run, parsed and compiled: a runner serves
// further runs of the same code only (each in a new runtime), which would parse and compile
// it again each time. Requests are served one at a time.
var (
	lastCompiled *jsrt.Compiled
	lastCode     string
)

// serveBatch runs the request's code with each of its parameter sets in turn, each under
// the request's limits, and sends a Trial frame after each: a study's batch. The strategy's
// log lines are not kept (a study keeps figures only).
func serveBatch(ctx context.Context, req request, w *frameWriter) error {
	// The feeds once for the batch, the code compiled once, columns and indicators with the
	// same inputs computed once: the runs share them, read-only.
	batch := jsrt.NewBatch(jsrt.RunConfig{
		Code: req.Code, Feeds: fromWireFeeds(req.Feeds), Cash: req.Cash, Commission: req.Commission, TradeFrom: req.TradeFrom,
		WallTimeLimit: req.TimeLimit, MemoryLimit: req.MemoryLimit,
		OnLog: func(engine.LogEntry) {}, OnProgress: func(int, int) {},
		// A trial keeps the summary, the returns and the objective: the engine's log lines
		// (dropped above) are not even formatted, nor the analyzers computed that none of
		// those read.
		QuietEngine: true, SummaryOnly: true,
	})
	obj := sweep.Objective{Metric: req.Objective}
	inSummary := sweep.Known(req.Objective, nil)
	for i, params := range req.Batch {
		res, err := batch.Run(ctx, params)
		t := Trial{Index: i}
		var re *jsrt.RunError
		switch {
		case errors.As(err, &re):
			t.Err = &jsrt.RunError{Kind: re.Kind, Message: re.Message, Line: re.Line}
		case err != nil:
			return err
		default:
			t.Summary, t.Bars, t.Returns = res.Summary, len(res.Equity), sweep.Returns(res.Equity)
			var stats *engine.Statistics
			if !inSummary {
				s := engine.ComputeStatistics(res.InitialCash, res.Equity, res.Trades, res.Summary.SQN, nil)
				stats = &s
			}
			if v, ok := obj.Value(res.Summary, stats); ok {
				t.Objective = &v
			}
			engine.Recycle(res) // what the trial keeps is copied: the next run writes over its storage
		}
		if err := w.send(message{Trial: &t}); err != nil {
			return err
		}
	}
	return w.send(message{Batch: &batchDone{Trials: len(req.Batch)}})
}

// frameWriter encodes frames to the parent. Frames are buffered and flushed every few
// milliseconds and at the end, so a chatty strategy does not make a write per log line.
type frameWriter struct {
	mu      sync.Mutex
	bw      *bufio.Writer
	enc     *gob.Encoder
	err     error
	stop    chan struct{}
	done    chan struct{}
	started bool      // the flusher runs
	flushed time.Time // last flush
	logs    []engine.LogEntry
}

func newFrameWriter(out io.Writer) *frameWriter {
	bw := bufio.NewWriterSize(out, 1<<20)
	return &frameWriter{bw: bw, enc: gob.NewEncoder(bw), stop: make(chan struct{}), done: make(chan struct{})}
}

// start flushes the buffer every few milliseconds from now on (not while the child only
// waits for its request).
func (w *frameWriter) start() {
	w.started = true
	go w.flusher()
}

// sendLog queues a log line: the lines go out together as one Logs frame before the next
// frame or flush. A frame per line cost the child and the parent a gob message each, about
// 500 a run of the engine's own fill, order and trade lines (issue 35).
func (w *frameWriter) sendLog(le engine.LogEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs = append(w.logs, le)
	if len(w.logs) >= maxLogsFrame || time.Since(w.flushed) >= flushPeriod {
		w.encodeLogs()
		if w.err == nil {
			w.err = w.bw.Flush()
			w.flushed = time.Now()
		}
	}
}

// encodeLogs writes the queued log lines as one frame; w.mu is held.
func (w *frameWriter) encodeLogs() {
	if len(w.logs) > 0 && w.err == nil {
		w.err = w.enc.Encode(message{Logs: w.logs})
	}
	w.logs = w.logs[:0]
}

func (w *frameWriter) send(m message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encodeLogs()
	if w.err == nil {
		w.err = w.enc.Encode(m)
	}
	// Progress (every 1,024 bars) and anything older than a flush period go out now: the
	// flusher goroutine alone may run late in a starved process, and the run's events
	// would then arrive all at once at its end.
	if w.err == nil && (m.Progress != nil || time.Since(w.flushed) >= flushPeriod) {
		w.err = w.bw.Flush()
		w.flushed = time.Now()
	}
	return w.err
}

func (w *frameWriter) flusher() {
	defer close(w.done)
	t := time.NewTicker(flushPeriod)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			w.encodeLogs()
			if w.err == nil {
				w.err = w.bw.Flush()
				w.flushed = time.Now()
			}
			w.mu.Unlock()
		}
	}
}

func (w *frameWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encodeLogs()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
}

func (w *frameWriter) close() {
	close(w.stop)
	if w.started {
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encodeLogs()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
}
