package engine

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// feedOn makes a feed with one bar on each given day of January 2001, its close the day
// plus base (so a bar tells where it came from).
func feedOn(sym string, base float64, days ...int) Feed {
	f := Feed{Symbol: sym}
	for _, d := range days {
		f.Bars = append(f.Bars, Bar{Time: time.Date(2001, 1, d, 0, 0, 0, 0, time.UTC), Close: base + float64(d)})
	}
	return f
}

func closes(f Feed) []float64 {
	var c []float64
	for _, b := range f.Bars {
		c = append(c, b.Close)
	}
	return c
}

func TestChainAndRollOver(t *testing.T) {
	t.Parallel()
	a := feedOn("A", 100, 1, 2, 3, 4, 5)
	b := feedOn("B", 200, 3, 4, 5, 6, 7, 8)
	c := feedOn("C", 300, 6, 7, 8, 9, 10)
	short := feedOn("S", 400, 2, 3) // ends before the active feed's time
	day := func(dt time.Time) int { return dt.Day() }
	cases := []struct {
		name   string
		feeds  []Feed
		chain  bool
		rule   RollRule
		want   []float64
		source []int
	}{
		{"chain skips what was delivered", []Feed{a, b, c}, true, RollRule{},
			[]float64{101, 102, 103, 104, 105, 206, 207, 208, 309, 310}, []int{0, 0, 0, 0, 0, 1, 1, 1, 2, 2}},
		{"no checkdate: each feed to its end, the next from its next bar", []Feed{a, b, c}, false, RollRule{},
			[]float64{101, 102, 103, 104, 105, 206, 207, 208, 309, 310}, []int{0, 0, 0, 0, 0, 1, 1, 1, 2, 2}},
		{"roll on day 3: the next feed's bar of that day", []Feed{a, b, c}, false,
			RollRule{CheckDate: func(dt time.Time, _, _ int) (bool, error) { return day(dt) == 3 || day(dt) == 7, nil }},
			[]float64{101, 102, 203, 204, 205, 206, 307, 308, 309, 310}, []int{0, 0, 1, 1, 1, 1, 2, 2, 2, 2}},
		{"the condition holds the roll back", []Feed{a, b}, false,
			RollRule{
				CheckDate:      func(time.Time, int, int) (bool, error) { return true, nil },
				CheckCondition: func(_, i0, _, _ int) (bool, error) { return i0 >= 2, nil },
			},
			[]float64{101, 102, 203, 204, 205, 206, 207, 208}, []int{0, 0, 1, 1, 1, 1, 1, 1}},
		{"a next feed at a later bar: its bar after the active one's", []Feed{a, c}, false,
			RollRule{CheckDate: func(dt time.Time, _, _ int) (bool, error) { return day(dt) == 2, nil }},
			[]float64{101, 306, 307, 308, 309, 310}, []int{0, 1, 1, 1, 1, 1}},
		// backtrader loops forever here; the roll to S delivers nothing (its last bar is
		// older), and B goes on from its bar after day 4
		{"a next feed that ended earlier never goes back in time", []Feed{a, short, b}, false,
			RollRule{CheckDate: func(dt time.Time, _, _ int) (bool, error) { return day(dt) == 4, nil }},
			[]float64{101, 102, 103, 205, 206, 207, 208}, []int{0, 0, 0, 2, 2, 2, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got Combined
			var err error
			if c.chain {
				got, err = Chain("J", c.feeds)
			} else {
				got, err = RollOver("J", c.feeds, c.rule)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Feed.Symbol != "J" || !slices.Equal(closes(got.Feed), c.want) || !slices.Equal(got.Source, c.source) {
				t.Errorf("got %s %v from %v, want %v from %v", got.Feed.Symbol, closes(got.Feed), got.Source, c.want, c.source)
			}
			// Its spans build it again from the feeds' own bars, as a chart of the run does.
			names := make([]string, len(c.feeds))
			by := map[string][]Bar{}
			for i, f := range c.feeds {
				names[i], by[f.Symbol] = f.Symbol, f.Bars
			}
			var again []Bar
			for _, sp := range got.Spans(names) {
				n := 0
				for _, b := range by[sp.Symbol] {
					if !b.Time.Before(sp.First) && !b.Time.After(sp.Last) {
						again = append(again, b)
						n++
					}
				}
				if n != sp.Bars {
					t.Errorf("span %+v holds %d bars of %s", sp, n, sp.Symbol)
				}
			}
			if !slices.Equal(again, got.Feed.Bars) {
				t.Errorf("the spans %+v make %v, the joined feed is %v", got.Spans(names), again, got.Feed.Bars)
			}
		})
	}
}

func TestRollOverErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	if _, err := RollOver("J", nil, RollRule{}); err == nil {
		t.Error("no feeds: no error")
	}
	if _, err := Chain("J", nil); err == nil {
		t.Error("chain of no feeds: no error")
	}
	_, err := RollOver("J", []Feed{feedOn("A", 0, 1, 2), feedOn("B", 0, 1, 2)},
		RollRule{CheckDate: func(time.Time, int, int) (bool, error) { return false, boom }})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want the callback's", err)
	}
}
