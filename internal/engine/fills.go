package engine

import (
	"fmt"
	"math"
	"time"
)

// OpenStrategy is a Strategy with cheat-on-open (backtrader's next_open): NextOpen runs
// on each new bar before the broker, from the bar after the first Next on.
type OpenStrategy interface {
	Strategy
	NextOpen(e *Engine) error
}

// SetCheatOnOpen turns cheat-on-open on: a strategy's NextOpen sees the new bar's open
// (its data lines are at the new bar, its indicators still at the previous one, as in
// backtrader), and a market order placed there fills at that open.
func (e *Engine) SetCheatOnOpen(on bool) { e.coo = on }

// IndicatorCursor is the index of the bar feed i's indicators are read at.
func (e *Engine) IndicatorCursor(i int) *int { return &e.indCursor[i] }

func (e *Engine) nextOpen(s Strategy, firstNext int) error {
	o, ok := s.(OpenStrategy)
	if !e.coo || !ok || firstNext == 0 {
		return nil
	}
	for k := range e.indCursor {
		if e.ticked[k] {
			e.indCursor[k]--
		}
	}
	err := o.NextOpen(e)
	copy(e.indCursor, e.cursor)
	return err
}

// settle marks futures positions to the close in cash, as backtrader's broker does at
// the end of each bar; stock positions settle nothing.
func (e *Engine) settle() {
	if e.ci.stocklike() {
		return
	}
	for k := range e.pos {
		p := &e.pos[k]
		if p.Size == 0 || !e.ticked[k] {
			continue
		}
		cl := e.feeds[k].Bars[e.cursor[k]].Close
		adj := e.ci.cashAdjust(p.Size, p.adjBase, cl)
		e.cash += adj
		e.flow[k] += adj
		p.adjBase = cl
	}
}

// tryFills goes once through the accepted orders, in submission order, on the bar, as
// backtrader's broker does: an order past its validity expires; otherwise an active order
// on a feed with a bar now is tried, and a trailing stop still alive then follows the close.
func (e *Engine) tryFills() {
	if len(e.pending) == 0 {
		return
	}
	for i := 0; i < len(e.pending); i++ {
		o := e.pending[i]
		if !o.Status.Alive() {
			continue
		}
		b := &e.feeds[o.Feed].Bars[e.cursor[o.Feed]]
		if o.Type != Market && !o.ValidUntil.IsZero() && b.Time.After(o.ValidUntil) {
			e.expire(o)
			continue
		}
		if o.inactive || !e.ticked[o.Feed] {
			continue
		}
		before := e.cash
		switch {
		case o.Type == Close:
			e.tryClose(o, b)
		case o.Type == Market && e.coc && !o.noCOC:
			// cheat-on-close: at the creating bar's close (slipped within this bar's
			// range), dated that bar; the cash moves now.
			if o.Side == Buy {
				price, _ := e.slip.up(b.High, o.CreatedClose, e.slip.Open, false)
				e.execute(o, price, o.CreatedTime, e.cursor[o.Feed])
			} else {
				price, _ := e.slip.down(b.Low, o.CreatedClose, e.slip.Open, false)
				e.execute(o, price, o.CreatedTime, e.cursor[o.Feed])
			}
		default:
			if price, ok := e.fillPrice(o, b); ok {
				e.execute(o, price, b.Time, e.cursor[o.Feed])
			}
		}
		e.flow[e.posFeed(o.Feed)] += e.cash - before
		if o.Status == Completed {
			e.bracketize(o, false)
		}
		if o.Status.Alive() && o.Type.trailing() {
			o.trailAdjust(b.Close)
		}
	}
	live := e.pending[:0]
	for _, o := range e.pending {
		if o.Status.Alive() {
			live = append(live, o)
		}
	}
	for i := len(live); i < len(e.pending); i++ {
		e.pending[i] = nil
	}
	e.pending = live
}

