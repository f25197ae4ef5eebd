// Package runner runs strategy code, which is untrusted, outside the service's process:
// every inspection (at upload and from strategy folders) and every backtest happens in a
// short-lived child process (this program, re-executed). A child that inspected code, or
// whose run failed or was stopped, exits; one whose backtest completed may run the same
// strategy code again (bit for bit; a few seconds, a few hundred runs and a few seconds
// of CPU at most), never other code, so nothing carries over between strategies. Every
// run builds a new JavaScript runtime either way.
//
// The child confines itself before it reads any code (rlimits on address space, CPU time,
// file size and descriptors; a lower priority; no new privileges; a seccomp filter that
// refuses files, sockets and new programs). The parent enforces the rest by killing the
// child: on cancel, at the wall-time limit, and when its resident memory passes the
// budget. The outcome is classified here, once: a strategy's own failure (exception,
// limit, crash, out of memory, a result that is not a finite number) is a *jsrt.RunError
// or *jsrt.LoadError with a short, sanitised message; anything else is an infrastructure
// error the caller may retry.
//
// Children are started ahead of time (Config.Warm), so a run does not wait for a process
// to start. The pool also owns the process's CPU places (Config.CPUSlots): a backtest or a
// study job takes one with Slot before it runs, and waiters take turns by the fair share.
package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/procstat"
)

// Defaults and fixed limits.
const (
	DefaultMaxLogLines = 100_000
	DefaultMaxLogBytes = 50 << 20
	defaultWarm        = 3

	// killGrace is how long past its limit a run may go before the parent kills it: the
	// child's own watchdog stops JavaScript loops at the limit with a clear message; a
	// built-in that never yields is killed here.
	killGrace = 500 * time.Millisecond
	// startLimit is how long a child may take to start and warm up (when none was warm, on
	// a busy machine); the run's own limits count from its request.
	startLimit = 30 * time.Second
	// asHeadroom is address space above the memory budget: an idle child already maps
	// about 1.5 GB it never touches (Go's heap reservations, C thread arenas). The address
	// space limit only stops giant single allocations at once; the budget itself is
	// enforced on resident memory.
	asHeadroom = 4 << 30
	memPoll    = 20 * time.Millisecond
	quietWait  = 500 * time.Millisecond

	// Reuse of a child for further runs of the same code: how long it may wait for one,
	// how many runs and how much CPU time it may serve (its CPU rlimit, twice the time
	// limit plus cpuMargin, then still covers a whole run), and how many wait at once.
	reuseIdle  = 3 * time.Second
	reuseRuns  = 200
	cpuMargin  = 5 * time.Second
	reuseSlots = 4
	// settle is how long after a run ends the pool still counts as busy: the caller is
	// storing the result and announcing it then.
	settle = 150 * time.Millisecond
)

// Config configures a Pool.
type Config struct {
	// Command starts a child: the program and its arguments. Empty re-executes this
	// program with no arguments; its main (or TestMain) must call ChildMain when IsChild.
	Command []string
	// MemoryLimit is a run's budget in bytes: the resident memory of its process. 0 means
	// jsrt.DefaultMemoryLimit.
	MemoryLimit uint64
	// TimeLimit is a run's wall-time limit. 0 means jsrt.DefaultWallTimeLimit.
	TimeLimit time.Duration
	// Warm is how many children are kept started and waiting; 0 means 2, negative none.
	Warm int
	// MaxLogLines and MaxLogBytes cap a run's log; past either, one WARNING line says the
	// log was truncated and later lines are dropped (the run goes on). 0 means the default.
	MaxLogLines int
	MaxLogBytes int
	Logger      *slog.Logger
	// CPUSlots is how many runs compute at once in this process, backtests and study jobs
	// together (0: no limit); Slot hands the places out.
	CPUSlots int
}

// Pool starts runner children and runs requests in them. It is safe for concurrent use.
type Pool struct {
	active   atomic.Int32  // requests in progress
	live     atomic.Int32  // children started and not yet exited
	lastEnd  atomic.Int64  // when the last request ended (Unix nanoseconds)
	waiting  atomic.Int32  // ready children offered, not yet taken
	starting chan struct{} // a slot per CPU for warm-keepers starting a child
	cfg      Config
	ready    chan *child
	mu       sync.Mutex
	idle     []*child // children that completed a run, newest last, waiting for the same code
	waiters  map[[sha256.Size]byte]*waiters
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	cpu      *slots // nil: no limit
}

