package jsrt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// RunConfig configures one backtest of JavaScript strategy code.
type RunConfig struct {
	Code string
	// Compiled, when set, is Compile(Code): runs of the same code skip its parse and
	// compilation.
	Compiled   *Compiled
	Params     map[string]any
	Feeds      []engine.Feed
	Cash       float64 // 0 means 10000
	Commission float64 // fraction of traded value
	// TimeZone (an IANA name, "" for UTC) is the zone the strategy's Date objects tell
	// local time in. JavaScript's local time is the process's (time.Local): Run uses it as
	// it is, and the runner starts the child that runs the strategy with TZ set to this.
	TimeZone string
	// Owner is who the run is for (a user; "" for nobody). Run ignores it; the runner
	// reuses a process only for runs of the same owner, so one user's code never runs in a
	// process another user's run has been in.
	Owner         string
	WallTimeLimit time.Duration // 0 means DefaultWallTimeLimit
	MemoryLimit   uint64        // bytes of heap growth; 0 means DefaultMemoryLimit
	OnProgress    func(current, total int)
	OnLog         func(engine.LogEntry)
	QuietEngine   bool // see engine.Config.QuietEngine
	SummaryOnly   bool // see engine.Config.SummaryOnly
	// TradeFrom, when set, makes the bars before it indicator warm-up only (see
	// engine.Config.TradeFrom).
	TradeFrom time.Time
	// Trace, when set, is filled with the lines the run made, its decisions and its state
	// at the Watch steps (Unix nanoseconds), for the look-ahead check (internal/bias);
	// Math.random is then seeded, so that every traced run draws the same numbers.
	Trace *bias.Trace
	Watch map[int64]bool
	// Memo, when set, shares data columns and indicators with the other runs given it: runs
	// of the same code on the same Feeds, one at a time (a study's batch).
	Memo *Memo
}

// Run executes the strategy over the feeds. Failures are *RunError; a
// cancelled context gives Kind "cancelled" and an error wrapping ctx.Err().
func Run(ctx context.Context, cfg RunConfig) (*engine.Result, error) {
	if cfg.WallTimeLimit <= 0 {
		cfg.WallTimeLimit = DefaultWallTimeLimit
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if err := ctx.Err(); err != nil {
		return nil, Cancelled(err)
	}
	rt := newRuntime()
	h := &host{rt: rt, memo: cfg.Memo}
	if cfg.Trace != nil {
		h.tracer = &tracer{t: cfg.Trace, watch: cfg.Watch, arrays: watching{applyFeed: -1}}
		seeded(rt)
	}
	base, err := installGlobals(rt, h.hostObject(), h.indObject())
	if err != nil {
		return nil, fmt.Errorf("install prelude: %w", err)
	}
	h.base = base
	g := startGuard(ctx, rt, cfg.WallTimeLimit, cfg.MemoryLimit)
	res, err := h.safeRun(ctx, g, cfg)
	reason := g.stop()
	if err == nil {
		return res, nil
	}
	var re *RunError
	if errors.As(err, &re) {
		return nil, re
	}
	if r := g.interrupted(err); r != nil {
		return nil, r
	}
	if reason != nil && (reason.Kind != KindStrategy) {
		return nil, reason
	}
	if ctx.Err() != nil {
		return nil, Cancelled(ctx.Err())
	}
	msg, line, _ := jsErrorInfo(err)
	if line > 0 {
		msg = fmt.Sprintf("%s (line %d)", msg, line)
	}
	return nil, &RunError{Kind: KindStrategy, Message: msg, Line: line, cause: err}
}

type host struct {
	rt    *goja.Runtime
	base  *goja.Object
	eng   *engine.Engine
	datas []*goja.Object // shared by the strategies of a run, as backtrader's feeds
	views []*dataView
	pos   []*goja.Object

	// strat is the state of the strategy being run; a run of several keeps the others'
	// in states and swaps them in (multi.go).
	strat
	states []strat
	active int
	names  []string // the strategies' class names, with several

	orderMethods [3]goja.Value
	lineProto    *goja.Object // lines' prototype: Array's, plus a.sub(b) and the like
	given        int          // feeds given to the run; resampled ones follow
	memo         *Memo        // shared with other runs on the same feeds, or nil
	tracer       *tracer      // records the run for the look-ahead check, or nil
	joined       []joinedFeed // the feeds made by static chain or rollover
}

// strat is what the host keeps per strategy instance.
type strat struct {
	inst *goja.Object

	next, prenext, notifyOrder, notifyTrade, stop goja.Callable
	nextStart                                     goja.Callable // the first next, when the strategy has one
	nextOpen                                      goja.Callable // cheat-on-open, when the strategy has one
	started                                       bool
	sizer                                         sizer      // sizes buy() and sell() without a size
	timers                                        []*jsTimer // added by addTimer, in order (tid)
	notifyTimer                                   goja.Callable
	inited                                        bool               // init() has run: no more timers
	contracts                                     map[int]*contracts // feeds joined by a static chain or rollover
	replays                                       []*replayState     // per feed, its replay (static replay, BarReplayer_Open) or nil
	sig                                           *signals           // static signals or signalAdd's, or nil
}

// wholeKey reads m[key] of a static declaration called name as a whole number, def where
// it is absent (resample and replay share the rule and its message).
func wholeKey(m map[string]any, name, key string, def int64) (int64, error) {
	switch n := m[key].(type) {
	case nil:
		return def, nil
	case int64:
		return n, nil
	}
	return 0, fmt.Errorf("%s.%s must be a whole number, got %v", name, key, m[key])
}

// resampled returns feeds followed by the feeds the strategy class asks for in its static
// resample (backtrader's resampledata): an object or an array of them, each
// {data: index of the feed (0), timeframe: 'weeks' | 'months' | 'years', compression: 1}.
func (h *host) resampled(cls *goja.Object, feeds []engine.Feed) ([]engine.Feed, error) {
	h.given = len(feeds)
	specs, err := staticList(cls, "resample", "an object {timeframe, data, compression}")
	if err != nil || specs == nil {
		return feeds, err
	}
	out := slices.Clip(feeds)
	for i, s := range specs {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("resample[%d] must be an object {timeframe, data, compression}", i)
		}
		name := fmt.Sprintf("resample[%d]", i)
		whole := func(key string, def int64) (int64, error) { return wholeKey(m, name, key, def) }
		data, err := whole("data", 0)
		if err != nil {
			return nil, err
		}
		if data < 0 || data >= int64(len(feeds)) {
			return nil, fmt.Errorf("resample[%d].data must be the index of one of the run's %d feeds, got %d", i, len(feeds), data)
		}
		comp, err := whole("compression", 1)
		if err != nil {
			return nil, err
		}
		tf, _ := m["timeframe"].(string)
		f, err := engine.Resample(feeds[data], tf, int(comp))
		if err != nil {
			return nil, fmt.Errorf("resample[%d]: %s", i, strings.TrimPrefix(err.Error(), "resample: "))
		}
		out = append(out, f)
	}
	return out, nil
}