// tryClose is backtrader's _try_exec_close: a Close order fills after the bar it was made
// on, at the close of the bar that ends its session (at or past the session end time); when
// the first bar past the end is the next session's, at the last close seen before it,
// dated that bar (the one before this).
func (e *Engine) tryClose(o *Order, b *Bar) {
	if b.Time.After(o.CreatedTime) && !b.Time.Before(o.dteos) {
		c := e.cursor[o.Feed]
		if o.pannotated != 0 && b.Time.After(o.dteos) {
			e.execute(o, o.pannotated, e.feeds[o.Feed].Bars[c-1].Time, c-1)
		} else {
			e.execute(o, b.Close, b.Time, c)
		}
		return
	}
	o.pannotated = b.Close
}

// limitFill is backtrader's _try_exec_limit: at the open (slipped within the limit) when
// the bar opens through the limit, else at the limit when the bar reaches it.
func (e *Engine) limitFill(buy bool, p float64, b *Bar) (float64, bool) {
	if buy {
		if p >= b.Open {
			return e.slip.up(min(b.High, p), b.Open, e.slip.Open, true)
		}
		if p >= b.Low {
			return p, true
		}
		return 0, false
	}
	if p <= b.Open {
		// backtrader passes the limit, not max(low, limit), as the floor here
		return e.slip.down(p, b.Open, e.slip.Open, true)
	}
	if p <= b.High {
		return p, true
	}
	return 0, false
}

// fillPrice is the price o fills at on bar b, if it fills (backtrader's _try_exec_*).
func (e *Engine) fillPrice(o *Order, b *Bar) (float64, bool) {
	buy := o.Side == Buy
	switch o.Type {
	case Market:
		// Without cheat-on-open a market order fills only after the bar it was made on
		// (backtrader's _try_exec_market, `datetime[0] <= created.dt`): one placed by a cheat
		// timer, before the broker, waits for the next bar's open, and so does one made on a
		// bar of the same time (a CalendarDays filler's date).
		if !e.coo && !b.Time.After(o.CreatedTime) {
			return 0, false
		}
		if buy {
			return e.slip.up(b.High, b.Open, e.slip.Open, false)
		}
		return e.slip.down(b.Low, b.Open, e.slip.Open, false)
	case Close:
		return b.Close, true
	case Historical:
		return o.Price, true
	case Limit:
		return e.limitFill(buy, o.Price, b)
	case Stop, StopTrail:
		s := o.Price
		if buy {
			if b.Open >= s {
				return e.slip.up(b.High, b.Open, e.slip.Open, false)
			}
			if b.High >= s {
				return e.slip.up(b.High, s, true, false)
			}
			return 0, false
		}
		if b.Open <= s {
			return e.slip.down(b.Low, b.Open, e.slip.Open, false)
		}
		if b.Low <= s {
			return e.slip.down(b.Low, s, true, false)
		}
		return 0, false
	case StopLimit, StopTrailLimit:
		if o.triggered {
			return e.limitFill(buy, o.PLimit, b)
		}
		s, pl := o.Price, o.PLimit
		if buy {
			if b.Open >= s {
				o.triggered = true
				return e.limitFill(buy, pl, b)
			}
			if b.High >= s {
				o.triggered = true
				if b.Open > b.Close {
					if pl >= s {
						return e.slip.up(b.High, s, true, true)
					} else if pl >= b.Close {
						return pl, true
					}
				} else if pl >= s {
					return e.slip.up(b.High, s, true, true)
				}
			}
			return 0, false
		}
		if b.Open <= s {
			o.triggered = true
			return e.limitFill(buy, pl, b)
		}
		if b.Low <= s {
			o.triggered = true
			if b.Open <= b.Close { // backtrader: popen <= pclose (the buy side tests popen > pclose)
				if pl <= s {
					return e.slip.down(b.Low, s, true, true)
				} else if pl <= b.Close {
					return pl, true
				}
			} else if pl <= s {
				return e.slip.down(b.Low, s, true, true)
			}
		}
		return 0, false
	}
	return 0, false
}

