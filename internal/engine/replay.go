package engine

import (
	"fmt"
	"sort"
)

// Replayed is a feed's bars seen as coarser bars rebuilt bar by bar, as backtrader's
// cerebro.replaydata delivers them: bar i of the feed updates the coarser bar Index[i],
// which then stands as Bars[i] (the first open, the highest high and lowest low so far,
// bar i's close and the volume so far); Last[k] is the feed's last bar in coarser bar k.
type Replayed struct {
	Bars  []Bar
	Index []int
	Last  []int
}

// Replay returns f replayed in bars of `compression` days, weeks, months or years
// (timeframe): the feed itself, which the broker still fills against bar by bar
// (backtrader fills a replayed feed's orders at its ticks' prices), with its Replay set.
// Unlike Resample, nothing waits for the next period: each bar of f is a step, and a
// coarser bar's length (a trade's bars, the strategy's length) counts coarser bars. Days
// are calendar dates, as backtrader's replay to days of an intraday feed (a feed
// declared in minutes) whose session ends by midnight; a feed of one bar a day replayed
// to days keeps its bars.
func Replay(f Feed, timeframe string, compression int) (Feed, error) {
	period, err := periodOf("replay", timeframe, compression, true)
	if err != nil {
		return Feed{}, err
	}
	n := len(f.Bars)
	r := &Replayed{Bars: make([]Bar, n), Index: make([]int, n)}
	periods, k := 0, 0 // periods begun since coarser bar k started (backtrader's compcount)
	for i, b := range f.Bars {
		if i > 0 && period(b.Time) > period(f.Bars[i-1].Time) {
			periods++
			if periods%compression == 0 {
				r.Last = append(r.Last, i-1)
				k++
			}
		}
		r.Index[i] = k
		if i == 0 || r.Index[i-1] != k {
			r.Bars[i] = b
			continue
		}
		cur := r.Bars[i-1]
		cur.High, cur.Low = max(cur.High, b.High), min(cur.Low, b.Low)
		cur.Close, cur.Volume, cur.Time = b.Close, cur.Volume+b.Volume, b.Time
		r.Bars[i] = cur
	}
	if n > 0 {
		r.Last = append(r.Last, n-1)
	}
	f.Replay = r
	return f, nil
}

// barNo is the number of the current bar of feed: its cursor, or for a replayed feed the
// coarser bar the cursor's bar builds (a trade's length counts those, as backtrader's).
func (e *Engine) barNo(feed int) int {
	c := e.cursor[feed]
	if r := e.feeds[feed].Replay; r != nil && c >= 0 {
		return r.Index[c]
	}
	return c
}

// strategyLen is the strategy's length at this step (backtrader's len(strategy), which
// grows when any feed's length does): the steps so far at which a feed that is not
// replayed had a bar or a replayed feed began a coarser bar.
func (e *Engine) strategyLen() int { return e.grown }

// grow counts the current step in strategyLen when it lengthened a feed.
func (e *Engine) grow() {
	for k, f := range e.feeds {
		c := e.cursor[k]
		if e.ticked[k] && (f.Replay == nil || c == 0 || f.Replay.Index[c] != f.Replay.Index[c-1]) {
			e.grown++
			return
		}
	}
}

// replayAligned refuses, in a run of several feeds, a replayed feed that has no bar at a
// time another feed has, between its own first and last bars. On such a step backtrader
// reads the feed's next bar into the coarser bar and takes it back: the coarser bar falls
// back to the previous period's (its length one less, growing again the step after,
// which the strategy's length then counts twice) and the broker sees the next bar's
// prices; the engine does not imitate that.
func (e *Engine) replayAligned() error {
	for _, f := range e.feeds {
		if f.Replay == nil || len(f.Bars) == 0 {
			continue
		}
		first := sort.Search(len(e.timeline), func(i int) bool { return !e.timeline[i].Before(f.Bars[0].Time) })
		for j, b := range f.Bars {
			if t := e.timeline[first+j]; !t.Equal(b.Time) {
				return fmt.Errorf("replay: %s has no bar at %s, which another feed has: backtrader takes a replayed feed's bar back to the previous period on such a step, which is not imitated; give the replayed feeds the same dates as the others while they trade",
					f.Symbol, t.Format("2006-01-02 15:04:05"))
			}
		}
	}
	return nil
}
