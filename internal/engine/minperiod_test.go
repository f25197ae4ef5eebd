package engine

import (
	"context"
	"slices"
	"testing"
)

// With a daily and a weekly feed (no resampling), the weekly feed stays at its minimum
// period for a whole week: backtrader calls nextstart on every daily step of it
// (minperstatus 0), not once. testdata/backtrader's multiframe_nextstart pins the same
// against real backtrader.
func TestAtMinPeriodWithTwoTimeframes(t *testing.T) {
	t.Parallel()
	rows := make([][4]float64, 42)
	for i := range rows {
		rows[i] = [4]float64{10, 11, 9, 10}
	}
	daily := bars(rows...) // 2020-01-01 on, one a day
	var weekly []Bar
	for i := 6; i < len(daily); i += 7 { // stamped on each seventh day
		weekly = append(weekly, daily[i])
	}
	cases := []struct {
		name             string
		dailyMin, weekly int
		want             []int // 0-based daily steps of next() at which AtMinPeriod holds
		first            int   // the first next()
	}{
		// the weekly feed's 3rd bar is on day 20; days 20-26 have it as the latest
		{"weekly slower", 5, 3, []int{20, 21, 22, 23, 24, 25, 26}, 20},
		// the daily feed reaches 25 bars on day 24, when the weekly is past its 2nd: once
		{"daily slower", 25, 2, []int{24}, 24},
		// the weekly's 3rd bar is still its latest on day 24: until day 27, as backtrader
		{"daily reaches it inside the week", 25, 3, []int{24, 25, 26}, 24},
		// no warm-up: the steps until the weekly feed's second bar
		{"no warm-up", 1, 1, []int{6, 7, 8, 9, 10, 11, 12}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(Config{Feeds: []Feed{{Symbol: "D", Bars: daily}, {Symbol: "W", Bars: weekly}}, Cash: 1000})
			if err != nil {
				t.Fatal(err)
			}
			e.RequireMinPeriod(0, c.dailyMin)
			e.RequireMinPeriod(1, c.weekly)
			var at []int
			first := -1
			if _, err := e.Run(context.Background(), &script{next: func(e *Engine) {
				step := e.Feeds()[0].Bars[0].Time
				i := int(e.Now().Sub(step).Hours() / 24)
				if first < 0 {
					first = i
				}
				if e.AtMinPeriod() {
					at = append(at, i)
				}
			}}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(at, c.want) || first != c.first {
				t.Errorf("AtMinPeriod on days %v, first next() on %d; want %v and %d", at, first, c.want, c.first)
			}
		})
	}
}
