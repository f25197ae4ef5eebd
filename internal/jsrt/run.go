package jsrt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// TradeFrom, when set, makes the bars before it indicator warm-up only (see
	// engine.Config.TradeFrom).
	TradeFrom time.Time
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
	inst  *goja.Object
	datas []*goja.Object
	views []*dataView
	pos   []*goja.Object

	next, prenext, notifyOrder, notifyTrade, stop goja.Callable
	nextStart                                     goja.Callable // the first next, when the strategy has one
	nextOpen                                      goja.Callable // cheat-on-open, when the strategy has one
	started                                       bool
	orderMethods                                  [3]goja.Value
	lineProto                                     *goja.Object // lines' prototype: Array's, plus a.sub(b) and the like
	sizer                                         sizer        // sizes buy() and sell() without a size
	given                                         int          // feeds given to the run; resampled ones follow
	memo                                          *Memo        // shared with other runs on the same feeds, or nil
}

// resampled returns feeds followed by the feeds the strategy class asks for in its static
// resample (backtrader's resampledata): an object or an array of them, each
// {data: index of the feed (0), timeframe: 'weeks' | 'months' | 'years', compression: 1}.
func (h *host) resampled(cls *goja.Object, feeds []engine.Feed) ([]engine.Feed, error) {
	h.given = len(feeds)
	v := cls.Get("resample")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return feeds, nil
	}
	var specs []any
	switch x := v.Export().(type) {
	case []any:
		specs = x
	case map[string]any:
		specs = []any{x}
	default:
		return nil, errors.New("static resample must be an object {timeframe, data, compression} or an array of them")
	}
	out := slices.Clip(feeds)
	for i, s := range specs {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("resample[%d] must be an object {timeframe, data, compression}", i)
		}
		whole := func(key string, def int64) (int64, error) {
			switch n := m[key].(type) {
			case nil:
				return def, nil
			case int64:
				return n, nil
			}
			return 0, fmt.Errorf("resample[%d].%s must be a whole number, got %v", i, key, m[key])
		}
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
	feeds, err := h.resampled(cls, cfg.Feeds)
	if err != nil {
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	eng, err := engine.New(engine.Config{Feeds: feeds, Cash: cfg.Cash, Commission: cfg.Commission, OnProgress: cfg.OnProgress, OnLog: cfg.OnLog, QuietEngine: cfg.QuietEngine, TradeFrom: cfg.TradeFrom})
	if err != nil {
		return nil, &RunError{Kind: KindStrategy, Message: err.Error()}
	}
	h.eng = eng

	p := rt.NewObject()
	for _, prm := range info.Params {
		v := prm.Default
		if o, ok := params[prm.Name]; ok {
			v = o
		} else if prm.Type == "object" {
			// keep the original JS value, not its string form
			if po, ok := cls.Get("params").(*goja.Object); ok {
				_ = p.Set(prm.Name, po.Get(prm.Name))
				continue
			}
		}
		_ = p.Set(prm.Name, v)
	}

	datas := make([]any, len(feeds))
	for k := range feeds {
		datas[k] = h.dataObject(k)
	}
	inst, err := rt.New(cls)
	if err != nil {
		return nil, err
	}
	h.inst = inst
	set := func(name string, v any) { _ = inst.Set(name, v) }
	set("p", p)
	set("params", p)
	set("data", datas[0])
	set("datas", rt.NewArray(datas...))
	for k := range datas {
		set(fmt.Sprintf("data%d", k), datas[k])
	}
	set("position", h.pos[0])
	set("broker", h.brokerObject())

	// Run init and the bar loop from inside a call into the runtime: goja
	// drops its value stack whenever control returns to Go at the top
	// level, and re-growing it on every next() call would dominate the
	// cost of a bar.
	var res *engine.Result
	var runErr error
	trampoline, err := rt.RunScript("drive.js", "(function (f) { f(); })")
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
	return res, runErr
}

