package jsrt

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// Signals, as backtrader's SignalStrategy with cerebro.add_signal: lines whose sign says
// long (> 0) or short (< 0), declared in a static signals list or added with
// this.signalAdd(type, line) in init(), which trade by themselves. Before next() on every
// bar after the warm-up the host runs backtrader's _next_signal: market orders of the
// sizer's size to the target feed, a close before a reversal, no new entry while one is
// pending (unless concurrent) nor while in the market (unless accumulate).

// sigKind is a signal's type, numbered as backtrader's SIGNAL_* less SIGNAL_NONE.
type sigKind int

const (
	sigLongShort sigKind = iota
	sigLong
	sigLongInv
	sigLongAny
	sigShort
	sigShortInv
	sigShortAny
	sigLongExit
	sigLongExitInv
	sigLongExitAny
	sigShortExit
	sigShortExitInv
	sigShortExitAny
	sigKinds
)

// sigNames are the types' names (backtrader's constants without SIGNAL_, in lower case).
var sigNames = [sigKinds]string{
	"longshort", "long", "long_inv", "long_any", "short", "short_inv", "short_any",
	"longexit", "longexit_inv", "longexit_any", "shortexit", "shortexit_inv", "shortexit_any",
}

// signals is a strategy's signals and their state.
type signals struct {
	lines      [sigKinds][]*line
	accumulate bool // enter again while in the market (backtrader's _accumulate)
	concurrent bool // enter while an entry is pending (backtrader's _concurrent)
	feed       int  // the feed orders go to (backtrader's _data)
	sentinel   *engine.Order
	options    bool // static signalOptions was given
}

// parseSigKind reads a signal type: a name of sigNames in any case, with or without
// backtrader's SIGNAL_ prefix.
func parseSigKind(v goja.Value) (sigKind, error) {
	s := ""
	if v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		s = v.String()
	}
	name := strings.TrimPrefix(strings.ToLower(s), "signal_")
	if k := slices.Index(sigNames[:], name); k >= 0 {
		return sigKind(k), nil
	}
	return 0, fmt.Errorf("unknown signal type %q (use %s)", s, strings.Join(sigNames[:], ", "))
}

// signalsOf is the strategy's signals, made on first use.
func (h *host) signalsOf() *signals {
	if h.sig == nil {
		h.sig = &signals{}
	}
	return h.sig
}

// signalAdd is this.signalAdd(type, line): backtrader's SignalStrategy.signal_add.
func (h *host) signalAdd(typ, v goja.Value) {
	if h.inited {
		h.throw("signalAdd must be called in init()")
	}
	k, err := parseSigKind(typ)
	if err != nil {
		h.throw("signalAdd: %s", err.Error())
	}
	s := h.signalsOf()
	s.lines[k] = append(s.lines[k], h.signalLine(v, "signalAdd"))
}

// signalLine resolves a signal: a line, an indicator (its first line) or a feed (its close).
func (h *host) signalLine(v goja.Value, what string) *line {
	if o, ok := v.(*goja.Object); !ok || o == nil {
		h.throw("%s: the signal must be a line or an indicator, got %s", what, describe(v))
	}
	return h.indArg(v, -1, what)
}

func describe(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if goja.IsNull(v) {
		return "null"
	}
	return v.String()
}