// tradable is feed if orders may go to it: not to a resampled feed, whose bars are
// only known once their period is over.
func (h *host) tradable(feed int) int {
	if feed >= h.given {
		h.throw("orders go to the feeds the run was given, not to a resampled one (this.datas[%d])", feed)
	}
	return feed
}

// safeRun is run with panics (goja raises JavaScript exceptions thrown inside getters,
// setters and constructors called from Go as panics) turned into errors.
func (h *host) safeRun(ctx context.Context, g *guard, cfg RunConfig) (res *engine.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, recovered(r)
		}
	}()
	return h.run(ctx, g, cfg)
}

func (h *host) run(ctx context.Context, g *guard, cfg RunConfig) (*engine.Result, error) {
	rt := h.rt
	cls, info, lerr := loadStrategy(rt, g, cfg.Code, cfg.Compiled, h.base)
	if lerr != nil {
		if r := g.reason; r != nil {
			return nil, r
		}
		return nil, &RunError{Kind: KindStrategy, Message: lerr.Message, Line: lerr.Line}
	}
	params, err := ValidateParams(info, cfg.Params)
	if err != nil {
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	feeds, err := h.combined(cls, cfg.Feeds)
	if err == nil {
		feeds, err = h.filtered(cls, feeds)
	}
	if err == nil {
		feeds, err = h.replayed(cls, feeds)
	}
	if err == nil {
		feeds, err = h.resampled(cls, feeds)
	}
	if err != nil {
		if r := g.interrupted(err); r != nil { // a filter written in JavaScript ran past a limit
			return nil, r
		}
		if re := (*RunError)(nil); errors.As(err, &re) {
			return nil, re
		}
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	eng, err := engine.New(engine.Config{Feeds: feeds, Cash: cfg.Cash, Commission: cfg.Commission, OnProgress: cfg.OnProgress, OnLog: cfg.OnLog, QuietEngine: cfg.QuietEngine, SummaryOnly: cfg.SummaryOnly, TradeFrom: cfg.TradeFrom})
	if err != nil {
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	h.eng = eng
	if slices.ContainsFunc(h.replays, func(r *replayState) bool { return r != nil }) {
		h.wrapReplay()
	}

	datas := make([]any, len(feeds))
	for k := range feeds {
		datas[k] = h.dataObject(k)
	}
	specs, err := h.strategySpecs(cls, info, params)
	if err != nil {
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	if len(specs) > 1 {
		h.states = make([]strat, len(specs))
	}
	for i, sp := range specs {
		h.switchTo(i)
		eng.SetOwner(i)
		h.names = append(h.names, sp.name)
		inst, err := rt.New(sp.cls)
		if err != nil {
			return nil, err
		}
		h.inst = inst
		set := func(name string, v any) { _ = inst.Set(name, v) }
		set("p", sp.params)
		set("params", sp.params)
		set("data", datas[0])
		set("datas", rt.NewArray(datas...))
		for k := range datas {
			set(fmt.Sprintf("data%d", k), datas[k])
		}
		set("position", h.pos[0])
		set("broker", h.brokerObject())
	}

	// Run init and the bar loop from inside a call into the runtime: goja
	// drops its value stack whenever control returns to Go at the top
	// level, and re-growing it on every next() call would dominate the
	// cost of a bar.
	var res *engine.Result
	var runErr error
	trampoline, err := rt.RunProgram(driveProgram)
	if err != nil {
		return nil, err
	}
	drive, _ := goja.AssertFunction(trampoline)
	if _, err := drive(goja.Undefined(), rt.ToValue(func(goja.FunctionCall) goja.Value {
		res, runErr = h.drive(ctx, eng)
		return goja.Undefined()
	})); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		h.finishTrace()
		joinedSpans(res, feeds, h.joined)
	}
	return res, runErr
}

func (h *host) drive(ctx context.Context, eng *engine.Engine) (*engine.Result, error) {
	if h.states != nil {
		return h.driveAll(ctx, eng)
	}
	if err := h.setUp(); err != nil {
		return nil, err
	}
	eng.SetCheatOnOpen(h.nextOpen != nil)
	return eng.Run(ctx, h)
}

// setUp runs the current strategy's init() and finds its methods.
func (h *host) setUp() error {
	inst := h.inst
	if err := h.call("init"); err != nil {
		return err
	}
	if err := h.setUpSignals(); err != nil {
		return err
	}
	h.nameLines()
	h.inited = true
	baseProto := h.base.Get("prototype").(*goja.Object)
	method := func(name string) goja.Callable {
		v := inst.Get(name)
		if v == nil || v.SameAs(baseProto.Get(name)) {
			return nil
		}
		fn, _ := goja.AssertFunction(v)
		return fn
	}
	h.next = method("next")
	h.prenext = method("prenext")
	h.nextStart = method("nextStart")
	h.nextOpen = method("nextOpen")
	h.notifyOrder = method("notifyOrder")
	h.notifyTrade = method("notifyTrade")
	h.notifyTimer = method("notifyTimer")
	h.stop = method("stop")
	return nil
}

func (h *host) call(name string) error {
	fn, ok := goja.AssertFunction(h.inst.Get(name))
	if !ok {
		return fmt.Errorf("%s is not a function", name)
	}
	_, err := fn(h.inst)
	return err
}

// Next implements engine.Strategy. The first call, and every call at a step where a
// feed sits exactly at its minimum period (engine.AtMinPeriod: several with feeds of
// several timeframes), goes to nextStart when the strategy defines one (backtrader's
// nextstart, whose default calls next).
func (h *host) Next(e *engine.Engine) error {
	if h.sig != nil {
		h.signalStep()
	}
	if first := !h.started; first || e.AtMinPeriod() {
		h.started = true
		if h.nextStart != nil {
			_, err := h.nextStart(h.inst)
			h.afterStep()
			return err
		}
	}
	if h.next == nil {
		h.afterStep()
		return nil
	}
	_, err := h.next(h.inst)
	h.afterStep()
	return err
}

// Notified implements engine.NotificationFilter: a strategy that keeps the base class's
// notifyOrder or notifyTrade, which do nothing, is not sent copies for them.
func (h *host) Notified() (orders, trades bool) {
	return h.notifyOrder != nil, h.notifyTrade != nil
}

// NextOpen implements engine.OpenStrategy.
func (h *host) NextOpen(*engine.Engine) error {
	if h.nextOpen == nil {
		return nil
	}
	_, err := h.nextOpen(h.inst)
	return err
}

// Prenext implements engine.Strategy.
func (h *host) Prenext(*engine.Engine) error {
	if h.prenext == nil {
		h.afterStep()
		return nil
	}
	_, err := h.prenext(h.inst)
	h.afterStep()
	return err
}

// NotifyOrder implements engine.Strategy.
func (h *host) NotifyOrder(_ *engine.Engine, o *engine.Order) error {
	if h.notifyOrder == nil {
		return nil
	}
	_, err := h.notifyOrder(h.inst, h.orderObject(o))
	return err
}

// NotifyTrade implements engine.Strategy.
func (h *host) NotifyTrade(_ *engine.Engine, t *engine.TradeState) error {
	if h.notifyTrade == nil {
		return nil
	}
	_, err := h.notifyTrade(h.inst, h.tradeObject(t))
	return err
}

// Stop implements engine.Strategy.
func (h *host) Stop(*engine.Engine) error {
	if h.stop == nil {
		return nil
	}
	_, err := h.stop(h.inst)
	return err
}

func (h *host) throw(format string, args ...any) {
	panic(h.rt.NewTypeError(fmt.Sprintf(format, args...)))
}