func (h *host) drive(ctx context.Context, eng *engine.Engine) (*engine.Result, error) {
	inst := h.inst
	if err := h.call("init"); err != nil {
		return nil, err
	}
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
	eng.SetCheatOnOpen(h.nextOpen != nil)
	h.notifyOrder = method("notifyOrder")
	h.notifyTrade = method("notifyTrade")
	h.stop = method("stop")
	return eng.Run(ctx, h)
}

func (h *host) call(name string) error {
	fn, ok := goja.AssertFunction(h.inst.Get(name))
	if !ok {
		return fmt.Errorf("%s is not a function", name)
	}
	_, err := fn(h.inst)
	return err
}

// Next implements engine.Strategy. The first call goes to nextStart when the strategy
// defines one (backtrader's nextstart, whose default calls next).
func (h *host) Next(*engine.Engine) error {
	if !h.started {
		h.started = true
		if h.nextStart != nil {
			_, err := h.nextStart(h.inst)
			return err
		}
	}
	if h.next == nil {
		return nil
	}
	_, err := h.next(h.inst)
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
		return nil
	}
	_, err := h.prenext(h.inst)
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

var columnNames = [6]string{"open", "high", "low", "close", "volume", "datetime"}

// datesOnly reports whether a feed's bars are dates (all at midnight UTC, as daily and
// coarser bars are stored) while local time is not UTC: those become local midnights.
func datesOnly(f *engine.Feed) bool {
	if time.Local == time.UTC || time.Local.String() == "UTC" {
		return false
	}
	for i := range f.Bars {
		t := f.Stamp(i).UTC()
		if h, m, s := t.Clock(); h != 0 || m != 0 || s != 0 || t.Nanosecond() != 0 {
			return false
		}
	}
	return len(f.Bars) > 0
}

// dataView is this.datas[k]. Its lines are built on first use, so a
// strategy that only reads closes does not pay for the other columns.
type dataView struct {
	h     *host
	feed  int
	lines [6]*line
	objs  [6]*goja.Object
	date  goja.Value
}

func (d *dataView) column(c int) *line {
	if d.lines[c] == nil {
		f := d.h.eng.Feeds()[d.feed]
		compute := func() engine.Series { return engine.Line(d.values(&f, c)) }
		s, key := engine.Series{}, ""
		if d.h.memo != nil {
			key = "data" + strconv.Itoa(d.feed) + "." + strconv.Itoa(c)
			s = d.h.memo.get(key, compute)
		} else {
			s = compute()
		}
		l := newLine(d.h.rt, s, d.feed, d.h.eng.Cursor(d.feed))
		l.date, l.key = c == 5, key
		d.lines[c] = l
		d.objs[c] = d.h.lineObject(l)
	}
	return d.lines[c]
}

// values is column c of feed f (open, high, low, close, volume, time).
func (d *dataView) values(f *engine.Feed, c int) []float64 {
	v := make([]float64, len(f.Bars))
	dates := c == 5 && datesOnly(f)
	for i := range f.Bars {
		b := &f.Bars[i]
		switch c {
		case 0:
			v[i] = b.Open
		case 1:
			v[i] = b.High
		case 2:
			v[i] = b.Low
		case 3:
			v[i] = b.Close
		case 4:
			v[i] = float64(b.Volume)
		case 5:
			t := f.Stamp(i)
			if dates { // a date is midnight of the local calendar, not a UTC instant
				t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
			}
			v[i] = float64(t.UnixMilli())
		}
	}
	return v
}

func (d *dataView) Get(key string) goja.Value {
	for c, n := range columnNames {
		if n == key {
			d.column(c)
			return d.objs[c]
		}
	}
	switch key {
	case "symbol":
		return d.h.rt.ToValue(d.h.eng.Feeds()[d.feed].Symbol)
	case "length":
		return d.h.rt.ToValue(*d.h.eng.Cursor(d.feed) + 1)
	case "date":
		return d.date
	}
	return nil // not ours: looked up on the prototype (toString, valueOf, …)
}
func (d *dataView) Set(string, goja.Value) bool { return false }
func (d *dataView) Has(key string) bool {
	for _, n := range columnNames {
		if n == key {
			return true
		}
	}
	return key == "symbol" || key == "length" || key == "date"
}
func (d *dataView) Delete(string) bool { return false }
func (d *dataView) Keys() []string {
	return append(columnNames[:], "symbol", "length")
}

