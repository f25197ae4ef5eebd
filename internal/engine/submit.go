package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"
)

// Submit creates an order. It is checked against cash at the next bar.
func (e *Engine) Submit(r OrderRequest) (*Order, error) {
	if r.Feed < 0 || r.Feed >= len(e.feeds) {
		return nil, fmt.Errorf("unknown data feed %d", r.Feed)
	}
	c := e.cursor[r.Feed]
	if c < 0 {
		return nil, fmt.Errorf("data feed %d has no bar yet", r.Feed)
	}
	if !(r.Size > 0) || math.IsInf(r.Size, 0) {
		return nil, fmt.Errorf("order size must be a positive number, got %v", r.Size)
	}
	bar := e.feeds[r.Feed].Bars[c]
	switch r.Type {
	case Historical:
		return nil, errors.New("historical orders come from an order history (AddOrderHistory), not from the strategy")
	case Limit, Stop:
		if r.Price == 0 { // not given: the creating bar's close, as in backtrader
			r.Price = bar.Close
		}
		if !(r.Price > 0) {
			return nil, fmt.Errorf("%s order needs a positive price", r.Type)
		}
	case StopLimit:
		if !(r.Price > 0) || !(r.PLimit > 0) {
			return nil, fmt.Errorf("StopLimit order needs a positive price (stop) and plimit")
		}
	case StopTrail, StopTrailLimit:
		if r.TrailAmount < 0 || r.TrailPercent < 0 || r.TrailPercent >= 1 || math.IsInf(r.TrailAmount, 0) || r.TrailAmount != r.TrailAmount || r.TrailPercent != r.TrailPercent {
			return nil, fmt.Errorf("%s order needs trailamount >= 0 or trailpercent from 0 to less than 1", r.Type)
		}
		if r.Type == StopTrailLimit && (!(r.Price > 0) || !(r.PLimit > 0)) {
			return nil, fmt.Errorf("StopTrailLimit order needs a positive price (the reference of the first stop) and plimit")
		}
		if r.Price == 0 {
			r.Price = bar.Close
		}
		if !(r.Price > 0) {
			return nil, fmt.Errorf("%s order needs a positive price", r.Type)
		}
	}
	e.nextRef++
	o := &Order{
		Ref: e.nextRef, Feed: r.Feed, Side: r.Side, Type: r.Type,
		Size: float64(r.Side) * r.Size, Price: r.Price, PLimit: r.PLimit,
		TrailAmount: r.TrailAmount, TrailPercent: r.TrailPercent, ValidUntil: r.ValidUntil, TradeID: r.TradeID,
		Status: Created, CreatedTime: bar.Time, CreatedBar: e.step, CreatedClose: bar.Close, Owner: e.owner,
		parent: r.Parent, inactive: r.Parent != nil, noCOC: r.NoCOC,
	}
	o.Remaining = o.Size
	o.CreatedPrice = r.Price
	if o.CreatedPrice == 0 {
		o.CreatedPrice = bar.Close
	}
	if o.Type == Close {
		o.dteos = e.sessionEndAfter(r.Feed, bar.Time)
	}
	if o.Type.trailing() {
		// The first stop: the reference price moved by the distance (backtrader starts
		// from an infinite stop and trails it once).
		ref := o.Price
		o.limitOffset = ref - o.PLimit
		o.Price = math.Inf(int(o.Side))
		o.trailAdjust(ref)
	}
	if r.OCO != nil {
		if r.OCO.ocoGroup == nil {
			g := []*Order{r.OCO}
			r.OCO.ocoGroup = &g
		}
		*r.OCO.ocoGroup = append(*r.OCO.ocoGroup, o)
		o.ocoGroup = r.OCO.ocoGroup
	}
	e.orders = append(e.orders, o)
	if r.Parent == nil && !r.Hold {
		e.transmit(o) // a lone order: no group to keep
		return o, nil
	}
	// backtrader's submit and _take_children: a child joins its parent's queue, unless the
	// parent's group has already ended (the child is then rejected); an order without Hold
	// sends every order of the queue still held.
	if r.Parent != nil {
		g := e.groupOf(r.Parent)
		if g == nil || g.gone {
			o.Status = Rejected
			e.event(o)
			e.notify(o)
			e.Log("WARNING", "engine", fmt.Sprintf("order %d rejected: its parent, order %d, was cancelled, expired or rejected, or a sibling filled", o.Ref, r.Parent.Ref))
			return o, nil
		}
		o.pc = g
	} else {
		o.pc = &orderGroup{}
	}
	o.pc.list = append(o.pc.list, o)
	if !r.Hold {
		for _, x := range o.pc.list {
			if x.Status == Created {
				e.transmit(x)
			}
		}
	}
	return o, nil
}

