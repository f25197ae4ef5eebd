package engine

import (
	"fmt"
	"math"
)

// CommInfo is how trades are charged and how much cash a position holds, as backtrader's
// CommInfoBase set with broker.setcommission: stock-like (a position costs its value) or,
// with a Margin, futures-like (a contract holds the margin, and its gains and losses are
// settled in cash at every close, times Mult).
type CommInfo struct {
	Commission float64 // Percent: a fraction of the traded value (0.001 is 0.1%); else money per unit
	Percent    bool    // commission as a fraction of the value (backtrader's COMM_PERC)
	Minimum    float64 // at least this much for each part of a fill (0: none)
	Margin     float64 // futures: cash held per contract; 0 is stock-like
	Mult       float64 // futures: money per point per contract; 0 means 1
	// Leverage divides the cash a long position takes (and gives back); 0 means 1.
	Leverage float64
	// Interest is the yearly rate charged on open short positions (and long ones with
	// InterestLong), by calendar day on their value at the position's price.
	Interest     float64
	InterestLong bool
}

// PercentCommission is the stock-like scheme charging rate of the traded value.
func PercentCommission(rate float64) CommInfo { return CommInfo{Commission: rate, Percent: true} }

func (c CommInfo) check() error {
	finite := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
	if !finite(c.Commission) || !finite(c.Minimum) || !finite(c.Margin) || !finite(c.Mult) || !finite(c.Leverage) || !finite(c.Interest) {
		return fmt.Errorf("commission, minimum, margin, mult, leverage and interest must be numbers of 0 or more, got %v, %v, %v, %v, %v, %v", c.Commission, c.Minimum, c.Margin, c.Mult, c.Leverage, c.Interest)
	}
	if c.Percent && c.Commission >= 1 {
		return fmt.Errorf("a percent commission is a fraction below 1 (0.001 is 0.1%%), got %v", c.Commission)
	}
	return nil
}

func (c *CommInfo) stocklike() bool { return c.Margin == 0 }

func (c *CommInfo) mult() float64 {
	if c.Mult == 0 {
		return 1
	}
	return c.Mult
}

func (c *CommInfo) leverage() float64 {
	if c.Leverage == 0 {
		return 1
	}
	return c.Leverage
}

// unlever is the cash a position part of value v takes: a long's value over the leverage
// (backtrader divides only positive values).
func (c *CommInfo) unlever(v float64) float64 {
	if v > 0 && c.Leverage != 0 && c.Leverage != 1 {
		return v / c.Leverage
	}
	return v
}

// openCash is the cash size units at price take, leverage counted.
func (c *CommInfo) openCash(size, price float64) float64 { return c.unlever(c.valueSize(size, price)) }

// commission is what a fill part of size at price costs (getcommission).
func (c *CommInfo) commission(size, price float64) float64 {
	var v float64
	if c.Percent {
		v = math.Abs(size) * c.Commission * price
	} else {
		v = math.Abs(size) * c.Commission
	}
	return max(v, c.Minimum)
}

// valueSize is the cash size units at price take or give back (getvaluesize): their
// signed value for a stock, the margin of the contracts for futures.
func (c *CommInfo) valueSize(size, price float64) float64 {
	if c.stocklike() {
		return size * price
	}
	return math.Abs(size) * c.Margin
}

// pnl is the profit of size units bought at price and marked at newprice (times 1 is
// exact, so stocks keep their bits).
func (c *CommInfo) pnl(size, price, newprice float64) float64 {
	return size * (newprice - price) * c.mult()
}

// cashAdjust is the cash futures settle when marked from price to newprice; none for
// stocks.
func (c *CommInfo) cashAdjust(size, price, newprice float64) float64 {
	if c.stocklike() {
		return 0
	}
	return size * (newprice - price) * c.mult()
}

// GetSize is how many whole units cash buys at price (backtrader's comminfo.getsize,
// used by the target orders): by the price for a stock, by the margin for futures.
func (e *Engine) GetSize(price, cash float64) float64 {
	if !e.ci.stocklike() {
		price = e.ci.Margin
	}
	return math.Trunc(e.ci.leverage() * math.Floor(cash/price))
}

// SetCommission sets how trades are charged from now on.
func (e *Engine) SetCommission(c CommInfo) error {
	if err := c.check(); err != nil {
		return err
	}
	e.ci = c
	return nil
}