// New returns a pool and starts its warm children. Close it to stop them.
func New(cfg Config) (*Pool, error) {
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("runner: find this program: %w", err)
		}
		cfg.Command = []string{exe}
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = jsrt.DefaultMemoryLimit
	}
	if cfg.TimeLimit <= 0 {
		cfg.TimeLimit = jsrt.DefaultWallTimeLimit
	}
	if cfg.Warm == 0 {
		cfg.Warm = defaultWarm
	}
	if cfg.MaxLogLines <= 0 {
		cfg.MaxLogLines = DefaultMaxLogLines
	}
	if cfg.MaxLogBytes <= 0 {
		cfg.MaxLogBytes = DefaultMaxLogBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{cfg: cfg, ready: make(chan *child), waiters: map[[sha256.Size]byte]*waiters{}, starting: make(chan struct{}, runtime.NumCPU()), ctx: ctx, cancel: cancel,
		cpu: newSlots(cfg.CPUSlots)}
	for range max(cfg.Warm, 0) {
		p.wg.Add(1)
		go p.keepWarm()
	}
	return p, nil
}

// Slot waits for one of the process's CPU places (Config.CPUSlots) for a run of kind for
// owner ("" for nobody), to hold while it computes: one backtest, or one study job's runs.
// Waiters take turns by the fair share (see slots). It returns the function that gives the
// place back (once; later calls do nothing), and false when ctx ended first.
func (p *Pool) Slot(ctx context.Context, owner string, kind fairshare.Kind) (release func(), ok bool) {
	return p.cpu.acquire(ctx, owner, kind)
}

// Stats is what a pool holds now.
type Stats struct {
	Processes int // runner processes alive: running, warm or idle
	Busy      int // requests (runs and inspections) in progress
}

// Stats reports the pool's processes and requests now.
func (p *Pool) Stats() Stats {
	return Stats{Processes: int(p.live.Load()), Busy: int(p.active.Load())}
}

// Close stops the warm and idle children. Runs under way are not affected.
func (p *Pool) Close() error {
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.idleTimer.Stop()
		c.discard()
	}
	return nil
}

// reuse takes a child that last completed a run of the same code, if one waits.
func (p *Pool) reuse(key [sha256.Size]byte) *child {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if c := p.idle[i]; c.key == key {
			p.idle = slices.Delete(p.idle, i, i+1)
			c.idleTimer.Stop()
			return c
		}
	}
	return nil
}

// waiters are the runs of one code waiting in take for a child: a child that completes a
// run of that code goes straight to one of them.
type waiters struct {
	ch chan *child
	n  int
}

// park keeps c, which just completed a run, for another run of the same code (handing it
// to one waiting now, if any), unless it has served enough; it reports whether it did.
func (p *Pool) park(c *child, budget uint64) bool {
	if p.ctx.Err() != nil || c.runs >= reuseRuns {
		return false
	}
	if used, err := procstat.CPU(c.cmd.Process.Pid); err != nil || used >= cpuMargin {
		return false
	}
	if n, err := procstat.RSS(c.cmd.Process.Pid); err != nil || n > budget/2 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.waiters[c.key]; w != nil {
		select {
		case w.ch <- c: // a run of the same code was waiting in take
			return true
		default:
		}
	}
	if len(p.idle) >= reuseSlots {
		old := p.idle[0]
		p.idle = p.idle[1:]
		old.idleTimer.Stop()
		old.discard()
	}
	c.idleTimer = time.AfterFunc(reuseIdle, func() {
		p.mu.Lock()
		i := slices.Index(p.idle, c)
		if i >= 0 {
			p.idle = slices.Delete(p.idle, i, i+1)
		}
		p.mu.Unlock()
		if i >= 0 {
			c.discard()
		}
	})
	p.idle = append(p.idle, c)
	return true
}

