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
	"runtime"
	"strconv"
	"strings"
	"sync"
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

// ParseTimeIn accepts YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] and RFC 3339, reading a time of
// day without an offset as loc's: a date stays a date (midnight UTC), an RFC 3339 time
// keeps its offset. The result is in UTC.
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
	sc := newScanner(r)
	lay, lineNo, err := readHeader(sc)
	if err != nil {
		return nil, err
	}
	c := parseRows(sc, lay, lineNo, loc, make([]engine.Bar, 0, max(n, 16)))
	if c.err != nil {
		return nil, c.err
	}
	return c.bars, nil
}

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	return sc
}

// splitFields splits a line at commas, trimming each field and the double quotes around
// it (spreadsheets and jq's @csv quote dates), into fields[:0].
func splitFields(b []byte, fields [][]byte) [][]byte {
	fields = fields[:0]
	for {
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			return append(fields, unquote(bytes.TrimSpace(b)))
		}
		fields = append(fields, unquote(bytes.TrimSpace(b[:i])))
		b = b[i+1:]
	}
}

func unquote(f []byte) []byte {
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		return bytes.TrimSpace(f[1 : len(f)-1])
	}
	return f
}

// readHeader reads up to the header, the first line that is not blank, and returns its
// layout and 1-based line number.
func readHeader(sc *bufio.Scanner) (layout, int, error) {
	lineNo := 0
	for sc.Scan() {
		lineNo++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if lineNo == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l, err := parseHeader(splitFields(b, nil))
		if err != nil {
			e := err.(*Error)
			e.Line = lineNo
			return l, lineNo, e
		}
		return l, lineNo, nil
	}
	if err := sc.Err(); err != nil {
		return layout{}, lineNo, errf(lineNo+1, "%s", err.Error())
	}
	return layout{}, lineNo, errf(1, "empty file: expected a header date,open,high,low,close,volume")
}

// chunk is what parseRows read from a run of lines.
type chunk struct {
	bars      []engine.Bar
	first     int    // line of bars[0]
	firstDate string // bars[0]'s date as written
	err       error  // the first failure, at a line after the bars read
}

// parseRows appends the rows of sc, whose previous line was lineNo, to bars. It stops at
// the first failure. The order of dates is checked within the rows read.
func parseRows(sc *bufio.Scanner, lay layout, lineNo int, loc *time.Location, bars []engine.Bar) chunk {
	c := chunk{bars: bars}
	fields := make([][]byte, 0, 8)
	var prev time.Time
	for sc.Scan() {
		lineNo++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		bar, ok := fastRow(b, lay)
		if !ok {
			var err error
			if bar, err = slowRow(b, lay, lineNo, loc, &fields); err != nil {
				c.err = err
				return c
			}
		}
		t := bar.Time
		// A price of 0 or below is refused at its line, as the importer would refuse the
		// bar: reported here, it is listed by line with the file's other bad lines.
		for k, v := range [4]float64{bar.Open, bar.High, bar.Low, bar.Close} {
			if !(v > 0) {
				fields = splitFields(b, fields)
				c.err = errf(lineNo, "%s %s is not positive (prices must be greater than 0)", priceNames[k], fields[[4]int{lay.open, lay.high, lay.low, lay.close}[k]])
				return c
			}
		}
		if bar.High < bar.Low {
			fields = splitFields(b, fields)
			c.err = errf(lineNo, "high %s is below low %s", fields[lay.high], fields[lay.low])
			return c
		}
		if len(c.bars) > 0 {
			if !t.After(prev) { // the date is only looked up for the error
				c.err = orderErr(lineNo, prev, t, splitFields(b, fields)[lay.date])
				return c
			}
		} else {
			c.first, c.firstDate = lineNo, string(splitFields(b, fields)[lay.date])
		}
		prev = t
		c.bars = append(c.bars, bar)
	}
	if err := sc.Err(); err != nil {
		c.err = errf(lineNo+1, "%s", err.Error())
	}
	return c
}

// fastRow parses line b when it has the plain form most files have: ncols fields without
// spaces, a YYYY-MM-DD date, prices of at most 15 digits with an optional minus sign and
// decimal point, a volume of digits. Anything else, including every error, is left to
// slowRow (ok false). The values are exactly slowRow's: a price of at most 15 digits and 15
// decimals is the quotient of two floats that hold them exactly, so its one rounding gives
// the float strconv.ParseFloat returns.
func fastRow(b []byte, lay layout) (bar engine.Bar, ok bool) {
	p, n := 0, 0
	for col := 0; col < lay.ncols; col, p = col+1, p+n {
		if col > 0 {
			if p == len(b) || b[p] != ',' {
				return bar, false
			}
			p++
		}
		s := b[p:]
		switch col {
		case lay.date:
			bar.Time, n, ok = fastDate(s)
		case lay.open:
			bar.Open, n, ok = fastFloat(s)
		case lay.high:
			bar.High, n, ok = fastFloat(s)
		case lay.low:
			bar.Low, n, ok = fastFloat(s)
		case lay.close:
			bar.Close, n, ok = fastFloat(s)
		case lay.volume:
			bar.Volume, n, ok = fastVolume(s)
		default: // a column not read (Adj Close)
			n = bytes.IndexByte(s, ',')
			if n < 0 {
				n = len(s)
			}
		}
		if !ok {
			return bar, false
		}
	}
	return bar, p == len(b)
}

