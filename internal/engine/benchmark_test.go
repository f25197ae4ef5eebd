package engine

import (
	"testing"
	"time"
)

func TestPeriodsPerYear(t *testing.T) {
	t.Parallel()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // a Monday
	// curve makes n points: step apart, skipping weekends when weekdays is set; intraday
	// points run perDay a day from 14:30.
	curve := func(n int, step time.Duration, weekdays bool, perDay int) []EquityPoint {
		var out []EquityPoint
		day := start
		for len(out) < n {
			if weekdays && (day.Weekday() == time.Saturday || day.Weekday() == time.Sunday) {
				day = day.AddDate(0, 0, 1)
				continue
			}
			if perDay > 0 {
				for k := 0; k < perDay && len(out) < n; k++ {
					out = append(out, EquityPoint{Time: day.Add(14*time.Hour + 30*time.Minute + time.Duration(k)*step)})
				}
				day = day.AddDate(0, 0, 1)
				continue
			}
			out = append(out, EquityPoint{Time: day})
			day = day.Add(step)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		eq   []EquityPoint
		want float64
	}{
		{"one point", curve(1, 24*time.Hour, true, 0), 252},
		{"daily with weekends", curve(300, 24*time.Hour, true, 0), 252},
		{"weekly", curve(100, 7*24*time.Hour, false, 0), 52},
		{"monthly", curve(40, 30*24*time.Hour, false, 0), 12},
		{"5-minute, 78 a day", curve(78*20, 5*time.Minute, true, 78), 252 * 78},
		{"hourly, 7 a day", curve(7*30, time.Hour, true, 7), 252 * 7},
	} {
		if got := PeriodsPerYear(tc.eq); got != tc.want {
			t.Errorf("%s: %v periods a year, want %v", tc.name, got, tc.want)
		}
	}
	if got := annualNote(252 * 78); got != "√N, N = 252 × 78.0 (bars a trading day)" {
		t.Errorf("intraday note %q", got)
	}
}
