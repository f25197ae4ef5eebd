package engine

import "fmt"

// Slippage moves fill prices against the order, as backtrader's broker does after
// set_slippage_perc or set_slippage_fixed. The zero value slips nothing.
type Slippage struct {
	Perc  float64 // fraction of the price (0.001 is 0.1%); wins over Fixed
	Fixed float64 // money per unit
	// Open slips fills at the open too (market orders, gaps through a stop or limit).
	Open bool
	// Match: a slipped price beyond the bar's high (buy) or low (sell) is capped to it;
	// without Match (and Limit, for limit prices) such an order does not fill on the bar.
	Match bool
	// Limit matches limit orders as Match does, even without Match.
	Limit bool
	// Out gives the slipped price even beyond the bar, where Match or Limit would cap it.
	Out bool
}

// check refuses slippage that would move prices the wrong way or not be a number.
func (s Slippage) check() error {
	if !(s.Perc >= 0 && s.Perc < 1) || !(s.Fixed >= 0) || s.Fixed > 1e300 {
		return fmt.Errorf("slippage must be a fraction from 0 to less than 1 or a fixed amount of 0 or more, got %v / %v", s.Perc, s.Fixed)
	}
	return nil
}

// up slips a buy price up, within pmax (backtrader's _slip_up); ok is false when no
// price can be given on this bar.
func (s *Slippage) up(pmax, price float64, doslip, lim bool) (float64, bool) {
	if !doslip {
		return price, true
	}
	var p float64
	switch {
	case s.Perc != 0:
		p = price * (1 + s.Perc)
	case s.Fixed != 0:
		p = price + s.Fixed
	default:
		return price, true
	}
	if p <= pmax {
		return p, true
	}
	if s.Match || (lim && s.Limit) {
		if !s.Out {
			return pmax, true
		}
		return p, true
	}
	return 0, false
}

// down slips a sell price down, within pmin (backtrader's _slip_down).
func (s *Slippage) down(pmin, price float64, doslip, lim bool) (float64, bool) {
	if !doslip {
		return price, true
	}
	var p float64
	switch {
	case s.Perc != 0:
		p = price * (1 - s.Perc)
	case s.Fixed != 0:
		p = price - s.Fixed
	default:
		return price, true
	}
	if p >= pmin {
		return p, true
	}
	if s.Match || (lim && s.Limit) {
		if !s.Out {
			return pmin, true
		}
		return p, true
	}
	return 0, false
}

// SetSlippage sets the slippage of the fills from now on.
func (e *Engine) SetSlippage(s Slippage) error {
	if err := s.check(); err != nil {
		return err
	}
	e.slip = s
	return nil
}
