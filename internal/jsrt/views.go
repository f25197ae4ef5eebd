package jsrt

import (
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

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

	setSessionEnd goja.Value
	compensate    goja.Value
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
		if f.Replay != nil {
			d.h.replayLine(l, f.Replay)
		}
		d.lines[c] = l
		d.objs[c] = d.h.lineObject(l)
	}
	return d.lines[c]
}

// values is column c of feed f (open, high, low, close, volume, time).
func (d *dataView) values(f *engine.Feed, c int) []float64 {
	v := make([]float64, len(f.Bars))
	dates := c == 5 && datesOnly(f)
	bars := f.Bars
	if f.Replay != nil { // the coarser bar as it stands at each bar
		bars = f.Replay.Bars
	}
	for i := range bars {
		b := &bars[i]
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
		if r := d.h.eng.Feeds()[d.feed].Replay; r != nil {
			return d.h.rt.ToValue(replayLen(r, *d.h.eng.Cursor(d.feed)))
		}
		return d.h.rt.ToValue(*d.h.eng.Cursor(d.feed) + 1)
	case "date":
		return d.date
	case "setSessionEnd":
		return d.setSessionEnd
	case "compensate":
		return d.compensate
	case "contract":
		return d.h.contract(d.feed)
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
	return key == "symbol" || key == "length" || key == "date" || key == "setSessionEnd" || key == "compensate" || key == "contract"
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
	d.setSessionEnd = named(rt, "setSessionEnd", func(v goja.Value) {
		t, err := time.Parse("15:04:05", v.String())
		if err != nil {
			if t, err = time.Parse("15:04", v.String()); err != nil {
				h.throw("setSessionEnd: %q is not a time of day (HH:MM or HH:MM:SS)", v.String())
			}
		}
		end := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second
		if err := h.eng.SetSessionEnd(k, end); err != nil {
			h.throw("setSessionEnd: %s", err.Error())
		}
	})
	// backtrader's data.compensate(other): this feed's fills move other's position.
	d.compensate = named(rt, "compensate", func(v goja.Value) {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			h.throw("compensate expects one of this.datas or its index")
		}
		if err := h.eng.Compensate(k, h.feedOf(v)); err != nil {
			h.throw("%s", err.Error())
		}
	})
	d.date = named(rt, "date", func(ago int) string {
		i := *cur + ago
		if f.Replay != nil && ago < 0 && *cur >= 0 {
			i = replayAgo(f.Replay, *cur, ago)
		}
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
	methods *lazyFuncs // made on first use, as ind's
}

func (b *brokerView) Get(key string) goja.Value {
	switch key {
	case "cash":
		return b.h.rt.ToValue(b.h.eng.Cash())
	case "value":
		return b.h.rt.ToValue(b.h.eng.Value())
	}
	return b.methods.Get(key) // nil when not ours: looked up on the prototype (toString, valueOf, …)
}
func (b *brokerView) Set(string, goja.Value) bool { return false }
func (b *brokerView) Has(key string) bool {
	return b.methods.Has(key) || key == "cash" || key == "value"
}
func (b *brokerView) Delete(string) bool { return false }
func (b *brokerView) Keys() []string     { return []string{"cash", "value"} }

func (h *host) brokerObject() *goja.Object {
	b := &brokerView{h: h, methods: newLazyFuncs(h.rt, 12)}
	_ = b.methods.Set("getCash", func() float64 { return h.eng.Cash() })
	_ = b.methods.Set("getValue", func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) > 0 && !goja.IsUndefined(call.Argument(0)) {
			return h.rt.ToValue(h.eng.FeedValue(h.feedOf(call.Argument(0))))
		}
		return h.rt.ToValue(h.eng.Value())
	})
	slippage := func(name string, perc bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
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
		}
	}
	_ = b.methods.Set("setCommission", func(call goja.FunctionCall) goja.Value {
		op := h.readOpts(call.Argument(0))
		if op.o == nil {
			h.throw("setCommission expects {commission, commtype, minimum, margin, mult}")
		}
		c := engine.CommInfo{Commission: h.num(op, "commission", 0), Minimum: h.num(op, "minimum", 0),
			Margin: h.num(op, "margin", 0), Mult: h.num(op, "mult", 1), Leverage: h.num(op, "leverage", 1),
			Interest: h.num(op, "interest", 0)}
		if il := op.get("interestLong"); il != nil {
			c.InterestLong = il.ToBoolean()
		}
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
	flag := func(name string, set func(bool)) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			on := true
			if a := call.Argument(0); !goja.IsUndefined(a) {
				on = a.ToBoolean()
			}
			set(on)
			return goja.Undefined()
		}
	}
	_ = b.methods.Set("setCoc", flag("setCoc", h.eng.SetCheatOnClose))
	_ = b.methods.Set("setEosBar", flag("setEosBar", h.eng.SetEndOfSessionBar))
	_ = b.methods.Set("setInt2Pnl", flag("setInt2Pnl", h.eng.SetInt2Pnl))
	_ = b.methods.Set("setFiller", func(call goja.FunctionCall) goja.Value {
		var f engine.Filler
		if a := call.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			op := h.readOpts(a)
			if op.o == nil {
				h.throw("setFiller expects {type: 'fixedsize' | 'fixedbarperc' | 'barpointperc', size, perc, minmov} or null")
			}
			if t := op.get("type"); t != nil {
				f.Kind = strings.ToLower(t.String())
			}
			if f.Kind == "" {
				h.throw("setFiller: type is required ('fixedsize', 'fixedbarperc' or 'barpointperc')")
			}
			f.Size, f.Perc, f.MinMov = h.num(op, "size", 0), h.num(op, "perc", 100), h.num(op, "minmov", 0)
		}
		if err := h.eng.SetFiller(f); err != nil {
			h.throw("setFiller: %s", err.Error())
		}
		return goja.Undefined()
	})
	_ = b.methods.Set("addOrderHistory", h.addOrderHistoryMethod())
	_ = b.methods.Set("setSlippagePerc", slippage("setSlippagePerc", true))
	_ = b.methods.Set("setSlippageFixed", slippage("setSlippageFixed", false))
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