// groupOf is the parent/children queue parent heads, made for a lone order when a child
// first names it (holding it while it has not filled, as backtrader's queue does).
func (e *Engine) groupOf(parent *Order) *orderGroup {
	if parent.pc == nil && !parent.pcDone {
		parent.pc = &orderGroup{}
		if parent.Status != Completed {
			parent.pc.list = []*Order{parent}
		}
	}
	return parent.pc
}

// transmit sends o to the broker: it is checked against cash at the next bar.
func (e *Engine) transmit(o *Order) {
	o.Status = Submitted
	e.submitted = append(e.submitted, o)
	e.notify(o)
	if !e.cfg.QuietEngine {
		e.Log("INFO", "engine", fmt.Sprintf("order %d submitted: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
	}
}

// bracketize is backtrader's _bracketize for o, which filled completely (cancel false) or
// ended without filling: a parent's fill activates its children at the next bar; any other
// end, or a child's fill, cancels every pending order left in the group.
func (e *Engine) bracketize(o *Order, cancel bool) {
	g := o.pc
	if g == nil {
		if cancel {
			o.pcDone = true
		}
		return
	}
	if g.gone {
		return
	}
	if cancel || o.parent != nil {
		list := g.list
		g.list, g.gone = nil, true
		for _, x := range list {
			if x.Status == Accepted || x.Status == Partial {
				e.cancel(x)
			}
		}
		return
	}
	if len(g.list) > 0 && g.list[0] == o {
		g.list = g.list[1:]
	}
	e.activate = append(e.activate, g.list...)
}

// Bracket submits a parent order with a stop-loss and a take-profit child on the opposite
// side, of the parent's size, validity and tradeid (as backtrader's buy_bracket passes
// them on). The children become active on the bar after the parent fills; a fill of one
// child cancels the other. A price of 0 leaves that child out.
func (e *Engine) Bracket(parent OrderRequest, stopPrice, limitPrice float64) ([]*Order, error) {
	kids := []OrderRequest{}
	for _, k := range []struct {
		t     ExecType
		price float64
	}{{Stop, stopPrice}, {Limit, limitPrice}} {
		if k.price > 0 {
			kids = append(kids, OrderRequest{Feed: parent.Feed, Type: k.t, Price: k.price, ValidUntil: parent.ValidUntil, TradeID: parent.TradeID})
		}
	}
	return e.BracketOf(parent, kids)
}

// BracketOf submits parent held and then each child (its side and size are set to the
// opposite of the parent's), the last one sending the group.
func (e *Engine) BracketOf(parent OrderRequest, kids []OrderRequest) ([]*Order, error) {
	parent.Hold = len(kids) > 0
	p, err := e.Submit(parent)
	if err != nil {
		return nil, err
	}
	out := []*Order{p}
	for i, k := range kids {
		k.Side, k.Size, k.Parent, k.Hold = -parent.Side, parent.Size, p, i < len(kids)-1
		c, err := e.Submit(k)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Cancel cancels a live order. It reports whether anything was cancelled. An order
// submitted on this bar and not yet accepted by the broker cannot be cancelled: as in
// backtrader (whose broker only cancels pending orders), the cancel is ignored and the
// order stays live; a WARNING line in the log says so.
func (e *Engine) Cancel(o *Order) bool {
	if o == nil || !o.Status.Alive() || o.Status == Created {
		return false // a held order is not at the broker yet: backtrader ignores its cancel
	}
	if o.Status == Submitted {
		e.Log("WARNING", "engine", fmt.Sprintf("cancel of order %d ignored: it was submitted on this bar and is not yet accepted by the broker, so it stays live (as in backtrader); cancel it on a later bar", o.Ref))
		return false
	}
	e.cancel(o)
	e.bracketize(o, true)
	return true
}

// cancel cancels a pending order with its OCO group (backtrader's cancel with
// bracket=True: its parent/children group is the caller's business).
func (e *Engine) cancel(o *Order) {
	e.end(o, Canceled, "INFO", fmt.Sprintf("order %d cancelled: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
}

// end finishes a live order without a fill (cancelled, expired or rejected): it is
// recorded, notified and logged, and its OCO group goes with it.
func (e *Engine) end(o *Order, st Status, level, msg string) {
	o.Status = st
	e.event(o)
	e.notify(o)
	e.Log(level, "engine", msg)
	e.ocoCheck(o)
}

func (e *Engine) event(o *Order) {
	e.res.OrderEvents = append(e.res.OrderEvents, e.orderEvent(o))
}

func (e *Engine) orderEvent(o *Order) OrderEvent {
	return OrderEvent{
		Ref: o.Ref, Symbol: e.feeds[o.Feed].Symbol, Side: o.Side.String(), ExecType: o.Type.String(),
		Status: o.Status.String(), CreatedTime: o.CreatedTime, CreatedPrice: o.CreatedPrice,
		Price: cmp.Or(o.Price, o.CreatedPrice), Size: o.Size, Time: e.Now(), // a market or close order's: its creating close
		Strategy: o.Owner,
	}
}

func (e *Engine) notify(o *Order) {
	if e.quiet.orders || o.histQuiet {
		return
	}
	snap := *o
	e.notes = append(e.notes, note{order: &snap})
}

// ocoCheck cancels the other live members of o's group.
func (e *Engine) ocoCheck(o *Order) {
	if o.ocoGroup == nil {
		return
	}
	g := *o.ocoGroup
	for _, m := range g {
		m.ocoGroup = nil
	}
	for i := len(g) - 1; i >= 0; i-- {
		if m := g[i]; m != o && m.Status.Alive() {
			e.cancel(m)
		}
	}
}

// Orders returns all orders of the run in creation order.
func (e *Engine) Orders() []*Order { return e.orders }

// checkSubmitted accepts or rejects new orders with a trial execution at
// their reference prices, carrying cash and positions through the batch.
func (e *Engine) checkSubmitted() {
	if len(e.submitted) == 0 {
		return
	}
	cash := e.cash
	copy(e.scratch, e.pos)
	for _, o := range e.submitted {
		if o.Status != Submitted {
			continue
		}
		if o.parent != nil && o.pc.gone { // backtrader's _take_children: the parent is gone
			o.Status = Rejected
			e.event(o)
			e.notify(o)
			e.Log("WARNING", "engine", fmt.Sprintf("order %d rejected: its parent, order %d, ended before it was accepted", o.Ref, o.parent.Ref))
			continue
		}
		price := o.CreatedPrice
		if e.coo && o.Type == Market { // backtrader prices it at the open it will fill at
			price = e.feeds[o.Feed].Bars[e.cursor[o.Feed]].Open
		}
		opened, closed := e.scratch[o.Feed].update(o.Remaining, price)
		if closed != 0 {
			cash += e.ci.openCash(-closed, price)
			cash -= e.ci.commission(closed, price)
		}
		if opened != 0 {
			cash -= e.ci.openCash(opened, price)
			cash -= e.ci.commission(opened, price)
		}
		if cash >= 0 {
			o.Status = Accepted
			e.pending = append(e.pending, o)
			e.notify(o)
			continue
		}
		e.reject(o)
	}
	e.submitted = e.submitted[:0]
}

// expire ends an order past its validity, with its bracket children and OCO group.
func (e *Engine) expire(o *Order) {
	e.end(o, Expired, "INFO", fmt.Sprintf("order %d expired: %s %s %g %s (valid until %s)", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol, o.ValidUntil.Format(time.RFC3339)))
	e.bracketize(o, true)
}

func (e *Engine) reject(o *Order) {
	e.end(o, Margin, "WARNING", fmt.Sprintf("order %d (%s %s %v) rejected: Margin (not enough cash)", o.Ref, o.Side, o.Type, math.Abs(o.Size)))
	e.bracketize(o, true)
}