// pow10 holds the powers of ten a float64 holds exactly.
var pow10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// fastFloat parses the [-]digits[.digits] of at most 15 digits at the start of s, up to a
// comma or the end, and returns its length (see fastRow).
func fastFloat(s []byte) (float64, int, bool) {
	i, neg := 0, len(s) > 0 && s[0] == '-'
	if neg {
		i = 1
	}
	var mant uint64
	dot, start := -1, i
	for ; i < len(s); i++ {
		c := s[i]
		if d := c - '0'; d <= 9 {
			mant = mant*10 + uint64(d)
		} else if c == ',' {
			break
		} else if c == '.' && dot < 0 {
			dot = i
		} else {
			return 0, 0, false
		}
	}
	digits, frac := i-start, 0
	if dot >= 0 {
		digits, frac = digits-1, i-1-dot
	}
	if digits == 0 || digits > 15 {
		return 0, 0, false
	}
	f := float64(mant)
	if neg {
		f = -f
	}
	return f / pow10[frac&15], i, true
}

// fastVolume parses the digits, at most 18, at the start of s up to a comma or the end.
func fastVolume(s []byte) (int64, int, bool) {
	var v int64
	i := 0
	for ; i < len(s) && s[i] != ','; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, 0, false
		}
		v = v*10 + int64(d)
	}
	return v, i, i > 0 && i <= 18
}

// fastDate parses a valid YYYY-MM-DD at the start of s, before a comma or the end, as
// parseDate does, without time.Date's work.
func fastDate(s []byte) (time.Time, int, bool) {
	if len(s) < 10 || (len(s) > 10 && s[10] != ',') || s[4] != '-' || s[7] != '-' {
		return time.Time{}, 0, false
	}
	d0, d1, d2, d3 := s[0]-'0', s[1]-'0', s[2]-'0', s[3]-'0'
	d5, d6, d8, d9 := s[5]-'0', s[6]-'0', s[8]-'0', s[9]-'0'
	if d0 > 9 || d1 > 9 || d2 > 9 || d3 > 9 || d5 > 9 || d6 > 9 || d8 > 9 || d9 > 9 {
		return time.Time{}, 0, false
	}
	y := int(d0)*1000 + int(d1)*100 + int(d2)*10 + int(d3)
	m, d := int(d5)*10+int(d6), int(d8)*10+int(d9)
	if m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return time.Time{}, 0, false
	}
	// Days since 1970-01-01 of the proleptic Gregorian date (H. Hinnant's days_from_civil,
	// shifted by 400 years to keep the year positive).
	if m <= 2 {
		y--
	}
	y += 400
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doe := yoe*365 + yoe/4 - yoe/100 + (153*mp+2)/5 + d - 1
	days := (era-1)*146097 + doe - 719468
	return time.Unix(int64(days)*86400, 0).UTC(), 10, true
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// slowRow parses line b, the lineNo-th, of any form the package reads, leaving its fields
// in *fields.
func slowRow(b []byte, lay layout, lineNo int, loc *time.Location, fields *[][]byte) (engine.Bar, error) {
	*fields = splitFields(b, *fields)
	fs := *fields
	if len(fs) != lay.ncols {
		return engine.Bar{}, errf(lineNo, "expected %d fields, got %d", lay.ncols, len(fs))
	}
	t, err := ParseTimeIn(unsafeString(fs[lay.date]), loc) // not kept: errors copy it
	if err != nil {
		return engine.Bar{}, errf(lineNo, "%s", err.Error())
	}
	// Prices are parsed into an array, not through pointers into bar: those would move
	// bar to the heap, one allocation per line.
	var px [4]float64
	for k, i := range [4]int{lay.open, lay.high, lay.low, lay.close} {
		f := fs[i]
		v, err := strconv.ParseFloat(unsafeString(f), 64)
		if err != nil || v != v || v > 1e300 || v < -1e300 {
			return engine.Bar{}, errf(lineNo, "%s %q is not a number", priceNames[k], string(f))
		}
		px[k] = v
	}
	bar := engine.Bar{Time: t, Open: px[0], High: px[1], Low: px[2], Close: px[3]}
	if lay.volume >= 0 {
		f := fs[lay.volume]
		if len(f) > 0 {
			v, err := strconv.ParseInt(unsafeString(f), 10, 64)
			if err != nil {
				fv, ferr := strconv.ParseFloat(unsafeString(f), 64)
				if ferr != nil || fv < 0 || fv != fv {
					return engine.Bar{}, errf(lineNo, "volume %q is not a number", string(f))
				}
				v = int64(fv)
			}
			if v < 0 {
				return engine.Bar{}, errf(lineNo, "volume %d is negative", v)
			}
			bar.Volume = v
		}
	}
	return bar, nil
}