// setUpSignals reads the class's static signals and signalOptions, after init() as
// backtrader makes a SignalStrategy's signals after its __init__: each entry of signals is
// {type, line}, line a function called with the strategy (also as this) that returns the
// signal line.
func (h *host) setUpSignals() error {
	cls, _ := h.inst.Get("constructor").(*goja.Object)
	if cls == nil {
		return nil
	}
	if hasStatic(cls, "signals") {
		list, ok := cls.Get("signals").(*goja.Object)
		if !ok {
			return fmt.Errorf("static signals must be an array of {type, line} objects")
		}
		entries := []goja.Value{list}
		if list.ClassName() == "Array" {
			entries = entries[:0]
			for i := range int(list.Get("length").ToInteger()) {
				entries = append(entries, list.Get(fmt.Sprint(i)))
			}
		}
		for i, e := range entries {
			if err := h.staticSignal(i, e); err != nil {
				return err
			}
		}
	}
	if hasStatic(cls, "signalOptions") {
		if err := h.signalOptions(cls.Get("signalOptions")); err != nil {
			return err
		}
	}
	if s := h.sig; s != nil && s.options && !slices.ContainsFunc(s.lines[:], func(ls []*line) bool { return len(ls) > 0 }) {
		return fmt.Errorf("static signalOptions without signals: declare static signals or call this.signalAdd(type, line) in init()")
	}
	return nil
}

func (h *host) staticSignal(i int, e goja.Value) error {
	o, ok := e.(*goja.Object)
	if !ok || o.ClassName() != "Object" {
		return fmt.Errorf("signals[%d] must be an object {type, line}, got %s", i, describe(e))
	}
	for _, key := range o.Keys() {
		if key != "type" && key != "line" {
			return fmt.Errorf("signals[%d]: unknown key %q (an entry is {type, line})", i, key)
		}
	}
	k, err := parseSigKind(o.Get("type"))
	if err != nil {
		return fmt.Errorf("signals[%d]: %w", i, err)
	}
	fn, ok := goja.AssertFunction(o.Get("line"))
	if !ok {
		return fmt.Errorf("signals[%d].line must be a function of the strategy returning the signal line, e.g. (s) => s.data.close.sub(ind.SMA(s.data.close, 30))", i)
	}
	v, err := fn(h.inst, h.inst)
	if err != nil {
		return err
	}
	s := h.signalsOf()
	s.lines[k] = append(s.lines[k], h.signalLine(v, fmt.Sprintf("signals[%d].line", i)))
	return nil
}

// signalOptions reads static signalOptions {accumulate, concurrent, data}.
func (h *host) signalOptions(v goja.Value) error {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Object" {
		return fmt.Errorf("static signalOptions must be an object {accumulate, concurrent, data}")
	}
	s := h.signalsOf()
	s.options = true
	for _, key := range o.Keys() {
		x := o.Get(key)
		switch key {
		case "accumulate", "concurrent":
			b, ok := x.Export().(bool)
			if !ok {
				return fmt.Errorf("signalOptions.%s must be true or false, got %s", key, describe(x))
			}
			if key == "accumulate" {
				s.accumulate = b
			} else {
				s.concurrent = b
			}
		case "data":
			feed, err := h.signalFeed(x)
			if err != nil {
				return err
			}
			s.feed = feed
		default:
			return fmt.Errorf("signalOptions: unknown key %q (use accumulate, concurrent, data)", key)
		}
	}
	return nil
}

// signalFeed reads signalOptions.data: the index of a feed the run was given, or its symbol.
func (h *host) signalFeed(x goja.Value) (int, error) {
	feeds := h.eng.Feeds()[:h.given]
	switch d := x.Export().(type) {
	case int64:
		if d >= 0 && d < int64(len(feeds)) {
			return int(d), nil
		}
	case string:
		for k, f := range feeds {
			if f.Symbol == d {
				return k, nil
			}
		}
		return 0, fmt.Errorf("signalOptions.data: no feed has the symbol %q", d)
	}
	return 0, fmt.Errorf("signalOptions.data must be the index of one of the run's %d feeds or a symbol, got %s", len(feeds), describe(x))
}

// now is the line's value at the current bar (NaN before its first).
func (l *line) now() float64 {
	i := *l.cur
	if i < 0 || i >= len(l.vals) {
		return math.NaN()
	}
	return l.vals[i]
}

