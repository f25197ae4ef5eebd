package engine

import (
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
		Status: Submitted, CreatedTime: bar.Time, CreatedBar: e.step,
	}
	o.Remaining = o.Size
	o.CreatedPrice = r.Price
	if o.CreatedPrice == 0 {
		o.CreatedPrice = bar.Close
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
	e.submitted = append(e.submitted, o)
	e.notify(o)
	if !e.cfg.QuietEngine {
		e.Log("INFO", "engine", fmt.Sprintf("order %d submitted: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
	}
	return o, nil
}

// Bracket submits a parent order with a stop-loss and a take-profit child
// on the opposite side. The children become active on the bar after the parent
// fills (as in backtrader); a fill of one child cancels the other.
func (e *Engine) Bracket(parent OrderRequest, stopPrice, limitPrice float64) ([]*Order, error) {
	p, err := e.Submit(parent)
	if err != nil {
		return nil, err
	}
	out := []*Order{p}
	opp := -parent.Side
	var kids []*Order
	for _, k := range []struct {
		t     ExecType
		price float64
	}{{Stop, stopPrice}, {Limit, limitPrice}} {
		if !(k.price > 0) {
			continue
		}
		c, err := e.Submit(OrderRequest{Feed: parent.Feed, Side: opp, Type: k.t, Size: parent.Size, Price: k.price,
			ValidUntil: parent.ValidUntil, TradeID: parent.TradeID}) // as backtrader passes valid and tradeid on
		if err != nil {
			return nil, err
		}
		c.parent = p
		c.inactive = true
		kids = append(kids, c)
		out = append(out, c)
	}
	p.children = kids
	if len(kids) > 1 {
		g := append([]*Order(nil), kids...)
		for _, k := range kids {
			k.ocoGroup = &g
		}
	}
	return out, nil
}

// Cancel cancels a live order. It reports whether anything was cancelled. An order
// submitted on this bar and not yet accepted by the broker cannot be cancelled: as in
// backtrader (whose broker only cancels pending orders), the cancel is ignored and the
// order stays live; a WARNING line in the log says so.
func (e *Engine) Cancel(o *Order) bool {
	if o == nil || !o.Status.Alive() {
		return false
	}
	if o.Status == Submitted {
		e.Log("WARNING", "engine", fmt.Sprintf("cancel of order %d ignored: it was submitted on this bar and is not yet accepted by the broker, so it stays live (as in backtrader); cancel it on a later bar", o.Ref))
		return false
	}
	e.cancel(o)
	return true
}

func (e *Engine) cancel(o *Order) {
	e.end(o, Canceled, "INFO", fmt.Sprintf("order %d cancelled: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
}

// end finishes a live order without a fill (cancelled, expired or rejected): it is
// recorded, notified and logged, and its OCO group and bracket children go with it.
func (e *Engine) end(o *Order, st Status, level, msg string) {
	o.Status = st
	e.event(o)
	e.notify(o)
	e.Log(level, "engine", msg)
	e.ocoCheck(o)
	for _, c := range o.children {
		if c.Status.Alive() {
			e.cancel(c)
		}
	}
}

func (e *Engine) event(o *Order) {
	e.res.OrderEvents = append(e.res.OrderEvents, e.orderEvent(o))
}

func (e *Engine) orderEvent(o *Order) OrderEvent {
	return OrderEvent{
		Ref: o.Ref, Symbol: e.feeds[o.Feed].Symbol, Side: o.Side.String(), ExecType: o.Type.String(),
		Status: o.Status.String(), CreatedTime: o.CreatedTime, CreatedPrice: o.CreatedPrice,
		Price: o.Price, Size: o.Size, Time: e.Now(),
	}
}

func (e *Engine) notify(o *Order) {
	if e.quiet.orders {
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
		price := o.CreatedPrice
		if e.coo && o.Type == Market { // backtrader prices it at the open it will fill at
			price = e.feeds[o.Feed].Bars[e.cursor[o.Feed]].Open
		}
		opened, closed := e.scratch[o.Feed].update(o.Remaining, price)
		if closed != 0 {
			cash += e.ci.valueSize(-closed, price)
			cash -= e.ci.commission(closed, price)
		}
		if opened != 0 {
			cash -= e.ci.valueSize(opened, price)
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
}

func (e *Engine) reject(o *Order) {
	e.end(o, Margin, "WARNING", fmt.Sprintf("order %d (%s %s %v) rejected: Margin (not enough cash)", o.Ref, o.Side, o.Type, math.Abs(o.Size)))
}