// execute fills o at price, as backtrader's BackBroker._execute does: the fill is dated
// at (a Close order's or cheat-on-close's may be an earlier bar's), its trade the current
// bar; a filler reads the volume of the feed's bar vbar.
func (e *Engine) execute(o *Order, price float64, at time.Time, vbar int) {
	pf := e.posFeed(o.Feed) // the feed whose position moves (backtrader's compensate)
	pos := &e.pos[pf]
	t := e.feeds[o.Feed].Bars[e.cursor[o.Feed]].Time
	if c := e.cursor[pf]; pf != o.Feed && c >= 0 {
		t = e.feeds[pf].Bars[c].Time // backtrader dates the trade by the compensated feed
	}
	size := o.Remaining
	if e.filler.Kind != "" {
		size = e.filler.size(o, &e.feeds[o.Feed].Bars[vbar])
		if size == 0 {
			return
		}
	}
	porig := pos.Price
	probe := *pos
	opened, closed := probe.update(size, price)
	var pnl float64 // stays +0 for an opening fill; -closed*(...) would give -0 there
	if closed != 0 {
		pnl = e.ci.pnl(-closed, porig, price)
	}
	cash := e.cash
	var closedValue, closedComm, openedValue, openedComm float64
	if closed != 0 {
		closedValue = e.ci.valueSize(-closed, porig)
		if e.ci.stocklike() {
			cash += e.ci.unlever(closedValue) + pnl
		} else { // futures: the margin comes back; gains were settled at each close
			cash += e.ci.unlever(closedValue)
		}
		closedComm = e.ci.commission(closed, price)
		cash -= closedComm
		cash += e.ci.cashAdjust(-closed, pos.adjBase, price)
		e.cash = cash
	}
	popened := opened
	if opened != 0 {
		openedValue = e.ci.valueSize(opened, price)
		cash -= e.ci.unlever(openedValue)
		openedComm = e.ci.commission(opened, price)
		cash -= openedComm
		if cash < 0 {
			opened, openedValue, openedComm = 0, 0, 0
		} else {
			if math.Abs(probe.Size) > math.Abs(opened) {
				// contracts held before this fill are settled to its price, the new base
				cash += e.ci.cashAdjust(probe.Size-opened, pos.adjBase, price)
			}
			pos.adjBase = price
			e.cash = cash
		}
	}
	if execSize := closed + opened; execSize != 0 {
		pos.update(execSize, price)
		e.credited[pf] = t
		if closed != 0 && !e.noInt2Pnl { // backtrader's int2pnl: interest owed goes into the closing commission
			closedComm += e.credit[pf]
			e.credit[pf] = 0
		}
		prev := o.ExecSize
		o.ExecSize += execSize
		// backtrader's OrderData.addbit, also for the first fill: (size*price)/size can
		// differ from price in the last bit, and strategies compute exits from it.
		o.ExecPrice = (o.ExecPrice*prev + price*execSize) / o.ExecSize
		o.ExecTime = at
		o.ExecValue += closedValue + openedValue
		o.ExecComm += closedComm + openedComm
		o.ExecPnL += pnl
		o.Remaining -= execSize
		if o.Remaining == 0 {
			o.Status = Completed
		} else {
			o.Status = Partial
		}
		e.res.Executions = append(e.res.Executions, Execution{
			Ref: o.Ref, Symbol: e.feeds[o.Feed].Symbol, Time: at, Side: o.Side.String(), ExecType: o.Type.String(),
			Price: price, Size: execSize, Value: closedValue + openedValue, Commission: closedComm + openedComm,
			PnL: pnl, CreatedTime: o.CreatedTime, CreatedPrice: o.CreatedPrice, Status: o.Status.String(), Strategy: o.Owner,
		})
		if !e.cfg.QuietEngine {
			e.Log("INFO", "engine", fmt.Sprintf("order %d filled: %s %g %s @ %.4f, commission %.4f",
				o.Ref, o.Side, math.Abs(execSize), e.feeds[o.Feed].Symbol, price, closedComm+openedComm))
		}
		e.notify(o)
		var last *TradeState
		if closed != 0 {
			last = e.tradeUpdate(o, pf, closed, price, closedComm, t, false)
		}
		if opened != 0 {
			last = e.tradeUpdate(o, pf, opened, price, openedComm, t, true)
		}
		// As backtrader, a trade is notified as opened once per fill, if the last trade
		// the fill updated has just opened (so backtrader's TradeAnalyzer counts it).
		if last != nil && last.JustOpened {
			if !e.quiet.trades {
				snap := *last
				e.notes = append(e.notes, note{trade: &snap})
			}
			e.opened++
			e.members[o.Owner].opened++
		}
		e.ocoCheck(o)
	}
	if popened != 0 && opened == 0 {
		e.reject(o)
	}
}