// dataObject builds this.datas[k] and its position object.
func (h *host) dataObject(k int) *goja.Object {
	rt := h.rt
	f := h.eng.Feeds()[k]
	cur := h.eng.Cursor(k)
	d := &dataView{h: h, feed: k}
	d.date = named(rt, "date", func(ago int) string {
		i := *cur + ago
		if ago > 0 || i < 0 || i >= len(f.Bars) {
			return ""
		}
		return f.Stamp(i).Format("2006-01-02")
	})
	o := rt.NewDynamicObject(d)
	h.datas = append(h.datas, o)
	h.views = append(h.views, d)
	h.pos = append(h.pos, rt.NewDynamicObject(&positionView{h: h, feed: k}))
	return o
}

// feedOf maps a data object (or undefined, meaning data 0) to its index.
func (h *host) feedOf(v goja.Value) int {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	o, ok := v.(*goja.Object)
	if ok {
		for k, d := range h.datas {
			if d == o {
				return k
			}
		}
	}
	if n, ok := v.Export().(int64); ok && n >= 0 && int(n) < len(h.datas) {
		return int(n)
	}
	h.throw("data must be one of this.datas")
	return 0
}

type positionView struct {
	h    *host
	feed int
	// script values of the last size and price read, reused while the
	// position is unchanged (most bars), so reads do not allocate
	size, price       float64
	sizeVal, priceVal goja.Value
}

func (p *positionView) Get(key string) goja.Value {
	pos := p.h.eng.Position(p.feed)
	switch key {
	case "size":
		if p.sizeVal == nil || pos.Size != p.size {
			p.size, p.sizeVal = pos.Size, p.h.rt.ToValue(pos.Size)
		}
		return p.sizeVal
	case "price":
		if p.priceVal == nil || pos.Price != p.price {
			p.price, p.priceVal = pos.Price, p.h.rt.ToValue(pos.Price)
		}
		return p.priceVal
	}
	return nil // not ours: looked up on the prototype (toString, valueOf, …)
}
func (p *positionView) Set(string, goja.Value) bool { return false }
func (p *positionView) Has(key string) bool         { return key == "size" || key == "price" }
func (p *positionView) Delete(string) bool          { return false }
func (p *positionView) Keys() []string              { return []string{"size", "price"} }

// brokerView is this.broker: cash and value, and the broker settings of backtrader's
// BackBroker a strategy may change (commission scheme, slippage).
type brokerView struct {
	h       *host
	methods map[string]goja.Value
}

func (b *brokerView) Get(key string) goja.Value {
	switch key {
	case "cash":
		return b.h.rt.ToValue(b.h.eng.Cash())
	case "value":
		return b.h.rt.ToValue(b.h.eng.Value())
	}
	return b.methods[key] // nil when not ours: looked up on the prototype (toString, valueOf, …)
}
func (b *brokerView) Set(string, goja.Value) bool { return false }
func (b *brokerView) Has(key string) bool {
	_, ok := b.methods[key]
	return ok || key == "cash" || key == "value"
}
func (b *brokerView) Delete(string) bool { return false }
func (b *brokerView) Keys() []string     { return []string{"cash", "value"} }

