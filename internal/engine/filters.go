package engine

import (
	"fmt"
	"math"
	"time"
)

// HeikinAshi remodels f's bars into Heikin-Ashi candles, as backtrader's
// bt.filters.HeikinAshi does to a feed: the close is the mean of the bar's open, high, low
// and close; the open the mean of the previous candle's open and close; the high and low
// the bar's, widened to the candle's open and close. The first bar, with no candle
// before it, gets the mean of its own open and close as its open and keeps its high and
// low (backtrader's filter leaves them). The volume and times are kept, so the feed keeps
// its length and the broker fills against the candles.
func HeikinAshi(f Feed) Feed {
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, len(f.Bars)), Stamps: f.Stamps}
	for i, b := range f.Bars {
		c := (b.Open + b.High + b.Low + b.Close) / 4.0
		n := b
		n.Close = c
		if i == 0 {
			n.Open = (b.Open + b.Close) / 2.0
		} else {
			p := out.Bars[i-1]
			n.Open = (p.Open + p.Close) / 2.0
			n.High = max(n.Open, c, b.High)
			n.Low = min(n.Open, c, b.Low)
		}
		out.Bars[i] = n
	}
	return out
}

// RenkoParams are backtrader's bt.filters.Renko parameters.
type RenkoParams struct {
	Hilo       bool    // bricks decided on the high and low, not the close
	Size       float64 // the brick size; 0 for Autosize
	Autosize   float64 // with no Size: the first open // Autosize (backtrader's default 20)
	Dynamic    bool    // with Autosize, the size is taken again from each new brick's close
	Align      float64 // price boundaries rounded to multiples of it (default 1)
	RoundStart bool    // the first open truncated to a whole number (default true)
}

// Renko turns f into Renko bricks, as backtrader's bt.filters.Renko does to a feed: a bar
// whose close (high, with Hilo) reaches the brick top becomes a rising brick from the top
// to one size above it, one whose close (low) reaches the brick bottom a falling brick,
// and any other bar is dropped. A bar makes one brick at most, however far it moved; a
// brick keeps its bar's time and has no volume. A falling brick has its high at the
// bottom and its low at the top, exactly as backtrader writes it.
func Renko(f Feed, p RenkoParams) (Feed, error) {
	if p.Size < 0 || math.IsNaN(p.Size) || math.IsInf(p.Size, 0) {
		return Feed{}, fmt.Errorf("renko: size must be a positive number, got %v", p.Size)
	}
	if p.Size == 0 && !(p.Autosize > 0) {
		return Feed{}, fmt.Errorf("renko: autosize must be above 0 when size is not given, got %v", p.Autosize)
	}
	if !(p.Align > 0) || math.IsInf(p.Align, 0) {
		return Feed{}, fmt.Errorf("renko: align must be above 0, got %v", p.Align)
	}
	out := Feed{Symbol: f.Symbol}
	if len(f.Bars) == 0 {
		return out, nil
	}
	align := func(x float64) float64 { return math.RoundToEven(x/p.Align) * p.Align }
	o := align(f.Bars[0].Open)
	size := p.Size
	if size == 0 {
		size = floorDiv(o, p.Autosize)
	}
	if !(size > 0) {
		return Feed{}, fmt.Errorf("renko: autosize %v makes bricks of %v from the first open %v: give a size", p.Autosize, size, f.Bars[0].Open)
	}
	if p.RoundStart {
		o = math.Trunc(o) // Python's int()
	}
	top, bot := o+size, o-size
	for i, b := range f.Bars {
		hi, lo := b.Close, b.Close
		if p.Hilo {
			hi, lo = b.High, b.Low
		}
		n := b
		n.Volume = 0
		switch {
		case hi >= top:
			bot = top
			if p.Size == 0 && p.Dynamic {
				size = floorDiv(b.Close, p.Autosize)
				top = align(bot + size)
			} else {
				top = bot + size
			}
			n.Open, n.Low, n.High, n.Close = bot, bot, top, top
		case lo <= bot:
			top = bot
			if p.Size == 0 && p.Dynamic {
				size = floorDiv(b.Close, p.Autosize)
				bot = align(top - size)
			} else {
				bot = top - size
			}
			n.Open, n.Low, n.High, n.Close = top, top, bot, bot
		default:
			continue
		}
		out.Bars = append(out.Bars, n)
		if f.Stamps != nil {
			out.Stamps = append(out.Stamps, f.Stamps[i])
		}
	}
	return out, nil
}

