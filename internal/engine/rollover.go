package engine

import (
	"errors"
	"time"
)

// Combined is a feed made of several others (Chain, RollOver): Feed holds its bars and
// Source, for each of them, the index of the feed it was taken from.
type Combined struct {
	Feed   Feed
	Source []int
}

// Span is a run of a joined feed's bars that one of the feeds it joins gave: that feed's
// bars from First to Last, Bars of them. A joined feed is its spans in order, so it can be
// built again from the feeds' own bars (what a chart of the run shows).
type Span struct {
	Symbol string    `json:"symbol"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Bars   int       `json:"bars"`
}

// Spans are c's spans, its feeds named by symbols (one per feed it joined, in order).
func (c Combined) Spans(symbols []string) []Span {
	var out []Span
	for i, b := range c.Feed.Bars {
		k := c.Source[i]
		if n := len(out); n > 0 && i > 0 && c.Source[i-1] == k {
			out[n-1].Last = b.Time
			out[n-1].Bars++
			continue
		}
		out = append(out, Span{Symbol: symbols[k], First: b.Time, Last: b.Time, Bars: 1})
	}
	return out
}

// Chain joins feeds one after the other, as backtrader's Chainer (cerebro.chaindata): all
// the bars of the first, then those of the next that come after the last bar delivered,
// and so on; a bar at or before a time already delivered is skipped.
func Chain(symbol string, feeds []Feed) (Combined, error) {
	if len(feeds) == 0 {
		return Combined{}, errors.New("chain: no feeds to chain")
	}
	out := Combined{Feed: Feed{Symbol: symbol}}
	var last time.Time
	for k, f := range feeds {
		for _, b := range f.Bars {
			if len(out.Feed.Bars) > 0 && !b.Time.After(last) {
				continue
			}
			last = b.Time
			out.Feed.Bars = append(out.Feed.Bars, b)
			out.Source = append(out.Source, k)
		}
	}
	return out, nil
}

// RollRule decides when RollOver moves to the next feed. Bars are given as (feed, index
// of its current bar); either function may be nil.
type RollRule struct {
	// CheckDate is backtrader's checkdate(dt, d): whether the active feed d, at its bar
	// i dated dt, may roll over now. Nil never rolls over.
	CheckDate func(dt time.Time, d, i int) (bool, error)
	// CheckCondition is backtrader's checkcondition(d0, d1), asked only when CheckDate
	// said yes: whether to roll from d0 (at bar i0) to the next feed d1 (at bar i1, its
	// first at or after d0's). Nil rolls over.
	CheckCondition func(d0, i0, d1, i1 int) (bool, error)
}

// RollOver is backtrader's RollOver feed (cerebro.rolloverdata): it delivers the bars of
// the first feed (the active one) while moving the feeds after it along to its time; on
// each bar where the rule allows it, it switches to the next feed and delivers that feed's
// current bar instead (its first at or after the active one's). When the active feed runs
// out, the next one takes over from its next bar. backtrader loops forever when a later
// feed ends before the active one's time; here that feed just stays at its last bar.
func RollOver(symbol string, feeds []Feed, rule RollRule) (Combined, error) {
	if len(feeds) == 0 {
		return Combined{}, errors.New("rollover: no feeds to roll over")
	}
	out := Combined{Feed: Feed{Symbol: symbol}}
	cur := make([]int, len(feeds)) // the index of each feed's current bar, -1 before its first
	for k := range cur {
		cur[k] = -1
	}
	active, rest := 0, make([]int, 0, len(feeds)-1)
	for k := 1; k < len(feeds); k++ {
		rest = append(rest, k)
	}
	for active >= 0 {
		if cur[active]+1 >= len(feeds[active].Bars) { // the active feed is out of bars
			active = -1
			if len(rest) > 0 {
				active, rest = rest[0], rest[1:]
			}
			continue
		}
		cur[active]++
		dt0 := feeds[active].Bars[cur[active]].Time
		for _, k := range rest { // the later feeds to their first bar at or after dt0
			for cur[k]+1 < len(feeds[k].Bars) && (cur[k] < 0 || feeds[k].Bars[cur[k]].Time.Before(dt0)) {
				cur[k]++
			}
		}
		if rule.CheckDate != nil {
			ok, err := rule.CheckDate(dt0, active, cur[active])
			if err != nil {
				return Combined{}, err
			}
			if ok && len(rest) > 0 && cur[rest[0]] >= 0 {
				roll := true
				if rule.CheckCondition != nil {
					if roll, err = rule.CheckCondition(active, cur[active], rest[0], cur[rest[0]]); err != nil {
						return Combined{}, err
					}
				}
				if roll {
					active, rest = rest[0], rest[1:]
				}
			}
		}
		b := feeds[active].Bars[cur[active]]
		if n := len(out.Feed.Bars); n > 0 && !b.Time.After(out.Feed.Bars[n-1].Time) {
			continue // only when the next feed has no bar after the active one's last
		}
		out.Feed.Bars = append(out.Feed.Bars, b)
		out.Source = append(out.Source, active)
	}
	return out, nil
}