func (h *host) brokerObject() *goja.Object {
	b := &brokerView{h: h, methods: map[string]goja.Value{}}
	b.methods["getCash"] = named(h.rt, "getCash", func() float64 { return h.eng.Cash() })
	b.methods["getValue"] = named(h.rt, "getValue", func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) > 0 && !goja.IsUndefined(call.Argument(0)) {
			return h.rt.ToValue(h.eng.FeedValue(h.feedOf(call.Argument(0))))
		}
		return h.rt.ToValue(h.eng.Value())
	})
	slippage := func(name string, perc bool) goja.Value {
		return named(h.rt, name, func(call goja.FunctionCall) goja.Value {
			amount := call.Argument(0).ToFloat()
			op := h.readOpts(call.Argument(1))
			flag := func(key string, def bool) bool {
				if v := op.get(key); v != nil {
					return v.ToBoolean()
				}
				return def
			}
			// backtrader's set_slippage_perc/fixed defaults: slip_open, slip_limit and
			// slip_match on, slip_out off.
			s := engine.Slippage{Open: flag("open", true), Limit: flag("limit", true), Match: flag("match", true), Out: flag("out", false)}
			if perc {
				s.Perc = amount
			} else {
				s.Fixed = amount
			}
			if err := h.eng.SetSlippage(s); err != nil {
				h.throw("%s: %s", name, err.Error())
			}
			return goja.Undefined()
		})
	}
	b.methods["setCommission"] = named(h.rt, "setCommission", func(call goja.FunctionCall) goja.Value {
		op := h.readOpts(call.Argument(0))
		if op.o == nil {
			h.throw("setCommission expects {commission, commtype, minimum, margin, mult}")
		}
		c := engine.CommInfo{Commission: h.num(op, "commission", 0), Minimum: h.num(op, "minimum", 0),
			Margin: h.num(op, "margin", 0), Mult: h.num(op, "mult", 1)}
		// backtrader's setcommission: without a commtype, a margin makes it per contract
		// (futures), else a percentage of the value.
		c.Percent = c.Margin == 0
		if t := op.get("commtype"); t != nil {
			switch t.String() {
			case "percent":
				c.Percent = true
			case "fixed":
				c.Percent = false
			default:
				h.throw("setCommission: commtype must be 'percent' or 'fixed', got %q", t.String())
			}
		}
		if err := h.eng.SetCommission(c); err != nil {
			h.throw("setCommission: %s", err.Error())
		}
		return goja.Undefined()
	})
	b.methods["setSlippagePerc"] = slippage("setSlippagePerc", true)
	b.methods["setSlippageFixed"] = slippage("setSlippageFixed", false)
	return h.rt.NewDynamicObject(b)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339)
}

// orderView is a JavaScript order. The object buy() and the other order functions return
// is live: it reads the engine's order, so polling order.status, order.alive() or
// order.executed works as in backtrader. notifyOrder gets a snapshot, as backtrader's
// notify_order gets a clone (the engine notifies with copies).
type orderView struct {
	h *host
	o *engine.Order
}

var orderKeys = []string{"ref", "status", "side", "exectype", "size", "price", "plimit", "trailamount", "trailpercent", "valid", "tradeid", "data", "created", "executed"}

