package engine

import "math"

// Fsum returns the correctly rounded sum of xs, like Python's math.fsum
// (Shewchuk's algorithm with exact partials).
func Fsum(xs []float64) float64 {
	var a exactSum
	for _, x := range xs {
		a.add(x)
	}
	return a.value()
}

// exactSum accumulates floats exactly as a list of non-overlapping
// partials. Adding and later subtracting the same value leaves the exact
// sum unchanged, so it also serves rolling windows.
type exactSum struct {
	partials []float64
	special  float64 // non-finite inputs: NaN or an infinity
	nspecial int
}

func (a *exactSum) add(x float64) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		a.nspecial++
		a.special += x
		return
	}
	i := 0
	for _, y := range a.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			a.partials[i] = lo
			i++
		}
		x = hi
	}
	a.partials = append(a.partials[:i], x)
}

// remove subtracts a value previously added.
func (a *exactSum) remove(x float64) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		a.nspecial--
		if a.nspecial == 0 {
			a.special = 0
		}
		return
	}
	a.add(-x)
}

// value is the correctly rounded sum (CPython's final rounding step).
func (a *exactSum) value() float64 {
	if a.nspecial > 0 {
		return a.special
	}
	p := a.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	n--
	hi := p[n]
	lo := 0.0
	for n > 0 {
		x := hi
		n--
		y := p[n]
		hi = x + y
		yr := hi - x
		lo = y - yr
		if lo != 0 {
			break
		}
	}
	if n > 0 && ((lo < 0 && p[n-1] < 0) || (lo > 0 && p[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		yr := x - hi
		if y == yr {
			hi = x
		}
	}
	return hi
}