// CalendarDays adds a bar for each calendar day missing between two of f's bars, as
// backtrader's bt.filters.CalendarDays does: open, high, low and close at fillPrice when
// it is above 0, the previous bar's close when it is 0, the previous bar's (high+low)/2
// when it is -1; volume fillVol; the time of day of the bar after the gap. Like
// backtrader's, the fill runs up to and including the date of the bar after the gap, so
// that date has a filler bar before its own.
func CalendarDays(f Feed, fillPrice float64, fillVol int64) (Feed, error) {
	if fillPrice < 0 && fillPrice != -1 {
		return Feed{}, fmt.Errorf("calendardays: fill_price must be above 0, 0 (the last close) or -1 (the last bar's high-low midpoint), got %v", fillPrice)
	}
	if fillVol < 0 {
		return Feed{}, fmt.Errorf("calendardays: fill_vol must not be negative, got %d", fillVol)
	}
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, 0, len(f.Bars))}
	for i, b := range f.Bars {
		if i > 0 {
			p := f.Bars[i-1]
			loc := b.Time.Location()
			midnight := func(t time.Time) time.Time { y, m, d := t.In(loc).Date(); return time.Date(y, m, d, 0, 0, 0, 0, loc) }
			last, day := midnight(p.Time), midnight(b.Time)
			if day.Sub(last) > 24*time.Hour {
				price := fillPrice
				switch fillPrice {
				case 0:
					price = p.Close
				case -1:
					price = (p.High + p.Low) / 2.0
				}
				tod := b.Time.Sub(day) // the time of day of the bar after the gap
				for last.Before(day) {
					last = last.AddDate(0, 0, 1)
					out.Bars = append(out.Bars, Bar{Time: last.Add(tod), Open: price, High: price, Low: price, Close: price, Volume: fillVol})
				}
			}
		}
		out.Bars = append(out.Bars, b)
	}
	return out, nil
}

// SessionFillerParams are backtrader's bt.filters.SessionFiller parameters and the feed's
// session and bar size it reads.
type SessionFillerParams struct {
	Unit          time.Duration // the bars' size (backtrader's timeframe x compression): minutes
	Start, End    time.Duration // the session's start and end, times of day
	FillPrice     float64       // above 0: the fillers' price; 0: the last close
	FillVol       int64
	SkipFirstFill bool // no fill before the first bar of the first session (default true)
}

// SessionFiller adds the bars missing within sessions, as backtrader's
// bt.filters.SessionFiller does: between two bars of a session every Unit; from the
// session start to a session's first bar (not the first session's with SkipFirstFill);
// from a session's last bar to its end, when the next bar is past it. Fillers have the
// last real close (or FillPrice) as their open, high, low and close. A session whose end is
// filled must be followed by one whose first bar comes after a fill from its start:
// otherwise backtrader hands the end's fillers over after that bar, out of time order,
// which is refused.
func SessionFiller(f Feed, p SessionFillerParams) (Feed, error) {
	if p.Unit < time.Minute || p.Unit%time.Minute != 0 {
		return Feed{}, fmt.Errorf("sessionfiller: the bars' size must be whole minutes, got %v", p.Unit)
	}
	if p.FillPrice < 0 || p.FillVol < 0 {
		return Feed{}, fmt.Errorf("sessionfiller: fill_price and fill_vol must not be negative, got %v and %d", p.FillPrice, p.FillVol)
	}
	if p.Start < 0 || p.End >= 24*time.Hour || p.Start > p.End {
		return Feed{}, fmt.Errorf("sessionfiller: the session must start and end within a day, start before end, got %v to %v", p.Start, p.End)
	}
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, 0, len(f.Bars))}
	var sessEnd, prev time.Time // sessEnd zero: no session open (backtrader's MAXDATE)
	seen := false
	for i, b := range f.Bars {
		price := p.FillPrice
		if price == 0 && i > 0 {
			price = f.Bars[i-1].Close
		}
		// fill adds a bar every Unit after from, before to (backtrader's _fillbars)
		fill := func(from, to time.Time) int {
			n := 0
			for t := from.Add(p.Unit); t.Before(to); t = t.Add(p.Unit) {
				out.Bars = append(out.Bars, Bar{Time: t, Open: price, High: price, Low: price, Close: price, Volume: p.FillVol})
				n++
			}
			return n
		}
		ended := 0
		if !sessEnd.IsZero() && b.Time.After(sessEnd) {
			ended = fill(prev, sessEnd.Add(time.Minute)) // up to the end, the end included
			sessEnd = time.Time{}
		}
		filled := 0
		if sessEnd.IsZero() {
			y, m, d := b.Time.Date()
			day := time.Date(y, m, d, 0, 0, 0, 0, b.Time.Location())
			start := day.Add(p.Start)
			sessEnd = day.Add(p.End)
			if !b.Time.Before(start) && !b.Time.After(sessEnd) && (seen || !p.SkipFirstFill) {
				filled = fill(start.Add(-p.Unit), b.Time)
			}
			seen = true
		} else {
			filled = fill(prev, b.Time)
		}
		if i == 0 && filled > 0 && p.FillPrice == 0 {
			return Feed{}, fmt.Errorf("sessionfiller: with skip_first_fill false the first session is filled before its first bar, which has no close before it: give a fill_price")
		}
		if ended > 0 && filled == 0 {
			return Feed{}, fmt.Errorf("sessionfiller: the bar at %s follows a session filled up to its end without a fill from its own session start: backtrader would put the end's fillers after it, out of time order", b.Time.Format("2006-01-02 15:04:05"))
		}
		prev = b.Time
		out.Bars = append(out.Bars, b)
	}
	return out, nil
}

