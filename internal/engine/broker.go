package engine

import (
	"fmt"
	"math"
	"time"
)

// DefaultSessionEnd is a feed's session end when none is set, backtrader's: one tick
// before midnight, so a daily bar's session ends on its own day.
const DefaultSessionEnd = 24*time.Hour - 10*time.Microsecond

// SetSessionEnd sets the time of day feed's sessions end at (backtrader's sessionend): a
// Close order fills at the close of the first bar at or past that time after it was made.
func (e *Engine) SetSessionEnd(feed int, end time.Duration) error {
	if feed < 0 || feed >= len(e.feeds) {
		return fmt.Errorf("unknown data feed %d", feed)
	}
	if end <= 0 || end >= 24*time.Hour {
		return fmt.Errorf("a session end is a time of day from 00:00:00.000001 to 23:59:59.999999, got %v", end)
	}
	e.sessionEnd(feed)
	e.sessEnd[feed] = end
	return nil
}

func (e *Engine) sessionEnd(feed int) time.Duration {
	if e.sessEnd == nil {
		e.sessEnd = make([]time.Duration, len(e.feeds))
		for k := range e.sessEnd {
			e.sessEnd[k] = DefaultSessionEnd
		}
	}
	return e.sessEnd[feed]
}

// sessionEndAfter is the end of the session a bar at t belongs to (backtrader's dteos):
// t's day at the session end time, or the next day's when that is before t.
func (e *Engine) sessionEndAfter(feed int, t time.Time) time.Time {
	y, m, d := t.Date()
	end := time.Date(y, m, d, 0, 0, 0, 0, t.Location()).Add(e.sessionEnd(feed))
	if end.Before(t) {
		end = end.AddDate(0, 0, 1)
	}
	return end
}

// SetCheatOnClose turns cheat-on-close on (backtrader's broker.set_coc): a market order
// fills on the next bar at the close of the bar it was made on, and the fill is dated that
// bar. An order made with NoCOC is left out.
func (e *Engine) SetCheatOnClose(on bool) { e.coc = on }

// SetEndOfSessionBar is backtrader's broker.set_eosbar. In backtrader 1.9.78 it is kept but
// read nowhere (its test in _try_exec_close is commented out), so it changes nothing here
// either: a bar stamped with the session end time ends the session anyway.
func (e *Engine) SetEndOfSessionBar(on bool) { e.eosbar = on }

// SetInt2Pnl is backtrader's broker.set_int2pnl (on by default): the credit interest a
// feed's position owes goes into the commission, and so the trade's pnlcomm, of the next
// fill that reduces it. Off, the interest is taken from the cash all the same but no
// commission or trade carries it (backtrader's advice where several strategies share a
// position, whose interest would go to whichever closes first).
func (e *Engine) SetInt2Pnl(on bool) { e.noInt2Pnl = !on }

// Compensate makes the fills of orders on feed k move feed other's position instead of
// its own, as backtrader's data.compensate(other): such an order is priced and filled on
// k's bars, but the position it opens or closes, the trade it books (named for other), the
// interest it settles and its cash go to other; k's own position stays as it is, and, as in
// backtrader, the cash check before acceptance still tries the order against k's.
func (e *Engine) Compensate(k, other int) error {
	switch {
	case k < 0 || k >= len(e.feeds) || other < 0 || other >= len(e.feeds):
		return fmt.Errorf("compensate: unknown data feed (%d, %d of %d)", k, other, len(e.feeds))
	case k == other:
		return fmt.Errorf("compensate: feed %d cannot compensate itself", k)
	case e.compensating(other) || e.isCompensated(k):
		return fmt.Errorf("compensate: feed %d compensates another or feed %d is compensated: one level only", other, k)
	}
	if e.compensates == nil {
		e.compensates = map[int]int{}
	}
	e.compensates[k] = other
	return nil
}

func (e *Engine) compensating(k int) bool { _, ok := e.compensates[k]; return ok }

func (e *Engine) isCompensated(k int) bool {
	for _, o := range e.compensates {
		if o == k {
			return true
		}
	}
	return false
}

