package jsrt

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// tracer records a run for the look-ahead check (RunConfig.Trace).
type tracer struct {
	t     *bias.Trace
	watch map[int64]bool
	lines []*line // parallel to t.Lines
	// arrays watches the arrays ind.Compute hands its function (futureread.go).
	arrays watching
}

// traceLine records a line the strategy made.
func (h *host) traceLine(l *line) {
	tr := h.tracer
	if tr == nil {
		return
	}
	call, at := "", 0
	for _, f := range h.rt.CaptureCallStack(8, nil) {
		if call == "" && f.SrcName() == "<native>" {
			call = "ind." + f.FuncName()
			if l2 := strings.ToLower(f.FuncName()); f.FuncName() == l2 { // a.sub(b) and the like
				call = "line." + f.FuncName()
			}
		}
		if at == 0 && f.SrcName() == scriptName {
			at = f.Position().Line
		}
	}
	if call == "" || call == "ind." || call == "line." {
		call = "line"
	}
	tr.lines = append(tr.lines, l)
	tr.t.Lines = append(tr.t.Lines, bias.Line{Call: call, At: at, Feed: l.feed, Vals: l.vals})
}

// decided records a decision of the strategy at the current step.
func (h *host) decided(format string, args ...any) {
	if h.tracer == nil {
		return
	}
	h.tracer.t.Decisions = append(h.tracer.t.Decisions, bias.Decision{Time: h.eng.Now().UnixNano(), Text: fmt.Sprintf(format, args...)})
}

func (h *host) decidedOrder(o *engine.Order) {
	if h.tracer == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "order %d: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), h.eng.Feeds()[o.Feed].Symbol)
	for _, x := range []struct {
		name string
		v    float64
	}{{"price", o.Price}, {"plimit", o.PLimit}, {"trailamount", o.TrailAmount}, {"trailpercent", o.TrailPercent}} {
		if x.v != 0 {
			fmt.Fprintf(&b, " %s %g", x.name, x.v)
		}
	}
	if !o.ValidUntil.IsZero() {
		fmt.Fprintf(&b, " valid %s", fmtTime(o.ValidUntil))
	}
	if o.TradeID != 0 {
		fmt.Fprintf(&b, " tradeid %d", o.TradeID)
	}
	h.decided("%s", b.String())
}

// afterStep records the strategy's state after a step the check watches.
func (h *host) afterStep() {
	tr := h.tracer
	if tr == nil || len(tr.watch) == 0 {
		return
	}
	now := h.eng.Now().UnixNano()
	if !tr.watch[now] {
		return
	}
	props := map[string]string{}
	// With several strategies, each one's state at the step is named by its index and
	// class (0:MultiCross.held) and joins the others' in one state of the step.
	prefix := ""
	if h.states != nil {
		prefix = fmt.Sprintf("%d:%s.", h.active, h.names[h.active])
	}
	for _, k := range h.inst.Keys() {
		v := h.inst.Get(k)
		if v == nil {
			continue
		}
		switch x := v.Export().(type) {
		case nil:
			props[prefix+k] = v.String()
		case bool, string, int64, float64:
			props[prefix+k] = fmt.Sprint(x)
		}
	}
	if n := len(tr.t.States); prefix != "" && n > 0 && tr.t.States[n-1].Time == now {
		maps.Copy(tr.t.States[n-1].Props, props)
		return
	}
	tr.t.States = append(tr.t.States, bias.State{Time: now, Props: props})
}

// nameLines names the traced lines the strategy holds in its own properties: this.x, or
// this.x.y for a line of a multi-line indicator.
func (h *host) nameLines() {
	tr := h.tracer
	if tr == nil {
		return
	}
	at := make(map[*line]int, len(tr.lines))
	for k, l := range tr.lines {
		at[l] = k
	}
	name := func(v goja.Value, n string) bool {
		o, ok := v.(*goja.Object)
		if !ok {
			return false
		}
		if l, ok := o.Export().(*line); ok {
			if k, ok := at[l]; ok && tr.t.Lines[k].Name == "" {
				tr.t.Lines[k].Name = n
			}
			return true
		}
		return false
	}
	for _, k := range h.inst.Keys() {
		v := h.inst.Get(k)
		if name(v, "this."+k) {
			continue
		}
		if o, ok := v.(*goja.Object); ok && o.ClassName() == "Object" && o != h.inst {
			for _, sub := range o.Keys() {
				name(o.Get(sub), "this."+k+"."+sub)
			}
		}
	}
}

// finishTrace names the lines and records when each feed's bars were delivered.
func (h *host) finishTrace() {
	tr := h.tracer
	if tr == nil || h.eng == nil {
		return
	}
	h.nameLines()
	feeds := h.eng.Feeds()
	tr.t.Times = make([][]int64, len(feeds))
	for k, f := range feeds {
		ts := make([]int64, len(f.Bars))
		for i, b := range f.Bars {
			ts[i] = b.Time.UnixNano()
		}
		tr.t.Times[k] = ts
	}
}

// seeded makes Math.random draw the same numbers in every traced run.
func seeded(rt *goja.Runtime) {
	r := rand.New(rand.NewPCG(0x6c6f6f6b, 0x61686561))
	rt.SetRandSource(r.Float64)
}

// Lookahead checks cfg's strategy for look-ahead (see internal/bias): it runs it on
// cfg.Feeds whole, cut and started later, in this process, and compares the runs. A failure
// of the full run is returned as Run returns it.
func Lookahead(ctx context.Context, cfg RunConfig) (*bias.Report, error) {
	if cfg.Compiled == nil {
		cfg.Compiled = Compile(cfg.Code)
	}
	cfg.OnLog = func(engine.LogEntry) {}
	cfg.OnProgress = nil
	cfg.Memo = nil
	cfg.TradeFrom = time.Time{} // a cut may end before it: the check compares every bar
	run := func(ctx context.Context, feeds []engine.Feed, watch map[int64]bool) (*bias.Trace, error) {
		c := cfg
		c.Feeds = feeds
		c.Trace = &bias.Trace{}
		c.Watch = watch
		if _, err := Run(ctx, c); err != nil {
			return nil, err
		}
		return c.Trace, nil
	}
	return bias.Check(ctx, cfg.Feeds, run)
}