// tradeUpdate is backtrader's Trade.update for one execution bit of o on feed's position
// (o's feed, or the one it compensates): the part that closed (reduced) the position or the part that opened (added to) it. As in
// backtrader's Strategy._addnotification, trades are kept per feed and tradeid, and the
// position, which is the feed's across tradeids, decides which part is which: a closing
// part goes to the tradeid's latest trade even when that one is closed (it opens again,
// under its old ref), an opening part starts a new trade when the latest one is closed.
func (e *Engine) tradeUpdate(o *Order, feed int, size, price, comm float64, t time.Time, opening bool) *TradeState {
	key := tradeKey{o.Owner, feed, o.TradeID}
	tr := e.trades[key]
	if tr == nil || (opening && tr.IsClosed) {
		e.tradeRef++
		tr = &TradeState{Ref: e.tradeRef, Owner: o.Owner, Feed: feed, TradeID: o.TradeID}
		e.trades[key] = tr
	}
	tr.Commission += comm
	old := tr.Size
	tr.Size += size
	tr.JustOpened = old == 0 && size != 0
	bar := e.barNo(feed)
	if tr.JustOpened {
		tr.OpenBar = bar
		tr.OpenTime = t
		tr.MaxSize = 0
	}
	tr.IsOpen = tr.Size != 0
	tr.BarLen = bar - tr.OpenBar
	tr.IsClosed = old != 0 && tr.Size == 0
	var pnl float64
	if math.Abs(tr.Size) > math.Abs(old) {
		// backtrader's trade.price: the average of the fills that grew this trade, not the
		// feed's position (which other tradeids and strategies share); a fill that flips
		// the trade's sign without growing it keeps it.
		tr.Price = (old*tr.Price + size*price) / tr.Size
		if old == 0 {
			tr.EntryPrice = price
		} else {
			tr.EntryPrice = (tr.EntryPrice*old + size*price) / tr.Size
		}
		if math.Abs(tr.Size) > math.Abs(tr.MaxSize) {
			tr.MaxSize = tr.Size
		}
	} else {
		pnl = e.ci.pnl(-size, tr.Price, price)
	}
	tr.PnL += pnl
	tr.PnLComm = tr.PnL - tr.Commission
	if tr.IsClosed {
		tr.ExitPrice = price
		tr.CloseTime = t
		ct := t
		e.closed = append(e.closed, Trade{
			Ref: tr.Ref, TradeID: tr.TradeID, Symbol: e.feeds[feed].Symbol, OpenTime: tr.OpenTime, CloseTime: &ct,
			Size: tr.MaxSize, EntryPrice: tr.EntryPrice, ExitPrice: price, PnLGross: tr.PnL, PnLNet: tr.PnLComm,
			Commission: tr.Commission, BarLen: tr.BarLen, Strategy: tr.Owner,
		})
		if !e.cfg.QuietEngine {
			e.Log("INFO", "engine", fmt.Sprintf("trade %d closed: %s, pnl %.4f, net %.4f, %d bars",
				tr.Ref, e.feeds[feed].Symbol, tr.PnL, tr.PnLComm, tr.BarLen))
		}
		if !e.quiet.trades {
			snap := *tr
			e.notes = append(e.notes, note{trade: &snap})
		}
	}
	return tr
}