// all is backtrader's all(test(x[0]) for x in signals or [[0.0]]): with no signal of the
// kind, the test of 0.0 (false for each of the three tests).
func (s *signals) all(k sigKind, test func(float64) bool) bool {
	ls := s.lines[k]
	if len(ls) == 0 {
		return test(0)
	}
	for _, l := range ls {
		if !test(l.now()) {
			return false
		}
	}
	return true
}

func positive(x float64) bool { return x > 0 }
func negative(x float64) bool { return x < 0 }
func nonzero(x float64) bool  { return x != 0 } // Python's truth: NaN is true

// signalStep is backtrader's SignalStrategy._next_signal, run before next().
func (h *host) signalStep() {
	s := h.sig
	// backtrader forgets the pending entry when its last notification says it is done,
	// which the host delivers before next(): it is done when it is no longer alive
	if s.sentinel != nil && !s.sentinel.Status.Alive() {
		s.sentinel = nil
	}
	if s.sentinel != nil && !s.concurrent {
		return
	}
	lsLong := s.all(sigLongShort, positive)
	lsShort := s.all(sigLongShort, negative)
	lEnter := s.all(sigLong, positive) || s.all(sigLongInv, negative) || s.all(sigLongAny, nonzero)
	sEnter := s.all(sigShort, negative) || s.all(sigShortInv, positive) || s.all(sigShortAny, nonzero)
	lExit := s.all(sigLongExit, negative) || s.all(sigLongExitInv, positive) || s.all(sigLongExitAny, nonzero)
	sExit := s.all(sigShortExit, positive) || s.all(sigShortExitInv, negative) || s.all(sigShortExitAny, nonzero)
	// only a plain LONGEXIT (SHORTEXIT) disables the reversal and the leaving on the
	// opposite indication, as in backtrader (its _longexit and _shortexit)
	hasLongExit, hasShortExit := len(s.lines[sigLongExit]) > 0, len(s.lines[sigShortExit]) > 0
	lRev := !hasLongExit && sEnter
	sRev := !hasShortExit && lEnter
	lLeave := !hasLongExit && (s.all(sigLong, negative) || s.all(sigLongInv, positive) || s.all(sigLongAny, nonzero))
	sLeave := !hasShortExit && (s.all(sigShort, positive) || s.all(sigShortInv, negative) || s.all(sigShortAny, nonzero))

	switch size := h.eng.Position(s.feed).Size; {
	case size == 0:
		if lsLong || lEnter {
			s.sentinel = h.signalOrder(engine.Buy)
		} else if lsShort || sEnter {
			s.sentinel = h.signalOrder(engine.Sell)
		}
	case size > 0:
		if lsShort || lExit || lRev || lLeave {
			h.signalClose(size) // not an entry: not the pending order
		}
		if lsShort || lRev {
			s.sentinel = h.signalOrder(engine.Sell)
		}
		if (lsLong || lEnter) && s.accumulate {
			s.sentinel = h.signalOrder(engine.Buy)
		}
	default:
		if lsLong || sExit || sRev || sLeave {
			h.signalClose(size)
		}
		if lsLong || sRev {
			s.sentinel = h.signalOrder(engine.Buy)
		}
		if (lsShort || sEnter) && s.accumulate {
			s.sentinel = h.signalOrder(engine.Sell)
		}
	}
}

// signalOrder is buy() or sell() of the target feed at market, sized by the sizer; nil
// when the sizer gives 0 (backtrader then places nothing and returns None).
func (h *host) signalOrder(side engine.Side) *engine.Order {
	feed := h.sig.feed
	return h.place(engine.OrderRequest{Side: side, Feed: feed, Size: h.sizing(feed, side == engine.Buy)})
}

// signalClose is close() of the target feed's position of size.
func (h *host) signalClose(size float64) {
	side := engine.Sell
	if size < 0 {
		side = engine.Buy
	}
	h.place(engine.OrderRequest{Side: side, Feed: h.sig.feed, Size: math.Abs(size)})
}