// keepWarm holds one ready child until a request takes it, then starts the next.
func (p *Pool) keepWarm() {
	defer p.wg.Done()
	backoff := 100 * time.Millisecond
	for p.ctx.Err() == nil {
		p.waitQuiet()
		// At most one start per CPU: a child is ready soonest when it does not share its
		// CPU with other starting children.
		p.starting <- struct{}{}
		c, err := p.start(p.ctx, "")
		<-p.starting
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.cfg.Logger.Error("start strategy runner", "err", err)
			select {
			case <-p.ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		p.waiting.Add(1)
		select {
		case p.ready <- c:
			p.waiting.Add(-1)
		case <-p.ctx.Done():
			p.waiting.Add(-1)
			c.discard()
			return
		}
	}
}

// waitQuiet holds back the start of a child while a request is under way or has just
// ended (its result is being stored) and another child is ready for the next one
// (quietWait at most): a start costs some 40 ms of CPU, which the run under way would
// otherwise share on a small machine.
func (p *Pool) waitQuiet() {
	deadline := time.Now().Add(quietWait)
	busy := func() bool {
		return p.active.Load() > 0 || time.Since(time.Unix(0, p.lastEnd.Load())) < settle
	}
	for busy() && p.waiting.Load() > 0 && time.Now().Before(deadline) {
		select {
		case <-p.ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// take returns, with a key, a child waiting after a run of the same code, else a warm
// child. When none is waiting it waits for the next one the pool makes ready (starting
// one more here would only share the CPU with those) or, with a key, for a child
// completing a run of the same code, whichever comes first; it starts one itself when
// the pool keeps none warm.
func (p *Pool) take(ctx context.Context, key *[sha256.Size]byte, zone string) (*child, error) {
	if key != nil {
		if c := p.reuse(*key); c != nil {
			return c, nil
		}
	}
	if p.cfg.Warm < 0 || zone != "" { // warm children are in UTC
		return p.start(ctx, zone)
	}
	var handoff chan *child // nil without a key: never ready
	if key != nil {
		p.mu.Lock()
		w := p.waiters[*key]
		if w == nil {
			w = &waiters{ch: make(chan *child)}
			p.waiters[*key] = w
		}
		w.n++
		p.mu.Unlock()
		handoff = w.ch
		defer func() {
			p.mu.Lock()
			if w.n--; w.n == 0 {
				delete(p.waiters, *key)
			}
			p.mu.Unlock()
		}()
	}
	select {
	case c := <-p.ready:
		return c, nil
	case c := <-handoff:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return p.start(ctx, "") // closed: a runner for the requests still coming
	}
}

// start starts a child whose local time zone is zone ("": UTC) and waits until it is ready
// for a request.
func (p *Pool) start(ctx context.Context, zone string) (*child, error) {
	c, err := p.spawn(zone)
	if err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		var m message
		err := c.dec.Decode(&m)
		if err == nil && !m.Ready {
			err = errors.New("the child's first frame is not Ready")
		}
		ready <- err
	}()
	t := time.NewTimer(startLimit)
	defer t.Stop()
	select {
	case err = <-ready:
	case <-t.C:
		err = fmt.Errorf("not ready within %s", startLimit)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		c.discard()
		<-c.exited
		return nil, fmt.Errorf("runner: start: %w %s", err, firstLine(c.stderr.String(), ""))
	}
	return c, nil
}

// Inspect loads code in a child and returns its strategy. Code that cannot be loaded,
// including code that crashes, exhausts memory or loops while loading, gives a
// *jsrt.LoadError; other errors are the pool's own.
func (p *Pool) Inspect(ctx context.Context, code string) (*jsrt.StrategyInfo, error) {
	req := request{Inspect: true, Code: code, TimeLimit: jsrt.InspectTimeLimit, MemoryLimit: jsrt.InspectMemoryLimit}
	final, fail, err := p.do(ctx, req, nil, "", nil)
	switch {
	case err != nil:
		return nil, err
	case fail != nil:
		if fail.Kind == jsrt.KindCancelled {
			return nil, fmt.Errorf("inspect strategy: %w", ctx.Err())
		}
		return nil, &jsrt.LoadError{Message: "Failed to load strategy: " + fail.Message}
	case final.LoadErr != nil:
		return nil, final.LoadErr
	case final.Info != nil:
		return final.Info, nil
	}
	return nil, errors.New("runner: inspection ended without an answer")
}

// Run runs a backtest in a child. Failures of the strategy are *jsrt.RunError (Kind
// "strategy", "timeout", "memory", or "cancelled" wrapping the context's error); other
// errors are infrastructure failures worth a retry. OnProgress and OnLog are called from
// one goroutine, in order; the log is capped (Config.MaxLogLines, MaxLogBytes).
func (p *Pool) Run(ctx context.Context, cfg jsrt.RunConfig) (*engine.Result, error) {
	req := request{Code: cfg.Code, Params: cfg.Params, Feeds: toWireFeeds(cfg.Feeds), Cash: cfg.Cash,
		Commission: cfg.Commission, TimeLimit: cfg.WallTimeLimit, MemoryLimit: cfg.MemoryLimit, TradeFrom: cfg.TradeFrom,
		MaxLogLines: p.cfg.MaxLogLines, MaxLogBytes: p.cfg.MaxLogBytes}
	if req.TimeLimit <= 0 {
		req.TimeLimit = p.cfg.TimeLimit
	}
	if req.MemoryLimit == 0 {
		req.MemoryLimit = p.cfg.MemoryLimit
	}
	logs := &logCap{maxLines: p.cfg.MaxLogLines, maxBytes: p.cfg.MaxLogBytes, out: cfg.OnLog}
	key, zone := childKey(cfg)
	final, fail, err := p.do(ctx, req, &key, zone, func(m message) {
		switch {
		case m.Progress != nil && cfg.OnProgress != nil:
			cfg.OnProgress(m.Progress.Current, m.Progress.Total)
		case m.Log != nil:
			logs.add(*m.Log)
		case m.Logs != nil:
			for _, l := range m.Logs {
				logs.add(l)
			}
		}
	})
	switch {
	case err != nil:
		return nil, err
	case fail != nil:
		return nil, fail
	case final.RunErr != nil:
		return nil, &jsrt.RunError{Kind: final.RunErr.Kind, Message: final.RunErr.Message, Line: final.RunErr.Line}
	case final.Result != nil:
		where := nonFinite(final.Result) // the equity curve travels apart and is checked below
		if final.Equity != nil {
			var bad string
			final.Result.Equity, bad = final.Equity.points()
			where = cmp.Or(where, bad)
		}
		if where != "" {
			return nil, notFiniteError(where)
		}
		return final.Result, nil
	}
	return nil, errors.New("runner: run ended without an answer")
}

// Lookahead checks cfg's strategy for look-ahead (jsrt.Lookahead) in a child: the full run,
// the cut runs and the later start all run there, under cfg's time and memory limits for the
// whole check. Failures are classified as Run's.
func (p *Pool) Lookahead(ctx context.Context, cfg jsrt.RunConfig) (*bias.Report, error) {
	req := request{Lookahead: true, Code: cfg.Code, Params: cfg.Params, Feeds: toWireFeeds(cfg.Feeds), Cash: cfg.Cash,
		Commission: cfg.Commission, TimeLimit: cmp.Or(cfg.WallTimeLimit, p.cfg.TimeLimit), MemoryLimit: cmp.Or(cfg.MemoryLimit, p.cfg.MemoryLimit)}
	key, zone := childKey(cfg)
	final, fail, err := p.do(ctx, req, &key, zone, nil)
	switch {
	case err != nil:
		return nil, err
	case fail != nil:
		return nil, fail
	case final.RunErr != nil:
		return nil, &jsrt.RunError{Kind: final.RunErr.Kind, Message: final.RunErr.Message, Line: final.RunErr.Line}
	case final.Bias != nil:
		return final.Bias, nil
	}
	return nil, errors.New("runner: look-ahead check ended without an answer")
}

// childKey is the key a child that ran cfg's code may be reused under, and the time zone
// it runs in. The strategy's Date objects tell local time in the data's zone: the child's
// own (TZ), set when it starts, so a child serves one zone and is reused only for it.
func childKey(cfg jsrt.RunConfig) (key [sha256.Size]byte, zone string) {
	zone = cfg.TimeZone
	if zone == "UTC" {
		zone = ""
	}
	return sha256.Sum256([]byte(cfg.Owner + "\x00" + zone + "\x00" + cfg.Code)), zone
}

// notFiniteError is the failure of a run whose figures hold NaN or Infinity (where names them).
func notFiniteError(where string) *jsrt.RunError {
	return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: "strategy produced a value that is not a finite number (NaN or Infinity) in its " + where}
}

// Constraint evaluates a study's constraint expression over each combination in a child
// (see jsrt.Constraint): which combinations to keep. A bad expression, or one that exceeds
// its limits, is a *jsrt.ParamError.
func (p *Pool) Constraint(ctx context.Context, expr string, combos []map[string]any) ([]bool, error) {
	if combos == nil {
		combos = []map[string]any{}
	}
	req := request{Constraint: expr, Batch: combos, TimeLimit: jsrt.ConstraintTimeLimit, MemoryLimit: p.cfg.MemoryLimit}
	final, fail, err := p.do(ctx, req, nil, "", nil)
	bad := func(msg string) error { return &jsrt.ParamError{Name: "constraint", Message: msg} }
	switch {
	case err != nil:
		return nil, err
	case fail != nil && fail.Kind == jsrt.KindCancelled:
		return nil, fmt.Errorf("constraint: %w", ctx.Err())
	case fail != nil:
		return nil, bad("Constraint: " + fail.Message)
	case final.RunErr != nil:
		return nil, bad(final.RunErr.Message)
	case len(final.Keep) == len(combos):
		return final.Keep, nil
	}
	return nil, errors.New("runner: constraint ended without an answer")
}

// RunBatch runs cfg's code with each of the parameter sets in turn in one child, as a
// study's batch: the feeds travel and the code is loaded once for all of them. onTrial is
// called with each trial's outcome in order (its Index is the parameter set's), from one
// goroutine; a trial's strategy failure is in its Err and the batch goes on. Each trial
// has cfg's time limit. If the child is lost mid-batch (it crashed, exceeded its memory or
// time, or ctx ended), RunBatch returns that failure as a *jsrt.RunError: it belongs to the
// first trial not reported, and the caller runs the rest again. Other errors are the
// pool's own. cfg's OnLog and OnProgress are not used: a study keeps figures only.
func (p *Pool) RunBatch(ctx context.Context, cfg jsrt.RunConfig, params []map[string]any, objective string, onTrial func(Trial)) error {
	if len(params) == 0 {
		return nil
	}
	req := request{Code: cfg.Code, Batch: params, Objective: objective, Feeds: toWireFeeds(cfg.Feeds), Cash: cfg.Cash,
		Commission: cfg.Commission, TimeLimit: cmp.Or(cfg.WallTimeLimit, p.cfg.TimeLimit), MemoryLimit: cmp.Or(cfg.MemoryLimit, p.cfg.MemoryLimit),
		TradeFrom: cfg.TradeFrom}
	key, zone := childKey(cfg)
	_, fail, err := p.do(ctx, req, &key, zone, func(m message) {
		if t := m.Trial; t != nil && onTrial != nil {
			if t.Err == nil {
				if where := nonFinite(&engine.Result{Summary: t.Summary}); where != "" {
					t.Err = notFiniteError(where)
				} else if slices.ContainsFunc(t.Returns, func(r float64) bool { return math.IsNaN(r) || math.IsInf(r, 0) }) {
					t.Err = notFiniteError("returns")
				}
				if t.Err != nil {
					t.Summary, t.Objective, t.Returns = engine.Summary{}, nil, nil
				}
			}
			onTrial(*t)
		}
	})
	switch {
	case err != nil:
		return err
	case fail != nil:
		return fail
	}
	return nil
}

// do sends req to a child and reads its frames until the final one, enforcing the limits.
// It returns the final frame, or a classified strategy failure, or an infrastructure error.
// With a key (the hash of a run's code) it may use a child that completed a run of the
// same code (see take), and keeps the child for the next such run if this one completes.
func (p *Pool) do(ctx context.Context, req request, key *[sha256.Size]byte, zone string, onFrame func(message)) (message, *jsrt.RunError, error) {
	if err := ctx.Err(); err != nil {
		return message{}, jsrt.Cancelled(err), nil
	}
	p.active.Add(1)
	defer func() {
		p.lastEnd.Store(time.Now().UnixNano())
		p.active.Add(-1)
	}()
	t0 := time.Now()
	c, err := p.take(ctx, key, zone)
	took := time.Since(t0)
	defer func() {
		p.cfg.Logger.Debug("runner request", "inspect", req.Inspect, "wait_for_runner", took, "total", time.Since(t0))
	}()
	if err != nil {
		if ctx.Err() != nil {
			return message{}, jsrt.Cancelled(ctx.Err()), nil
		}
		return message{}, nil, err
	}
	completed := false
	defer func() {
		if !completed || !p.park(c, req.MemoryLimit) {
			c.discard()
		}
	}()
	c.runs++
	if key != nil {
		c.key = *key
	}
	// Loading code is limited on computing (see jsrt's load guard): the deadline below
	// then waits for the child's CPU time too, up to the guard's wall-time cap.
	var cpu0 time.Duration
	if req.Inspect {
		cpu0, _ = procstat.CPU(c.cmd.Process.Pid)
	}
	sent := time.Now()
	if err := c.enc.Encode(req); err != nil {
		return message{}, nil, fmt.Errorf("runner: send request: %w", err)
	}

	var final message
	read := make(chan error, 1)
	trialDone := make(chan struct{}, 1)
	go func() {
		for {
			var m message
			if err := c.dec.Decode(&m); err != nil {
				read <- err
				return
			}
			if m.Progress == nil && m.Log == nil && m.Logs == nil && m.Trial == nil {
				final = m
				read <- nil
				return
			}
			if m.Trial != nil {
				select { // each trial of a batch has the time limit
				case trialDone <- struct{}{}:
				default:
				}
			}
			if onFrame != nil {
				onFrame(m)
			}
		}
	}()

	deadline := time.NewTimer(req.TimeLimit + killGrace)
	defer deadline.Stop()
	poll := time.NewTicker(memPoll)
	defer poll.Stop()
	var killed *jsrt.RunError
	kill := func(why *jsrt.RunError) {
		if killed == nil {
			killed = why
			c.kill()
		}
	}
	var readErr error
	for reading := true; reading; {
		select {
		case readErr = <-read:
			reading = false
		case <-trialDone:
			deadline.Reset(req.TimeLimit + killGrace)
		case <-ctx.Done():
			kill(jsrt.Cancelled(ctx.Err()))
		case <-deadline.C:
			if req.Inspect && time.Since(sent) < jsrt.LoadWallCap*req.TimeLimit+killGrace {
				if used, err := procstat.CPU(c.cmd.Process.Pid); err == nil && used-cpu0 < req.TimeLimit+killGrace {
					deadline.Reset(memPoll) // starved, not computing: look again shortly
					break
				}
			}
			kill(&jsrt.RunError{Kind: jsrt.KindTimeout, Message: fmt.Sprintf("strategy exceeded its time limit of %s", req.TimeLimit)})
		case <-poll.C:
			if n, err := procstat.RSS(c.cmd.Process.Pid); err == nil && n > req.MemoryLimit {
				kill(outOfMemory(req.MemoryLimit))
			}
		case <-c.exited:
			// The child is gone; its last frames are still in the pipe.
			readErr = <-read
			reading = false
		}
	}
	if readErr == nil && killed == nil {
		completed = key != nil && (final.Result != nil || final.Batch != nil)
		return final, nil, nil
	}
	// No final frame: the process ended or was killed. Wait for it, then say why.
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.kill()
		<-c.exited
	}
	if killed != nil {
		return message{}, killed, nil
	}
	return message{}, c.classify(req), nil
}

func outOfMemory(budget uint64) *jsrt.RunError {
	return &jsrt.RunError{Kind: jsrt.KindMemory, Message: fmt.Sprintf("strategy ran out of memory (budget %d MB)", budget>>20)}
}

// logCap passes log lines on until a run has written maxLines lines or maxBytes bytes,
// then one WARNING line, then nothing.
type logCap struct {
	maxLines, maxBytes int
	lines, bytes       int
	truncated          bool
	out                func(engine.LogEntry)
}

func (l *logCap) add(le engine.LogEntry) {
	if l.out == nil || l.truncated {
		return
	}
	if l.lines+1 > l.maxLines || l.bytes+len(le.Message) > l.maxBytes {
		l.truncated = true
		l.out(engine.LogEntry{Time: le.Time, Wall: le.Wall, Level: "WARNING", Source: "engine",
			Message: fmt.Sprintf("log truncated: this run wrote more than %d lines or %d MB of log; later lines are not kept", l.maxLines, l.maxBytes>>20)})
		return
	}
	l.lines++
	l.bytes += len(le.Message)
	l.out(le)
}