func (v *orderView) Get(key string) goja.Value {
	h, o := v.h, v.o
	rt := h.rt
	switch key {
	case "ref":
		return rt.ToValue(o.Ref)
	case "status":
		return rt.ToValue(o.Status.String())
	case "side":
		return rt.ToValue(o.Side.String())
	case "exectype":
		return rt.ToValue(o.Type.String())
	case "size":
		return rt.ToValue(o.Size)
	case "price":
		return rt.ToValue(o.Price)
	case "plimit":
		return rt.ToValue(o.PLimit)
	case "trailamount":
		return rt.ToValue(o.TrailAmount)
	case "trailpercent":
		return rt.ToValue(o.TrailPercent)
	case "valid":
		if o.ValidUntil.IsZero() {
			return goja.Null()
		}
		return rt.ToValue(fmtTime(o.ValidUntil))
	case "tradeid":
		return rt.ToValue(o.TradeID)
	case "data":
		return h.datas[o.Feed]
	case "created":
		c := rt.NewObject()
		_ = c.Set("price", o.CreatedPrice)
		_ = c.Set("size", o.Size)
		_ = c.Set("date", fmtTime(o.CreatedTime))
		return c
	case "executed":
		ex := rt.NewObject()
		_ = ex.Set("price", o.ExecPrice)
		_ = ex.Set("size", o.ExecSize)
		_ = ex.Set("value", o.ExecValue)
		_ = ex.Set("comm", o.ExecComm)
		_ = ex.Set("pnl", o.ExecPnL)
		_ = ex.Set("date", fmtTime(o.ExecTime))
		return ex
	case "isBuy":
		return h.orderMethods[0]
	case "isSell":
		return h.orderMethods[1]
	case "alive":
		return h.orderMethods[2]
	}
	return nil // not ours: looked up on the prototype (toString, valueOf, …)
}
func (v *orderView) Set(string, goja.Value) bool { return false }
func (v *orderView) Has(key string) bool {
	for _, k := range orderKeys {
		if k == key {
			return true
		}
	}
	return key == "isBuy" || key == "isSell" || key == "alive"
}
func (v *orderView) Delete(string) bool { return false }
func (v *orderView) Keys() []string     { return orderKeys }

func (h *host) orderObject(o *engine.Order) *goja.Object {
	if h.orderMethods[0] == nil {
		view := func(call goja.FunctionCall) *orderView {
			if o, ok := call.This.(*goja.Object); ok {
				if v, ok := o.Export().(*orderView); ok {
					return v
				}
			}
			h.throw("not an order")
			return nil
		}
		h.orderMethods[0] = named(h.rt, "isBuy", func(call goja.FunctionCall) goja.Value { return h.rt.ToValue(view(call).o.Side == engine.Buy) })
		h.orderMethods[1] = named(h.rt, "isSell", func(call goja.FunctionCall) goja.Value { return h.rt.ToValue(view(call).o.Side == engine.Sell) })
		h.orderMethods[2] = named(h.rt, "alive", func(call goja.FunctionCall) goja.Value { return h.rt.ToValue(view(call).o.Status.Alive()) })
	}
	return h.rt.NewDynamicObject(&orderView{h: h, o: o})
}

func (h *host) tradeObject(t *engine.TradeState) *goja.Object {
	obj := h.rt.NewObject()
	_ = obj.Set("ref", t.Ref)
	_ = obj.Set("tradeid", t.TradeID)
	_ = obj.Set("size", t.Size)
	_ = obj.Set("price", t.Price)
	_ = obj.Set("pnl", t.PnL)
	_ = obj.Set("pnlcomm", t.PnLComm)
	_ = obj.Set("commission", t.Commission)
	_ = obj.Set("isopen", t.IsOpen)
	_ = obj.Set("isclosed", t.IsClosed)
	_ = obj.Set("justopened", t.JustOpened)
	_ = obj.Set("barlen", t.BarLen)
	_ = obj.Set("dtopen", fmtTime(t.OpenTime))
	_ = obj.Set("dtclose", fmtTime(t.CloseTime))
	_ = obj.Set("data", h.datas[t.Feed])
	return obj
}

// opts reads an options argument: an object, a number (the size) or
// nothing.
type opts struct {
	o    *goja.Object
	num  float64
	isNo bool
}

func (h *host) readOpts(v goja.Value) opts {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return opts{isNo: true}
	}
	if o, ok := v.(*goja.Object); ok {
		return opts{o: o}
	}
	f := v.ToFloat()
	if math.IsNaN(f) {
		h.throw("order options must be an object or a number")
	}
	return opts{num: f}
}

func (op opts) get(name string) goja.Value {
	if op.o == nil {
		return nil
	}
	v := op.o.Get(name)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	return v
}

func (h *host) num(op opts, name string, def float64) float64 {
	v := op.get(name)
	if v == nil {
		return def
	}
	f := v.ToFloat()
	if math.IsNaN(f) {
		h.throw("%s must be a number", name)
	}
	return f
}

