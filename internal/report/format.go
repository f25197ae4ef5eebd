package report

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The HTML report writes figures by the page's one formatting convention (web/src/format.ts),
// so a number reads the same in the report as on the page:
//
//   - en-US digit grouping ("1,234.56"), a fixed number of decimals for each kind of figure,
//     no scientific notation;
//   - the minus sign "−" (U+2212), never the hyphen; a value that rounds to zero has no sign;
//   - percent with 2 decimals ("12.34%"): returns come as fractions and are ×100 here only;
//   - money with 2 decimals and no currency symbol (the data carries none); ratios 2 decimals;
//     counts whole and grouped; calendar days "12 days";
//   - dates ISO "YYYY-MM-DD", times "YYYY-MM-DD HH:MM" in the data's zone;
//   - a missing or non-finite figure "—".

const (
	minusSign = "−"
	missing   = "—"
)

// numFormat is how a figure is written.
type numFormat int

const (
	fmtMoney       numFormat = iota // 2 decimals
	fmtPctFraction                  // a fraction (0.1234) as 12.34%
	fmtPct                          // already a percent (12.34) as 12.34%
	fmtRatio                        // 2 decimals
	fmtCount                        // whole, grouped
)

// formatNumber writes v with digits decimals, grouped, with "−" when negative.
func formatNumber(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return missing
	}
	s := roundHalfAway(math.Abs(v), digits)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && strings.ContainsAny(s, "123456789") {
		b.WriteString(minusSign)
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// roundHalfAway writes v (not negative) with digits decimals, a tie rounded away from zero
// on the exact value, as the page's Intl.NumberFormat does: 12.25 is 12.3, where strconv
// rounds the tie to even (12.2) and the report read 12.2 days beside the page's 12.3.
func roundHalfAway(v float64, digits int) string {
	r := new(big.Rat).SetFloat64(v)
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()).String()
	if digits == 0 {
		return n
	}
	if len(n) <= digits {
		n = strings.Repeat("0", digits-len(n)+1) + n
	}
	return n[:len(n)-digits] + "." + n[len(n)-digits:]
}

// format writes v (nil: missing) as f says.
func format(v *float64, f numFormat) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return missing
	}
	switch f {
	case fmtPctFraction:
		return formatNumber(*v*100, 2) + "%"
	case fmtPct:
		return formatNumber(*v, 2) + "%"
	case fmtCount:
		return formatNumber(math.Round(*v), 0)
	default:
		return formatNumber(*v, 2)
	}
}

func formatValue(v float64, f numFormat) string { return format(&v, f) }

// conventional writes a statistic's display text (engine.Metric.Display: "-3.53%", "1234.50",
// "12 days") by the convention: its number grouped and with "−", its unit kept. The
// statistics record owns each figure's unit and decimals; only the typography changes.
func conventional(display string) string { return conventionalOf(display, nil) }

// conventionalOf is conventional with the figure's value: the number is written from value
// (scaled as display shows it, ×100 for a fraction in percent) with display's decimals, so a
// tie rounds as the page rounds it, not as display was rounded. A nil value, or a display
// that does not show it, leaves display's own number.
func conventionalOf(display string, value *float64) string {
	end := 0
	for end < len(display) && strings.IndexByte("-0123456789.", display[end]) >= 0 {
		end++
	}
	if end == 0 {
		return display
	}
	num, rest := display[:end], display[end:]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return display
	}
	digits := 0
	if _, frac, ok := strings.Cut(num, "."); ok {
		digits = len(frac)
	}
	if value != nil && !math.IsNaN(*value) && !math.IsInf(*value, 0) {
		// The display rounded value or value×100 to digits decimals: whichever it shows.
		tol := 0.5*math.Pow(10, -float64(digits)) + 1e-9*math.Max(1, math.Abs(v))
		switch {
		case math.Abs(*value-v) <= tol:
			v = *value
		case math.Abs(*value*100-v) <= tol:
			v = *value * 100
		}
	}
	if rest == " days" && formatNumber(v, digits) == "1" {
		rest = " day"
	}
	return formatNumber(v, digits) + rest
}