// posFeed is the feed whose position orders on feed k move: k's own, or the one it
// compensates.
func (e *Engine) posFeed(k int) int {
	if o, ok := e.compensates[k]; ok {
		return o
	}
	return k
}

// Filler limits how much of an order a bar fills, from the bar's volume (backtrader's
// broker fillers): what it leaves stays pending and fills on later bars, the order being
// Partial until it is Completed.
type Filler struct {
	// Kind is "" (none: orders fill whole), "fixedsize" (at most Size units and the bar's
	// volume; Size 0 is the volume alone), "fixedbarperc" (Perc percent of the bar's
	// volume, whole units) or "barpointperc" (the volume spread evenly over the bar's
	// range in steps of MinMov, Perc percent of one step's share).
	Kind   string
	Size   float64
	Perc   float64 // 0 means 100
	MinMov float64 // barpointperc: 0 means the whole range is one step
}

// SetFiller sets the volume filler for fills from now on.
func (e *Engine) SetFiller(f Filler) error {
	switch f.Kind {
	case "", "fixedsize", "fixedbarperc", "barpointperc":
	default:
		return fmt.Errorf("unknown filler %q (use fixedsize, fixedbarperc or barpointperc)", f.Kind)
	}
	if f.Perc == 0 {
		f.Perc = 100
	}
	if !(f.Size >= 0) || !(f.Perc > 0 && f.Perc <= 100) || !(f.MinMov >= 0) || math.IsInf(f.Size, 0) || math.IsInf(f.MinMov, 0) {
		return fmt.Errorf("filler: size and minmov must be numbers of 0 or more and perc more than 0 and at most 100, got %v, %v, %v", f.Size, f.MinMov, f.Perc)
	}
	e.filler = f
	return nil
}

// size is the signed part of o's remaining size bar b fills (backtrader's fillers).
func (f *Filler) size(o *Order, b *Bar) float64 {
	vol := float64(b.Volume)
	rem := math.Abs(o.Remaining)
	var n float64
	switch f.Kind {
	case "fixedsize":
		lim := f.Size
		if lim == 0 {
			lim = math.MaxInt64
		}
		n = min(vol, rem, lim)
	case "fixedbarperc":
		n = min(floorDiv(vol*f.Perc, 100), rem)
	case "barpointperc":
		parts := 1.0
		if f.MinMov != 0 {
			parts = floorDiv(b.High-b.Low+f.MinMov, f.MinMov)
		}
		n = min(floorDiv(vol/parts*f.Perc, 100), rem)
	}
	if o.Side == Sell {
		return -n
	}
	return n
}

// floorDiv is Python's a // b for floats (CPython's float_floor_div), which backtrader's
// fillers use: it goes through fmod, so it can differ from math.Floor(a/b) when a/b lies
// within a rounding of a whole number.
func floorDiv(a, b float64) float64 {
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fl := math.Floor(div)
	if div-fl > 0.5 {
		fl++
	}
	return fl
}

// chargeInterest is backtrader's credit interest at the start of a bar, before the fills:
// each open position the commission scheme charges (shorts, and longs with InterestLong)
// pays Interest a year on its value at its price for the calendar days since it last
// changed or was charged; what a feed owes is added to the commission of the next fill
// that reduces its position.
func (e *Engine) chargeInterest() {
	if e.ci.Interest == 0 {
		return
	}
	for k := range e.pos {
		p := &e.pos[k]
		if p.Size == 0 {
			continue
		}
		now := e.feeds[k].Bars[e.cursor[k]].Time
		credit := 0.0
		if p.Size < 0 || e.ci.InterestLong {
			d0, d1 := civilDay(now), civilDay(e.credited[k])
			if d0 > d1 {
				credit = float64(d0-d1) * (e.ci.Interest / 365) * math.Abs(p.Size) * p.Price
			}
		}
		e.credit[k] += credit
		e.cash -= credit
		e.flow[k] -= credit
		e.credited[k] = now
	}
}

// civilDay numbers t's calendar day.
func civilDay(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}