func (h *host) orderRef(v goja.Value) *engine.Order {
	if v == nil {
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		h.throw("expected an order")
	}
	ref := o.Get("ref")
	if ref == nil {
		h.throw("expected an order")
	}
	n := int(ref.ToInteger())
	orders := h.eng.Orders()
	if n < 1 || n > len(orders) {
		h.throw("unknown order ref %d", n)
	}
	return orders[n-1]
}

// request reads an order's options; the size is 0 when none is given.
func (h *host) request(side engine.Side, op opts) engine.OrderRequest {
	r := engine.OrderRequest{Side: side}
	if op.o == nil && !op.isNo {
		r.Size = op.num
	}
	if op.o != nil {
		r.Feed = h.tradable(h.feedOf(op.get("data")))
		r.Size = h.num(op, "size", 0)
		r.Price = h.num(op, "price", 0)
		r.PLimit = h.num(op, "plimit", 0)
		if et := op.get("exectype"); et != nil {
			t, ok := engine.ParseExecType(et.String())
			if !ok {
				h.throw("unknown exectype %q (use %s)", et.String(), engine.ExecTypeNames)
			}
			r.Type = t
		}
		r.OCO = h.orderRef(op.get("oco"))
		r.TrailAmount = h.num(op, "trailamount", 0)
		r.TrailPercent = h.num(op, "trailpercent", 0)
		r.ValidUntil = h.validity(op.get("valid"), r.Feed)
		if id := h.num(op, "tradeid", 0); id != math.Trunc(id) || id < 0 || id > math.MaxInt32 {
			h.throw("tradeid must be a whole number of 0 or more, got %v", id)
		} else {
			r.TradeID = int(id)
		}
	}
	return r
}

// sized is request for buy(), sell() and the brackets: without a size, the strategy's
// sizer sizes the order (one unit by default, as backtrader's FixedSize).
func (h *host) sized(side engine.Side, op opts) engine.OrderRequest {
	r := h.request(side, op)
	if op.isNo || (op.o != nil && op.get("size") == nil) {
		r.Size = h.sizing(r.Feed, side == engine.Buy)
	}
	return r
}

// validity reads an order's valid option as backtrader's: a date ('YYYY-MM-DD' or a
// Date: valid until that date begins, so it expires on that date's first bar), a number of
// days or {days: n} (valid that long after the creating bar's time, expiring on the first
// bar after), 'Day' (until the end of the creating bar's day) or nothing / 'GTC' (good till
// cancelled). It returns the last valid moment.
func (h *host) validity(v goja.Value, feed int) time.Time {
	if v == nil {
		return time.Time{}
	}
	now := h.eng.Now()
	if c := h.eng.Cursor(feed); *c >= 0 {
		now = h.eng.Feeds()[feed].Bars[*c].Time
	}
	days := func(n float64) time.Time {
		if !(n >= 0) || math.IsInf(n, 0) {
			h.throw("valid: days must be a number of 0 or more, got %v", n)
		}
		return now.Add(time.Duration(n * float64(24*time.Hour)))
	}
	switch x := v.Export().(type) {
	case string:
		switch strings.ToLower(x) {
		case "gtc":
			return time.Time{}
		case "day":
			return engine.ValidDay(now)
		}
		t, err := time.Parse(time.DateOnly, x)
		if err != nil {
			h.throw("valid: %q is not a date (YYYY-MM-DD), 'Day' or 'GTC'", x)
		}
		return t.Add(-time.Nanosecond)
	case time.Time:
		return x.UTC().Add(-time.Nanosecond)
	case int64:
		return days(float64(x))
	case float64:
		return days(x)
	case map[string]any:
		if o, ok := v.(*goja.Object); ok {
			return days(h.num(opts{o: o}, "days", 0))
		}
	}
	h.throw("valid must be a date ('YYYY-MM-DD'), a number of days, {days: n}, 'Day' or 'GTC'")
	return time.Time{}
}

