package jsrt

import (
	"math"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// opts reads an options argument: an object, a number (the size) or
// nothing.
type opts struct {
	o    *goja.Object
	num  float64
	isNo bool
	over *goja.Object // read before o: a bracket leg's own arguments (oargs, stopargs, limitargs)
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
	if op.over != nil {
		if v := op.over.Get(name); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
			return v
		}
	}
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
		r.Parent = h.orderRef(op.get("parent"))
		if t := op.get("transmit"); t != nil {
			r.Hold = !t.ToBoolean()
		}
		if c := op.get("coc"); c != nil {
			r.NoCOC = !c.ToBoolean()
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
	o := h.place(r)
	if o == nil {
		return goja.Null()
	}
	return h.orderObject(o)
}

// place submits r (a negative size flips its side); nil when its size is 0.
func (h *host) place(r engine.OrderRequest) *engine.Order {
	if r.Size < 0 {
		r.Side, r.Size = -r.Side, -r.Size
	}
	if r.Size == 0 {
		return nil
	}
	o, err := h.eng.Submit(r)
	if err != nil {
		h.throw("%s", err.Error())
	}
	h.decidedOrder(o)
	return o
}

func (h *host) hostObject() *goja.Object {
	rt := h.rt
	o := newLazyFuncs(rt, 12) // made on first use, as ind's
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
	_ = o.Set("signalAdd", func(_ goja.Value, typ, v goja.Value) { h.signalAdd(typ, v) })
	_ = o.Set("addTimer", func(v goja.Value) goja.Value { return h.addTimer(v) })
	_ = o.Set("cancel", func(v goja.Value) bool {
		o := h.orderRef(v)
		ok := h.eng.Cancel(o)
		if ok {
			h.decided("cancel order %d", o.Ref)
		}
		return ok
	})
	_ = o.Set("bracket", func(_ goja.Value, side string, v goja.Value) goja.Value {
		s := engine.Buy
		if side == "sell" {
			s = engine.Sell
		}
		op := h.readOpts(v)
		leg := func(name string) *goja.Object {
			x := op.get(name)
			if x == nil {
				return nil
			}
			lo, ok := x.(*goja.Object)
			if !ok {
				h.throw("%s must be an object of order options", name)
			}
			return lo
		}
		entry := op
		entry.over = leg("oargs")
		r := h.sized(s, entry)
		if entry.get("exectype") == nil {
			// backtrader's buy_bracket/sell_bracket: the entry is a Limit order, at the
			// signal bar's close unless a price is given.
			r.Type = engine.Limit
		}
		// Each exit as backtrader builds it: the bracket's data, validity and tradeid, its
		// price and exectype (stopexec / limitexec, null for none), then its own arguments.
		var kids []engine.OrderRequest
		for _, k := range []struct{ price, exec, args, def string }{
			{"stopprice", "stopexec", "stopargs", "Stop"}, {"limitprice", "limitexec", "limitargs", "Limit"},
		} {
			if x := op.o; x != nil {
				if ev := x.Get(k.exec); ev != nil && goja.IsNull(ev) {
					continue
				}
			}
			base := rt.NewObject()
			for _, name := range []string{"data", "valid", "tradeid"} {
				if x := op.get(name); x != nil {
					_ = base.Set(name, x)
				}
			}
			_ = base.Set("price", h.num(op, k.price, 0))
			et := k.def
			if x := op.get(k.exec); x != nil {
				et = x.String()
			}
			_ = base.Set("exectype", et)
			kop := opts{o: base, over: leg(k.args)}
			if kop.over == nil && !(h.num(kop, "price", 0) > 0) && !engine.ExecTypeIsTrailing(et) {
				continue // no price for this exit: left out
			}
			kids = append(kids, h.request(-s, kop))
		}
		orders, err := h.eng.BracketOf(r, kids)
		if err != nil {
			h.throw("%s", err.Error())
		}
		out := make([]any, len(orders))
		for i, x := range orders {
			h.decidedOrder(x)
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
	return rt.NewDynamicObject(lazyInd{o})
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
