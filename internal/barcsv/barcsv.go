// Package barcsv parses OHLCV bar files: the generic
// date,open,high,low,close,volume layout and Yahoo's
// Date,Open,High,Low,Close,Adj Close,Volume layout (Adj Close is ignored;
// prices stay unadjusted). Parsing is all or nothing.
package barcsv

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// Error is a parse failure at a 1-based line of the input.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func errf(line int, format string, args ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

type layout struct {
	date, open, high, low, close, volume int
	ncols                                int
}

func parseHeader(fields [][]byte) (layout, error) {
	l := layout{date: -1, open: -1, high: -1, low: -1, close: -1, volume: -1, ncols: len(fields)}
	for i, f := range fields {
		switch strings.ToLower(strings.TrimSpace(string(f))) {
		case "date", "datetime", "time", "timestamp":
			l.date = i
		case "open":
			l.open = i
		case "high":
			l.high = i
		case "low":
			l.low = i
		case "close":
			l.close = i
		case "volume":
			l.volume = i
		case "adj close", "adj_close", "adjclose", "openinterest", "open_interest":
		default:
			return l, errf(1, "unknown column %q (expected date,open,high,low,close,volume)", string(f))
		}
	}
	var missing []string
	for _, c := range []struct {
		n string
		i int
	}{{"date", l.date}, {"open", l.open}, {"high", l.high}, {"low", l.low}, {"close", l.close}} {
		if c.i < 0 {
			missing = append(missing, c.n)
		}
	}
	if len(missing) > 0 {
		return l, errf(1, "missing column(s) %s", strings.Join(missing, ", "))
	}
	return l, nil
}

// ParseTime accepts YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] and RFC 3339; the
// result is in UTC.
func ParseTime(s string) (time.Time, error) { return ParseTimeIn(s, time.UTC) }

// ParseTimeIn is ParseTime reading a time of day without an offset as loc's: a date stays
// a date (midnight UTC), an RFC 3339 time keeps its offset. The result is in UTC.
func ParseTimeIn(s string, loc *time.Location) (time.Time, error) {
	if len(s) == 10 {
		return parseDate(s)
	}
	for _, f := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		w, err := time.ParseInLocation(f, s, time.UTC) // the wall clock as written
		if err != nil {
			continue
		}
		if loc == time.UTC {
			return w, nil
		}
		t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
		if l := t.In(loc); l.Hour() != w.Hour() || l.Minute() != w.Minute() || l.Day() != w.Day() {
			// Go moves a time the clocks skip (02:30 on the day summer time starts) past the gap.
			return time.Time{}, fmt.Errorf("time %q does not exist in %s (the clocks skip it)", s, loc)
		}
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		// Microseconds are what PostgreSQL keeps: finer times that would be stored as one
		// must be seen as duplicates by the caller.
		return t.UTC().Truncate(time.Microsecond), nil
	}
	return time.Time{}, fmt.Errorf("unparsable date %q (use YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] or RFC 3339)", s)
}

// parseDate is a fast path for YYYY-MM-DD.
func parseDate(s string) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("unparsable date %q (use YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] or RFC 3339)", s)
	}
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return bad()
	}
	num := func(b string) int {
		n := 0
		for i := 0; i < len(b); i++ {
			c := b[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d := num(s[0:4]), num(s[5:7]), num(s[8:10])
	if y < 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return bad()
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return bad()
	}
	return t, nil
}

var priceNames = [4]string{"open", "high", "low", "close"}

// Parse reads all bars. Errors are *Error naming the 1-based line: fields
// that are not numbers, high below low, dates that do not parse, repeat or
// go backwards.
func Parse(r io.Reader) ([]engine.Bar, error) {
	return ParseN(r, 4096)
}

// ParseN is Parse with room for n bars made up front (a file's line count, say), so a
// large file's bars are not copied as they grow.
func ParseN(r io.Reader, n int) ([]engine.Bar, error) { return ParseIn(r, n, time.UTC) }

// ParseIn is ParseN reading times of day without an offset in loc (see ParseTimeIn).
func ParseIn(r io.Reader, n int, loc *time.Location) ([]engine.Bar, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var lay layout
	bars := make([]engine.Bar, 0, max(n, 16))
	lineNo := 0
	header := false
	fields := make([][]byte, 0, 8)
	var prev time.Time
	for sc.Scan() {
		lineNo++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if lineNo == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		fields = fields[:0]
		for {
			i := bytes.IndexByte(b, ',')
			if i < 0 {
				fields = append(fields, bytes.TrimSpace(b))
				break
			}
			fields = append(fields, bytes.TrimSpace(b[:i]))
			b = b[i+1:]
		}
		if !header {
			header = true
			l, err := parseHeader(fields)
			if err != nil {
				e := err.(*Error)
				e.Line = lineNo
				return nil, e
			}
			lay = l
			continue
		}
		if len(fields) != lay.ncols {
			return nil, errf(lineNo, "expected %d fields, got %d", lay.ncols, len(fields))
		}
		t, err := ParseTimeIn(unsafeString(fields[lay.date]), loc) // not kept: errors copy it
		if err != nil {
			return nil, errf(lineNo, "%s", err.Error())
		}
		// Prices are parsed into an array, not through pointers into bar: those would move
		// bar to the heap, one allocation per line.
		var px [4]float64
		for k, i := range [4]int{lay.open, lay.high, lay.low, lay.close} {
			f := fields[i]
			v, err := strconv.ParseFloat(unsafeString(f), 64)
			if err != nil || v != v || v > 1e300 || v < -1e300 {
				return nil, errf(lineNo, "%s %q is not a number", priceNames[k], string(f))
			}
			px[k] = v
		}
		bar := engine.Bar{Time: t, Open: px[0], High: px[1], Low: px[2], Close: px[3]}
		if lay.volume >= 0 {
			f := fields[lay.volume]
			if len(f) > 0 {
				v, err := strconv.ParseInt(unsafeString(f), 10, 64)
				if err != nil {
					fv, ferr := strconv.ParseFloat(unsafeString(f), 64)
					if ferr != nil || fv < 0 || fv != fv {
						return nil, errf(lineNo, "volume %q is not a number", string(f))
					}
					v = int64(fv)
				}
				if v < 0 {
					return nil, errf(lineNo, "volume %d is negative", v)
				}
				bar.Volume = v
			}
		}
		if bar.High < bar.Low {
			return nil, errf(lineNo, "high %s is below low %s", fields[lay.high], fields[lay.low])
		}
		if len(bars) > 0 {
			if t.Equal(prev) {
				return nil, errf(lineNo, "duplicate date %s", fields[lay.date])
			}
			if t.Before(prev) {
				return nil, errf(lineNo, "date %s is before the previous row's", fields[lay.date])
			}
		}
		prev = t
		bars = append(bars, bar)
	}
	if err := sc.Err(); err != nil {
		return nil, errf(lineNo+1, "%s", err.Error())
	}
	if !header {
		return nil, errf(1, "empty file: expected a header date,open,high,low,close,volume")
	}
	return bars, nil
}