func (h *host) submit(r engine.OrderRequest) goja.Value {
	if r.Size < 0 {
		r.Side, r.Size = -r.Side, -r.Size
	}
	if r.Size == 0 {
		return goja.Null()
	}
	o, err := h.eng.Submit(r)
	if err != nil {
		h.throw("%s", err.Error())
	}
	return h.orderObject(o)
}

func (h *host) hostObject() *goja.Object {
	rt := h.rt
	o := rt.NewObject()
	// order and close run on every order: they take goja's FunctionCall, as the others
	// need not, because a Go function of other types is called through reflection.
	_ = o.Set("order", func(c goja.FunctionCall) goja.Value { // (strategy, side, opts)
		s := engine.Buy
		if c.Argument(1).String() == "sell" {
			s = engine.Sell
		}
		return h.submit(h.sized(s, h.readOpts(c.Argument(2))))
	})
	_ = o.Set("close", func(c goja.FunctionCall) goja.Value { // (strategy, opts)
		op := h.readOpts(c.Argument(1))
		feed := h.feedOf(op.get("data")) // request refuses a resampled feed
		pos := h.eng.Position(feed).Size
		if pos == 0 {
			return goja.Null()
		}
		r := h.request(engine.Sell, op)
		r.Feed = feed
		r.Size = math.Abs(h.num(op, "size", pos))
		if pos < 0 {
			r.Side = engine.Buy
		}
		return h.submit(r)
	})
	_ = o.Set("setSizer", func(_ goja.Value, v goja.Value) { h.setSizer(v) })
	_ = o.Set("cancel", func(v goja.Value) bool {
		return h.eng.Cancel(h.orderRef(v))
	})
	_ = o.Set("bracket", func(_ goja.Value, side string, v goja.Value) goja.Value {
		s := engine.Buy
		if side == "sell" {
			s = engine.Sell
		}
		op := h.readOpts(v)
		r := h.sized(s, op)
		if op.get("exectype") == nil {
			// backtrader's buy_bracket/sell_bracket: the entry is a Limit order, at the
			// signal bar's close unless a price is given.
			r.Type = engine.Limit
		}
		stop := h.num(op, "stopprice", 0)
		limit := h.num(op, "limitprice", 0)
		orders, err := h.eng.Bracket(r, stop, limit)
		if err != nil {
			h.throw("%s", err.Error())
		}
		out := make([]any, len(orders))
		for i, x := range orders {
			out[i] = h.orderObject(x)
		}
		return rt.NewArray(out...)
	})
	_ = o.Set("target", func(_ goja.Value, kind string, v goja.Value) goja.Value {
		op := h.readOpts(v)
		target := op.num
		if op.o != nil {
			target = h.num(op, "target", 0)
		}
		feed := h.feedOf(op.get("data")) // request refuses a resampled feed
		pos := h.eng.Position(feed).Size
		r := h.request(engine.Buy, op)
		r.Feed = feed
		switch kind {
		case "size":
			if target == 0 && pos != 0 {
				r.Size, r.Side = math.Abs(pos), engine.Side(-sign(pos))
				return h.submit(r)
			}
			r.Size = target - pos
			return h.submit(r)
		default:
			if kind == "percent" {
				target = h.eng.Value() * target
			}
			if target == 0 && pos != 0 {
				r.Size, r.Side = math.Abs(pos), engine.Side(-sign(pos))
				return h.submit(r)
			}
			value := h.eng.FeedValue(feed)
			price := r.Price
			if price == 0 {
				price = h.closeOf(feed)
			}
			switch {
			case target > value:
				r.Size = h.eng.GetSize(price, target-value)
			case target < value:
				r.Size = -h.eng.GetSize(price, value-target)
			default:
				return goja.Null()
			}
			return h.submit(r)
		}
	})
	_ = o.Set("getPosition", func(v goja.Value) *goja.Object { return h.pos[h.feedOf(v)] })
	_ = o.Set("log", func(msg goja.Value, level goja.Value) {
		lv := "INFO"
		if level != nil && !goja.IsUndefined(level) {
			switch strings.ToUpper(level.String()) {
			case "DEBUG":
				lv = "DEBUG"
			case "WARN", "WARNING":
				lv = "WARNING"
			case "ERROR":
				lv = "ERROR"
			}
		}
		m := ""
		if msg != nil {
			m = msg.String()
		}
		h.eng.Log(lv, "strategy", m)
	})
	nameFunctions(rt, o)
	return o
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// sizer is a strategy's sizer, as backtrader's: fixed (a stake), percent of the cash (or
// all of it), optionally in whole units, or a function of the strategy's own.
type sizer struct {
	kind     string // "" (fixed 1), "fixed", "percent" or "func"
	stake    float64
	percents float64
	whole    bool
	fn       goja.Callable
}

// setSizer is this.setSizer(spec): {type: 'fixed', stake}, {type: 'percent', percents},
// {type: 'allin'} (each with whole: true for whole units), or a function.
func (h *host) setSizer(v goja.Value) {
	if fn, ok := goja.AssertFunction(v); ok {
		h.sizer = sizer{kind: "func", fn: fn}
		return
	}
	op := h.readOpts(v)
	if op.o == nil {
		h.throw("setSizer expects {type: 'fixed' | 'percent' | 'allin', ...} or a function")
	}
	s := sizer{whole: op.get("whole") != nil && op.get("whole").ToBoolean()}
	kind := ""
	if t := op.get("type"); t != nil {
		kind = t.String()
	}
	switch kind {
	case "fixed":
		s.kind, s.stake = "fixed", h.num(op, "stake", 1)
		if !(s.stake >= 0) || math.IsInf(s.stake, 0) {
			h.throw("setSizer: stake must be a number of 0 or more")
		}
	case "percent", "allin":
		s.kind, s.percents = "percent", h.num(op, "percents", 20)
		if kind == "allin" {
			s.percents = 100
		}
		if !(s.percents > 0 && s.percents <= 100) {
			h.throw("setSizer: percents must be more than 0 and at most 100")
		}
	default:
		h.throw("setSizer: unknown type %q (use 'fixed', 'percent' or 'allin', or pass a function)", kind)
	}
	h.sizer = s
}

// sizing is the size the sizer gives a buy or a sell of feed without a size. The percent
// sizer, as backtrader's PercentSizer, gives the position's size when there is one.
func (h *host) sizing(feed int, isBuy bool) float64 {
	s := h.sizer
	var size float64
	switch s.kind {
	case "":
		return 1
	case "fixed":
		size = s.stake
	case "percent":
		if p := h.eng.Position(feed).Size; p != 0 {
			size = p
		} else {
			size = h.eng.Cash() / h.closeOf(feed) * (s.percents / 100)
		}
	case "func":
		ctx := h.rt.NewObject()
		pos := h.eng.Position(feed)
		p := h.rt.NewObject()
		_ = p.Set("size", pos.Size)
		_ = p.Set("price", pos.Price)
		_ = ctx.Set("cash", h.eng.Cash())
		_ = ctx.Set("data", h.datas[feed])
		_ = ctx.Set("isBuy", isBuy)
		_ = ctx.Set("position", p)
		v, err := s.fn(goja.Undefined(), ctx)
		if err != nil {
			panic(err) // the strategy's own exception, reported as its error
		}
		size = v.ToFloat()
		if math.IsNaN(size) || math.IsInf(size, 0) {
			h.throw("the sizer returned %s, not a number of units", v.String())
		}
	}
	if s.whole {
		size = math.Trunc(size)
	}
	return math.Abs(size)
}

// closeOf is feed's current close.
func (h *host) closeOf(feed int) float64 {
	c := *h.eng.Cursor(feed)
	if c < 0 {
		return math.NaN()
	}
	return h.eng.Feeds()[feed].Bars[c].Close
}
