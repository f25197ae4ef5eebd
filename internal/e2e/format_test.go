package e2e

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// The page's formatting convention (web/src/format.ts), written again here from its rules
// and not from its code, so the browser tests compare what a person reads with the API's
// figure: digits grouped by three with ",", a fixed number of decimals, "−" (U+2212) before a
// negative figure unless it rounds to zero, percent with 2 decimals, "—" for a missing one.

// fmtFixed is a number with digits decimals, grouped, with "−" when negative.
func fmtFixed(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	// Half away from zero on the exact value, as people round (and Intl.NumberFormat does):
	// 12.25 is 12.3, where strconv would round the tie to even.
	r := new(big.Rat).SetFloat64(math.Abs(v))
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()).String()
	if len(n) <= digits {
		n = strings.Repeat("0", digits-len(n)+1) + n
	}
	whole, frac := n[:len(n)-digits], n[len(n)-digits:]
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	out := b.String()
	if v < 0 && strings.ContainsAny(out, "123456789") {
		out = "−" + out
	}
	return out
}

// fmtPctOf is a fraction (0.1234) as the page shows a percent ("12.34%").
func fmtPctOf(fraction float64) string { return fmtFixed(fraction*100, 2) + "%" }

// fmtPctIn is a figure already in percent (12.34) as "12.34%".
func fmtPctIn(pct float64) string { return fmtFixed(pct, 2) + "%" }

// TestFormatConvention pins the Go side of the convention to what a person reads.
func TestFormatConvention(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{fmtPctOf(-0.3026), "−30.26%"},
		{fmtPctOf(0.12345), "12.35%"},
		{fmtPctOf(-0.00001), "0.00%"},
		{fmtPctIn(12345.678), "12,345.68%"},
		{fmtFixed(-1480.956, 2), "−1,480.96"},
		{fmtFixed(1234567, 0), "1,234,567"},
		{fmtFixed(999.999, 2), "1,000.00"},
		{fmtFixed(12.25, 1), "12.3"},
		{fmtFixed(-0.125, 2), "−0.13"},
		{fmtFixed(1.005, 2), "1.00"}, // 1.00499999… in binary
		{fmtFixed(0.004, 2), "0.00"},
		{fmtFixed(math.NaN(), 2), "—"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