// BarReplayerOpen splits each of f's bars in two steps, as backtrader's
// bt.filters.BarReplayer_Open (DayStepsFilter) does: first the bar's open alone (open,
// high, low and close at the open, no volume), then the whole bar, both at the bar's time.
// The feed is replayed (its Replay set): the strategy sees one bar growing from its open
// to the whole bar, next() runs on both steps and lengths count the original bars, while
// the broker fills against each step, so a Limit or Stop order made at the open can fill
// on the whole bar of the same day and a Market order waits for the next day's open
// (backtrader fills a market order only after its bar's time).
func BarReplayerOpen(f Feed) Feed {
	n := len(f.Bars)
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, 0, 2*n)}
	r := &Replayed{Index: make([]int, 0, 2*n), Last: make([]int, 0, n)}
	for i, b := range f.Bars {
		o := b
		o.High, o.Low, o.Close, o.Volume = b.Open, b.Open, b.Open, 0
		out.Bars = append(out.Bars, o, b)
		r.Index = append(r.Index, i, i)
		r.Last = append(r.Last, 2*i+1)
	}
	// the whole bar replaces the open's bar wholesale (backtrader's _updatebar), so the bar
	// as it stands is each step itself
	r.Bars = out.Bars
	out.Replay = r
	return out
}

// timeOfDay is t's time since its midnight, in t's location.
func timeOfDay(t time.Time) time.Duration {
	y, m, d := t.Date()
	return t.Sub(time.Date(y, m, d, 0, 0, 0, 0, t.Location()))
}

// SessionFilter drops f's bars whose time of day lies outside the session from start to
// end (both included), as backtrader's bt.filters.SessionFilter does with the feed's
// sessionstart and sessionend: pre- and post-market bars of an intraday feed. The bars
// kept are untouched.
func SessionFilter(f Feed, start, end time.Duration) (Feed, error) {
	if start < 0 || end >= 24*time.Hour || start > end {
		return Feed{}, fmt.Errorf("sessionfilter: the session must start and end within a day, start before end, got %v to %v", start, end)
	}
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, 0, len(f.Bars))}
	for i, b := range f.Bars {
		if tod := timeOfDay(b.Time); tod < start || tod > end {
			continue
		}
		out.Bars = append(out.Bars, b)
		if f.Stamps != nil {
			out.Stamps = append(out.Stamps, f.Stamps[i])
		}
	}
	return out, nil
}

// DaySplitterClose splits each of f's daily bars in two, as backtrader's
// bt.filters.DaySplitter_Close does: first the open, high and low with the close replaced
// by their average ((open+high+low)/3), at the session start of the bar's day, with the
// part of the volume closeVol leaves (truncated to a whole number); then the close alone
// (open, high, low and close at the close) at the session end, with the rest of the volume.
// Both are whole bars, as adddata delivers them and as backtrader's
// replaydata(timeframe=Days) does for a feed declared in days (a replay to the feed's own
// timeframe ends a bar at each bar). For a feed declared in minutes, which the filter is
// made for, that replay makes the two parts one day bar: Replay(..., "days", 1) of the
// returned feed.
func DaySplitterClose(f Feed, closeVol float64, start, end time.Duration) (Feed, error) {
	if !(closeVol >= 0 && closeVol <= 1) {
		return Feed{}, fmt.Errorf("daysplitter_close: closevol must be from 0 to 1, got %v", closeVol)
	}
	if start < 0 || end >= 24*time.Hour || start > end {
		return Feed{}, fmt.Errorf("daysplitter_close: the session must start and end within a day, start before end, got %v to %v", start, end)
	}
	out := Feed{Symbol: f.Symbol, Bars: make([]Bar, 0, 2*len(f.Bars))}
	var last time.Time
	for i, b := range f.Bars {
		y, m, d := b.Time.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, b.Time.Location())
		if i > 0 && !day.After(last) {
			// backtrader's filter lets a second bar of a day through unsplit, after the
			// first's close part: out of time order, refused
			return Feed{}, fmt.Errorf("daysplitter_close: the bar at %s is not the first of its day: the filter splits daily bars", b.Time.Format("2006-01-02 15:04:05"))
		}
		last = day
		vohl := int64(float64(b.Volume) * (1.0 - closeVol)) // Python's int(): towards zero
		ohl := Bar{Time: day.Add(start), Open: b.Open, High: b.High, Low: b.Low, Close: (b.Open + b.High + b.Low) / 3.0, Volume: vohl}
		c := Bar{Time: day.Add(end), Open: b.Close, High: b.Close, Low: b.Close, Close: b.Close, Volume: b.Volume - vohl}
		out.Bars = append(out.Bars, ohl, c)
	}
	return out, nil
}