// orderErr is the error of a row dated t, written date, after a row dated prev, if any.
func orderErr[D string | []byte](lineNo int, prev, t time.Time, date D) error {
	if t.Equal(prev) {
		return errf(lineNo, "duplicate date %s", date)
	}
	if t.Before(prev) {
		return errf(lineNo, "date %s is before the previous row's", date)
	}
	return nil
}

// minChunk is the least input, in bytes, worth a goroutine of ParseFile: below it, the
// start-up of the goroutine and its buffer cost more than the parse.
const minChunk = 512 << 10

// ParseFile is ParseIn for the size bytes of r, a file say. A first pass over the lines
// sizes the result exactly, so no bar is copied as it grows; a large input is then parsed
// in as many pieces as there are cores, concurrently. The bars and errors are ParseIn's.
func ParseFile(r io.ReaderAt, size int64, loc *time.Location) ([]engine.Bar, error) {
	return parseFile(r, size, loc, int(min(int64(runtime.GOMAXPROCS(0)), max(size/minChunk, 1))))
}

// parseFile is ParseFile in at most pieces pieces.
func parseFile(r io.ReaderAt, size int64, loc *time.Location, pieces int) ([]engine.Bar, error) {
	whole := func() io.Reader { return io.NewSectionReader(r, 0, size) }
	starts, lines, err := splitLines(whole(), size, pieces)
	if err != nil {
		return nil, err
	}
	total := lines[len(lines)-1]
	if len(starts) == 1 {
		return ParseIn(whole(), total, loc)
	}
	section := func(k int) io.Reader {
		end := size
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		return io.NewSectionReader(r, starts[k], end-starts[k])
	}
	sc := newScanner(section(0))
	lay, headerLine, err := readHeader(sc)
	if err != nil { // or the header is past the first piece: one pass tells which
		return ParseIn(whole(), total, loc)
	}
	// Each piece appends to its own part of one slice, with room for a bar per line.
	all := make([]engine.Bar, total)
	chunks := make([]chunk, len(starts))
	var wg sync.WaitGroup
	for k := 1; k < len(starts); k++ {
		wg.Go(func() {
			chunks[k] = parseRows(newScanner(section(k)), lay, lines[k], loc, all[lines[k]:lines[k]:lines[k+1]])
		})
	}
	chunks[0] = parseRows(sc, lay, headerLine, loc, all[:0:lines[1]])
	wg.Wait()
	// The first failure in the file's order, as one pass meets it: a piece's first date
	// is checked against the previous rows' last here.
	n := 0
	var prev *engine.Bar
	for k, c := range chunks {
		if len(c.bars) > lines[k+1]-lines[k] { // more rows than lines: the file changed
			return ParseIn(whole(), total, loc)
		}
		if len(c.bars) > 0 {
			if prev != nil {
				if err := orderErr(c.first, prev.Time, c.bars[0].Time, c.firstDate); err != nil {
					return nil, err
				}
			}
			prev = &c.bars[len(c.bars)-1]
		}
		if c.err != nil {
			return nil, c.err
		}
		if n != lines[k] { // close the gap the header and blank lines left
			copy(all[n:], c.bars)
		}
		n += len(c.bars)
	}
	return all[:n:n], nil
}

// splitLines reads r, of size bytes, and returns where pieces pieces of about the same
// size start (each at a line's start; fewer when lines are long) and the lines before
// each, followed by the line count.
func splitLines(r io.Reader, size int64, pieces int) (starts []int64, lines []int, err error) {
	starts, lines = []int64{0}, []int{0}
	next := func() int64 { return size * int64(len(starts)) / int64(pieces) } // where the next piece may start
	buf := make([]byte, 64<<10)
	var off int64
	n := 0
	last := byte('\n')
	for {
		k, rerr := r.Read(buf)
		b := buf[:k]
		for len(starts) < pieces && off+int64(len(b)) > next() {
			// the next piece starts after the first newline at or past its mark
			from := max(next(), starts[len(starts)-1]) - off
			from = max(from, 0)
			i := bytes.IndexByte(b[from:], '\n')
			if i < 0 {
				break
			}
			end := from + int64(i) + 1
			if off+end >= size {
				break
			}
			starts = append(starts, off+end)
			lines = append(lines, n+bytes.Count(b[:end], []byte{'\n'}))
		}
		n += bytes.Count(b, []byte{'\n'})
		if k > 0 {
			last = b[k-1]
		}
		off += int64(k)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, nil, errf(n+1, "%s", rerr.Error())
		}
	}
	if last != '\n' {
		n++ // a last line without a newline
	}
	return starts, append(lines, n), nil
}
