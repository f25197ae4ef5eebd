package engine

import (
	"fmt"
	"time"
)

// Resample builds from f a feed of coarser bars, as backtrader's resampledata does with
// its defaults: a bar per `compression` weeks, months or years (timeframe "weeks",
// "months" or "years"), with the first open, the highest high, the lowest low, the last
// close and the summed volume of the bars in it.
//
// backtrader only knows a period is over when the first bar of the next one arrives, so
// that is when it delivers the coarser bar, stamped with the time of the last bar in it;
// the last one comes in a step of its own after f's last bar. Here each bar's Time is
// when it is delivered (the next period's first bar's time, or 1 ns after f's last bar),
// so the engine's timeline delivers it there, and the returned feed's Stamps hold the
// times the strategy sees.
func Resample(f Feed, timeframe string, compression int) (Feed, error) {
	period, err := periodOf("resample", timeframe, compression, false)
	if err != nil {
		return Feed{}, err
	}
	out := Feed{Symbol: f.Symbol}
	var cur Bar
	open := false
	periods := 0 // periods begun since the current bar started (backtrader's compcount)
	for i, b := range f.Bars {
		if open && period(b.Time) > period(f.Bars[i-1].Time) {
			periods++
			if periods%compression == 0 {
				out.Stamps = append(out.Stamps, cur.Time)
				cur.Time = b.Time
				out.Bars = append(out.Bars, cur)
				open = false
			}
		}
		if !open {
			cur, open = b, true
			continue
		}
		cur.High, cur.Low = max(cur.High, b.High), min(cur.Low, b.Low)
		cur.Close, cur.Volume, cur.Time = b.Close, cur.Volume+b.Volume, b.Time
	}
	if open {
		out.Stamps = append(out.Stamps, cur.Time)
		cur.Time = cur.Time.Add(time.Nanosecond)
		out.Bars = append(out.Bars, cur)
	}
	return out, nil
}

// periodOf numbers the weeks, months or years (timeframe) of times, in order, for
// Resample and Replay (op, in their errors); the days (calendar dates) too when days.
func periodOf(op, timeframe string, compression int, days bool) (func(t time.Time) int, error) {
	var period func(t time.Time) int
	switch timeframe {
	case "days":
		if days {
			period = func(t time.Time) int { y, m, d := t.Date(); return y*10000 + int(m)*100 + d }
			break
		}
		return nil, fmt.Errorf("%s: timeframe must be 'weeks', 'months' or 'years', got %q", op, timeframe)
	case "weeks":
		period = func(t time.Time) int { y, w := t.ISOWeek(); return y*100 + w }
	case "months":
		period = func(t time.Time) int { return t.Year()*100 + int(t.Month()) }
	case "years":
		period = func(t time.Time) int { return t.Year() }
	default:
		if days {
			return nil, fmt.Errorf("%s: timeframe must be 'days', 'weeks', 'months' or 'years', got %q", op, timeframe)
		}
		return nil, fmt.Errorf("%s: timeframe must be 'weeks', 'months' or 'years', got %q", op, timeframe)
	}
	if compression < 1 {
		return nil, fmt.Errorf("%s: compression must be a whole number of 1 or more, got %d", op, compression)
	}
	return period, nil
}

// Stamp is the time a strategy sees for bar i of f: its Stamps entry when it has them (a
// resampled feed), else the bar's time.
func (f *Feed) Stamp(i int) time.Time {
	if f.Stamps != nil {
		return f.Stamps[i]
	}
	return f.Bars[i].Time
}
