package jsrt

import (
	"context"
	"fmt"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// A run of several strategies (backtrader's cerebro.addstrategy called more than once):
// the file declares, at its top level, an array named strategies whose entries are
// Strategy classes or {strategy: Class, params: {...}} objects. They run in that order on
// one broker: the cash and the position of each feed are shared, each strategy has its
// own orders, notifications, trades, sizer, timers and warm-up.

// spec is one strategy to instantiate: its class, the params object it gets, its name.
type spec struct {
	cls    *goja.Object
	params *goja.Object
	name   string
}

// strategiesProbe reads the file's top-level strategies binding, if it has one.
var strategiesProbe = goja.MustCompile("strategies-probe", "typeof strategies === 'undefined' ? undefined : strategies", false)

// strategySpecs is the list of strategies to run: the file's strategies array when it has
// one, else its strategy class alone. The run's params (validated against the file's
// strategy class, main) go to every entry of that class; an entry's own params win.
func (h *host) strategySpecs(main *goja.Object, info *StrategyInfo, params map[string]any) ([]spec, error) {
	mainParams := h.paramsObject(main, info, params)
	v, err := h.rt.RunProgram(strategiesProbe)
	if err != nil || v == nil || goja.IsUndefined(v) {
		return []spec{{cls: main, params: mainParams, name: info.ClassName}}, nil
	}
	arr, ok := v.(*goja.Object)
	if !ok || arr.ClassName() != "Array" {
		return nil, fmt.Errorf("strategies must be an array of Strategy classes or {strategy, params} objects, got %s", v.String())
	}
	n := int(arr.Get("length").ToInteger())
	if n == 0 {
		return nil, fmt.Errorf("strategies is empty: list the Strategy classes to run")
	}
	const most = 64
	if n > most {
		return nil, fmt.Errorf("strategies lists %d entries; a run takes at most %d", n, most)
	}
	out := make([]spec, 0, n)
	for i := range n {
		e, _ := arr.Get(fmt.Sprint(i)).(*goja.Object)
		if e == nil {
			return nil, fmt.Errorf("strategies[%d] must be a Strategy class or {strategy, params}", i)
		}
		cls, own := e, (*goja.Object)(nil)
		if _, isFn := goja.AssertFunction(e); !isFn {
			cls, _ = e.Get("strategy").(*goja.Object)
			if cls == nil {
				return nil, fmt.Errorf("strategies[%d] must be a Strategy class or {strategy, params}: its strategy is missing", i)
			}
			if pv := e.Get("params"); pv != nil && !goja.IsUndefined(pv) && !goja.IsNull(pv) {
				if own, ok = pv.(*goja.Object); !ok {
					return nil, fmt.Errorf("strategies[%d].params must be an object", i)
				}
			}
		}
		if _, isFn := goja.AssertFunction(cls); !isFn || cls == h.base || !isSubclass(h.rt, cls, h.base) {
			return nil, fmt.Errorf("strategies[%d] is not a Strategy subclass", i)
		}
		if cls != main && hasStatic(cls, "resample") {
			return nil, fmt.Errorf("strategies[%d]: declare static resample on %s, the file's first strategy class: the feeds are the run's", i, info.ClassName)
		}
		name := cls.Get("name").String()
		p := h.rt.NewObject()
		var known *goja.Object
		if cls == main {
			known = mainParams
		} else if po, ok := cls.Get("params").(*goja.Object); ok {
			known = po
		}
		if known != nil {
			for _, k := range known.Keys() {
				_ = p.Set(k, known.Get(k))
			}
		}
		if own != nil {
			for _, k := range own.Keys() {
				if known == nil || known.Get(k) == nil {
					return nil, fmt.Errorf("strategies[%d] (%s): Unknown parameter: %s", i, name, k)
				}
				_ = p.Set(k, own.Get(k))
			}
		}
		out = append(out, spec{cls: cls, params: p, name: name})
	}
	return out, nil
}

func hasStatic(cls *goja.Object, name string) bool {
	v := cls.Get(name)
	return v != nil && !goja.IsUndefined(v) && !goja.IsNull(v)
}

// staticList reads the class's static name as a list of declarations, each an object:
// one object or an array of them (nil when the class has none). shape names the object
// in the error, e.g. "an object {timeframe, data, compression}".
func staticList(cls *goja.Object, name, shape string) ([]any, error) {
	if !hasStatic(cls, name) {
		return nil, nil
	}
	switch x := cls.Get(name).Export().(type) {
	case []any:
		return x, nil
	case map[string]any:
		return []any{x}, nil
	}
	return nil, fmt.Errorf("static %s must be %s or an array of them", name, shape)
}

// paramsObject is the strategy class's params object for a run: its declared defaults,
// overridden by the run's validated params.
func (h *host) paramsObject(cls *goja.Object, info *StrategyInfo, params map[string]any) *goja.Object {
	p := h.rt.NewObject()
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
	return p
}

// switchTo makes strategy i's state the host's; a run of one strategy never switches.
func (h *host) switchTo(i int) {
	if i == h.active {
		return
	}
	h.states[h.active] = h.strat
	h.strat = h.states[i]
	h.active = i
}

// driveAll sets up every strategy in order (each init() with its orders and warm-up its
// own) and runs them together.
func (h *host) driveAll(ctx context.Context, eng *engine.Engine) (*engine.Result, error) {
	members := make([]engine.Strategy, len(h.states))
	coo := false
	for i := range h.states {
		h.switchTo(i)
		eng.SetOwner(i)
		if err := h.setUp(); err != nil {
			return nil, err
		}
		coo = coo || h.nextOpen != nil
		members[i] = &member{h: h, i: i}
	}
	eng.SetCheatOnOpen(coo)
	res, err := eng.RunAll(ctx, members)
	if err != nil {
		return nil, err
	}
	for i := range res.Strategies {
		res.Strategies[i].Name = h.names[i]
	}
	engine.LabelStrategies(res.Strategies)
	return res, nil
}

// member is strategy i of a run of several, as the engine calls it: each call swaps its
// state in first.
type member struct {
	h *host
	i int
}

func (m *member) Next(e *engine.Engine) error    { m.h.switchTo(m.i); return m.h.Next(e) }
func (m *member) Prenext(e *engine.Engine) error { m.h.switchTo(m.i); return m.h.Prenext(e) }
func (m *member) Stop(e *engine.Engine) error    { m.h.switchTo(m.i); return m.h.Stop(e) }
func (m *member) NotifyOrder(e *engine.Engine, o *engine.Order) error {
	m.h.switchTo(m.i)
	return m.h.NotifyOrder(e, o)
}
func (m *member) NotifyTrade(e *engine.Engine, t *engine.TradeState) error {
	m.h.switchTo(m.i)
	return m.h.NotifyTrade(e, t)
}
func (m *member) Notified() (orders, trades bool) { m.h.switchTo(m.i); return m.h.Notified() }
func (m *member) NextOpen(e *engine.Engine) error { m.h.switchTo(m.i); return m.h.NextOpen(e) }
func (m *member) Timers(e *engine.Engine, cheat bool) error {
	m.h.switchTo(m.i)
	return m.h.Timers(e, cheat)
}
