package marketdata

import (
	"fmt"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
)

// Timeframes are the bar intervals the service knows, finest first.
var Timeframes = []string{"1m", "5m", "15m", "1h", "4h", "1d", "1w", "1M"}

// DefaultTimeframe is the default `timeframe` of a request.
const DefaultTimeframe = "1d"

// minutes orders the timeframes; a month counts as 31 days (only the order matters).
var minutes = map[string]int{"1m": 1, "5m": 5, "15m": 15, "1h": 60, "4h": 240, "1d": 1440, "1w": 10080, "1M": 44640}

// ValidTimeframe reports whether tf is one of Timeframes.
func ValidTimeframe(tf string) bool { _, ok := minutes[tf]; return ok }

func timeframeList() string { return strings.Join(Timeframes, ", ") }

// CheckTimeframe is the 400 of a timeframe that is not one of Timeframes.
func CheckTimeframe(tf string) error {
	if !ValidTimeframe(tf) {
		return apperr.Invalid("Unsupported timeframe '%s' (use one of %s)", tf, timeframeList())
	}
	return nil
}

// readFrom picks the stored timeframe bars at tf are made from: the coarsest of stored
// (finest first) at or below tf. None is an error naming the finest stored one.
func readFrom(stored []string, symbol, tf string) (string, error) {
	from := ""
	for _, s := range stored {
		if minutes[s] <= minutes[tf] {
			from = s
		}
	}
	if from == "" {
		finest := "none"
		if len(stored) > 0 {
			finest = stored[0]
		}
		return "", fmt.Errorf("timeframe %s is finer than the stored bars of %s (finest stored: %s)", tf, symbol, finest)
	}
	return from, nil
}

// Intraday reports whether bars of tf are instants (finer than a day). Daily and coarser
// bars are dates, stored at midnight UTC whatever the data's time zone.
func Intraday(tf string) bool { return minutes[tf] < minutes["1d"] }

// Span is the stored-time range [from, until) of the days start..end (dates, end included)
// for bars of timeframe tf: the days of loc for intraday bars, UTC midnights for dates.
func Span(tf string, loc *time.Location, start, end time.Time) (from, until time.Time) {
	until = end.AddDate(0, 0, 1)
	if !Intraday(tf) || loc == nil || loc == time.UTC {
		return start, until
	}
	day := func(t time.Time) time.Time {
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc).UTC()
	}
	return day(start), day(until)
}

// wall is t's wall-clock reading in loc, written as a UTC time.
func wall(t time.Time, loc *time.Location) time.Time {
	if loc == nil || loc == time.UTC {
		return t.UTC()
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// bucket returns the start of tf's interval containing t on loc's calendar: intraday
// intervals are aligned to loc's midnight and are instants; days, weeks (from Monday) and
// months (from the first) are dates, at midnight UTC.
func bucket(tf string, t time.Time, loc *time.Location) time.Time {
	w := wall(t, loc)
	switch tf {
	case "1d":
		return time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
	case "1w":
		d := time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
		wd := (int(d.Weekday()) + 6) % 7 // Monday = 0
		return d.AddDate(0, 0, -wd)
	case "1M":
		return time.Date(w.Year(), w.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		w = w.Truncate(time.Duration(minutes[tf]) * time.Minute)
		if loc == nil || loc == time.UTC {
			return w
		}
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), 0, 0, loc).UTC()
	}
}

// Aggregate folds bars (ascending) into tf intervals of loc's calendar: first open, highest
// high, lowest low, last close, summed volume. An intraday or daily bar is stamped with its
// interval's start; a weekly or monthly bar with the date of its first bar, the day trading
// in it began: stamped with its Monday or the 1st, a range from 2015-01-01 would start with
// a bar dated 2014-12-29 that holds only 2015's prices (a year row of its own in the yearly
// table, a period that starts before the request's). loc matters only for intraday bars;
// dates are folded as they are.
func Aggregate(bars []engine.Bar, tf string, loc *time.Location) []engine.Bar {
	out := make([]engine.Bar, 0, len(bars)/2+1)
	firstDay := tf == "1w" || tf == "1M"
	var cur time.Time // the interval of out's last bar
	for _, b := range bars {
		k := bucket(tf, b.Time, loc)
		if n := len(out); n > 0 && cur.Equal(k) {
			o := &out[n-1]
			o.High = max(o.High, b.High)
			o.Low = min(o.Low, b.Low)
			o.Close = b.Close
			o.Volume += b.Volume
			continue
		}
		cur = k
		stamp := k
		if firstDay {
			stamp = bucket("1d", b.Time, loc)
		}
		out = append(out, engine.Bar{Time: stamp, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume})
	}
	return out
}

// InferTimeframe guesses the timeframe of imported bars: the smallest gap between
// consecutive bars, mapped to the nearest known interval at or below it (gaps of a day or
// more give 1d, of a week 1w, of 28 days or more 1M).
func InferTimeframe(bars []engine.Bar) string {
	if len(bars) < 2 {
		if len(bars) == 1 && !bars[0].Time.Equal(bucket("1d", bars[0].Time, time.UTC)) {
			return "1m"
		}
		return "1d"
	}
	gap := time.Duration(1<<63 - 1)
	for i := 1; i < len(bars); i++ {
		if d := bars[i].Time.Sub(bars[i-1].Time); d > 0 && d < gap {
			gap = d
		}
	}
	switch {
	case gap >= 28*24*time.Hour:
		return "1M"
	case gap >= 7*24*time.Hour:
		return "1w"
	case gap >= 24*time.Hour:
		return "1d"
	}
	best := "1m"
	for _, tf := range Timeframes[:5] {
		if time.Duration(minutes[tf])*time.Minute <= gap {
			best = tf
		}
	}
	return best
}
