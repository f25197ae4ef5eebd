package marketdata

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/store"
)

// ImportResult reports what an import did.
type ImportResult struct {
	Source    string `json:"source"`
	Symbol    string `json:"symbol"`
	Timeframe string `json:"timeframe"`
	Timezone  string `json:"timezone"`  // the zone times without an offset were read in
	Received  int    `json:"received"`  // bars in the input
	Inserted  int    `json:"inserted"`  // new bars
	Updated   int    `json:"updated"`   // stored bars whose values changed
	Unchanged int    `json:"unchanged"` // stored bars already identical
	Version   int    `json:"version"`   // the symbol's latest version after the import (a new one when bars changed)
	First     string `json:"first"`     // first bar's time, RFC 3339 (empty without bars)
	Last      string `json:"last"`
}

// upsertChunk bounds the rows sent in one upsert statement (bars that may already be stored).
const upsertChunk = 50000

// symbolPattern is compiled on first use, not at start-up (its {0,31} makes a large program).
var symbolPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\-^=]{0,31}$`) })

// ValidSymbol checks a ticker before it is registered.
func ValidSymbol(symbol string) error {
	if !symbolPattern().MatchString(symbol) {
		return apperr.Invalid("Invalid symbol '%s': use 1-32 letters, digits, '.', '-', '_', '^' or '=' and start with a letter or digit", symbol)
	}
	return nil
}

// Import stores bars for symbol in one transaction: the symbol is registered (name kept
// when empty), existing bars at the same times are replaced, and nothing is written when any
// step fails. tf empty means InferTimeframe. Bars must be ascending without duplicates (as
// ParseCSV and ParseJSON return them; ParseCSV names the line of a bad row), with finite
// prices greater than 0 and dates from MinDay to MaxDay: checkBars answers a 400 naming the
// index of a bad bar. Bar times are rounded to microseconds on a copy.
//
// loc is the time zone the bars' times were read in (see ImportZone), recorded as the
// symbol's. A symbol whose stored bars were read in another zone is a 409: its bars would
// mix two readings of the same clock times.
//
// Imports of one symbol are serialised. Bars before the first or after the last stored bar
// of the symbol and timeframe cannot collide with stored ones and are COPYed straight into
// the table; only the overlapping stretch goes through the (slower) upsert.
func (svc *Service) Import(ctx context.Context, source, symbol, name, tf string, loc *time.Location, bars []engine.Bar) (ImportResult, error) {
	return svc.ImportAs(ctx, nil, source, symbol, name, tf, loc, bars)
}

// ImportAs is Import recording the user who imported (the symbol's imported_by); nil for
// nobody.
func (svc *Service) ImportAs(ctx context.Context, by *string, source, symbol, name, tf string, loc *time.Location, bars []engine.Bar) (ImportResult, error) {
	res := ImportResult{Source: source, Symbol: symbol, Received: len(bars)}
	if err := ValidSymbol(symbol); err != nil {
		return res, err
	}
	if len(bars) == 0 {
		return res, apperr.Invalid("No bars to import: the input has a header but no rows")
	}
	// The caller's slice is not ours to change (an engine run may be reading it): rounding
	// the times happens on a copy.
	bars = roundedTimes(bars)
	if err := checkBars(bars); err != nil {
		return res, err
	}
	if tf == "" {
		tf = InferTimeframe(bars)
	} else if err := CheckTimeframe(tf); err != nil {
		return res, err
	}
	res.Timeframe, res.Timezone = tf, loc.String()
	if err := svc.CheckSource(ctx, source); err != nil {
		return res, err
	}
	err := svc.st.WithTx(ctx, func(tx pgx.Tx) error {
		if err := q.LockSymbolBars(ctx, tx, store.LockSymbolBarsParams{Source: source, Symbol: symbol}); err != nil {
			return fmt.Errorf("lock symbol: %w", err)
		}
		if err := checkZone(ctx, tx, source, symbol, loc); err != nil {
			return err
		}
		if err := q.UpsertSymbol(ctx, tx, store.UpsertSymbolParams{Source: source, Symbol: symbol, Name: name, Timezone: loc.String(), ImportedBy: by}); err != nil {
			return fmt.Errorf("register symbol: %w", err)
		}
		return storeBars(ctx, tx, source, symbol, tf, bars, &res)
	})
	if err != nil {
		res = ImportResult{Source: source, Symbol: symbol, Timeframe: tf, Received: len(bars)}
		if _, ok := asApp(err); ok {
			return res, err
		}
		return res, fmt.Errorf("import %s/%s: %w", source, symbol, err)
	}
	res.Unchanged = len(bars) - res.Inserted - res.Updated
	res.First = bars[0].Time.Format(timeLayout(tf))
	res.Last = bars[len(bars)-1].Time.Format(timeLayout(tf))
	return res, nil
}

// ImportZone is the time zone an import of symbol reads times of day without an offset in:
// name when given (a 400 when it is not an IANA zone), else the symbol's, UTC for a new one.
func (svc *Service) ImportZone(ctx context.Context, source, symbol, name string) (*time.Location, error) {
	if name != "" {
		return LoadZone(name)
	}
	loc, found, err := svc.storedZone(ctx, source, symbol)
	if err != nil || !found {
		return time.UTC, err
	}
	return loc, nil
}

// checkZone refuses to store bars read in loc beside bars read in another zone.
func checkZone(ctx context.Context, tx pgx.Tx, source, symbol string, loc *time.Location) error {
	stored, err := q.SymbolTimezone(ctx, tx, store.SymbolTimezoneParams{Source: source, Symbol: symbol})
	if errors.Is(err, store.ErrNotFound) || err == nil && stored == loc.String() {
		return nil
	}
	if err != nil {
		return fmt.Errorf("time zone of %s/%s: %w", source, symbol, err)
	}
	has, err := q.HasAnyBars(ctx, tx, store.HasAnyBarsParams{Source: source, Symbol: symbol})
	if err != nil {
		return fmt.Errorf("bars of %s/%s: %w", source, symbol, err)
	}
	if has {
		return apperr.Conflict("The bars of %s/%s were read in time zone %s: import with timezone=%s (or none), or under another symbol",
			source, symbol, stored, stored)
	}
	return nil
}

// roundedTimes returns a copy of bars with times in UTC at PostgreSQL's precision
// (microseconds), so that two times that would be stored as one are reported as duplicates
// by checkBars rather than failing the COPY.
func roundedTimes(in []engine.Bar) []engine.Bar {
	bars := make([]engine.Bar, len(in))
	for i, b := range in {
		b.Time = b.Time.UTC().Truncate(time.Microsecond)
		bars[i] = b
	}
	return bars
}

// checkBars checks every bar, however it was parsed (ParseCSV, ParseJSON, a watched file,
// the import command): prices finite and greater than 0, high not below low, volume not
// negative, times within MinDay..MaxDay and strictly ascending.
func checkBars(bars []engine.Bar) error {
	for i, b := range bars {
		if msg := barProblem(bars, i); msg != "" {
			return apperr.Invalid("Invalid bar at index %d (%s): %s", i, b.Time.UTC().Format(time.RFC3339), msg)
		}
	}
	return nil
}

// barProblem is what is wrong with bars[i] by checkBars' rules; "" when nothing is.
func barProblem(bars []engine.Bar, i int) string {
	b := bars[i]
	for _, v := range [...]float64{b.Open, b.High, b.Low, b.Close} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "prices must be finite numbers"
		}
	}
	if b.High < b.Low {
		return fmt.Sprintf("high %v is below low %v", b.High, b.Low)
	}
	if name, v, ok := nonPositivePrice(b.Open, b.High, b.Low, b.Close); ok {
		return fmt.Sprintf("%s %v is not positive (prices must be greater than 0)", name, v)
	}
	switch {
	case b.Volume < 0:
		return fmt.Sprintf("volume %d is negative", b.Volume)
	case !InDateRange(b.Time):
		return fmt.Sprintf("the date is out of range (%s)", DateRangeText)
	case i > 0 && !b.Time.After(bars[i-1].Time):
		return "not after the previous bar's time (bars must be ascending without duplicates)"
	}
	return ""
}

// nonPositivePrice returns the first of open, high, low and close that is not greater than 0.
func nonPositivePrice(open, high, low, close float64) (name string, v float64, found bool) {
	for _, p := range [...]struct {
		n string
		v float64
	}{{"open", open}, {"high", high}, {"low", low}, {"close", close}} {
		if !(p.v > 0) {
			return p.n, p.v, true
		}
	}
	return "", 0, false
}

// storeBars writes ascending bars inside tx (which holds LockSymbolBars): the stretch that
// overlaps the stored bars of the timeframe is upserted, the rest COPYed. The bars written
// make the symbol's next version (versions.go); an import that writes none makes none.
func storeBars(ctx context.Context, tx pgx.Tx, source, symbol, tf string, bars []engine.Bar, res *ImportResult) error {
	latest, err := LatestVersion(ctx, tx, source, symbol)
	if err != nil {
		return err
	}
	version := latest + 1
	res.Version = latest
	var lo, hi int // bars[lo:hi] may collide with stored bars
	var appendedAfter time.Time
	first, err := q.FirstBarTime(ctx, tx, store.FirstBarTimeParams{Source: source, Symbol: symbol, Timeframe: tf})
	switch {
	case errors.Is(err, store.ErrNotFound): // nothing stored: no overlap
	case err != nil:
		return fmt.Errorf("first stored bar: %w", err)
	default:
		last, err := q.LastBarTime(ctx, tx, store.LastBarTimeParams{Source: source, Symbol: symbol, Timeframe: tf})
		if err != nil {
			return fmt.Errorf("last stored bar: %w", err)
		}
		lo = sort.Search(len(bars), func(i int) bool { return !bars[i].Time.Before(first) })
		hi = sort.Search(len(bars), func(i int) bool { return bars[i].Time.After(last) })
		if hi < lo {
			hi = lo
		}
		if hi == 0 { // every bar after the stored ones
			appendedAfter = last
		}
	}
	var up ImportResult
	firstChanged, err := upsertBars(ctx, tx, source, symbol, tf, version, bars[lo:hi], &up)
	if err != nil {
		return err
	}
	var copied int64
	if fresh := len(bars) - (hi - lo); fresh > 0 {
		src := &copySource{source: source, symbol: symbol, tf: tf, version: int32(version), parts: [][]engine.Bar{bars[:lo], bars[hi:]}}
		if copied, err = tx.CopyFrom(ctx, pgx.Identifier{"bars"}, barColumns, src); err != nil {
			return fmt.Errorf("copy bars: %w", err)
		}
		// The copied bars lie before and after the stored ones: the earliest is bars[0]
		// when any came before, else the first after.
		if lo > 0 {
			firstChanged = &bars[0].Time
		} else if firstChanged == nil {
			firstChanged = &bars[hi].Time
		}
	}
	res.Inserted += up.Inserted + int(copied)
	res.Updated += up.Updated
	if firstChanged == nil { // nothing changed: no version
		return nil
	}
	w := written{bars: bars, changed: int64(up.Updated), added: int64(up.Inserted) + copied, first: *firstChanged, appendedAfter: appendedAfter}
	if err := newVersion(ctx, tx, source, symbol, tf, version, w); err != nil {
		return err
	}
	res.Version = version
	return nil
}

// barColumns are the bars table's columns in copySource's order.
var barColumns = []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume", "since_version"}

// copySource feeds bars to COPY without allocating per row: Values hands out pointers into
// the bars and one reused slice, which pgx encodes before asking for the next row.
type copySource struct {
	source, symbol, tf string
	version            int32
	parts              [][]engine.Bar
	cur                *engine.Bar
	row                [10]any
}

func (s *copySource) Next() bool {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return false
	}
	s.cur = &s.parts[0][0]
	s.parts[0] = s.parts[0][1:]
	return true
}

func (s *copySource) Values() ([]any, error) {
	b := s.cur
	s.row = [10]any{&s.source, &s.symbol, &s.tf, &b.Time, &b.Open, &b.High, &b.Low, &b.Close, &b.Volume, &s.version}
	return s.row[:], nil
}

func (s *copySource) Err() error { return nil }

// upsertBars inserts or updates bars that may already be stored, in chunks, as of version;
// first is the earliest bar it inserted or changed, nil when none.
func upsertBars(ctx context.Context, db store.DBTX, source, symbol, tf string, version int, bars []engine.Bar, res *ImportResult) (first *time.Time, err error) {
	n := min(len(bars), upsertChunk)
	p := store.UpsertBarsParams{
		Source: source, Symbol: symbol, Timeframe: tf, Version: int32(version),
		Ts: make([]time.Time, 0, n), Open: make([]float64, 0, n), High: make([]float64, 0, n),
		Low: make([]float64, 0, n), Close: make([]float64, 0, n), Volume: make([]int64, 0, n),
	}
	for lo := 0; lo < len(bars); lo += upsertChunk {
		chunk := bars[lo:min(lo+upsertChunk, len(bars))]
		p.Ts, p.Open, p.High, p.Low, p.Close, p.Volume = p.Ts[:0], p.Open[:0], p.High[:0], p.Low[:0], p.Close[:0], p.Volume[:0]
		for _, b := range chunk {
			p.Ts = append(p.Ts, b.Time)
			p.Open = append(p.Open, b.Open)
			p.High = append(p.High, b.High)
			p.Low = append(p.Low, b.Low)
			p.Close = append(p.Close, b.Close)
			p.Volume = append(p.Volume, b.Volume)
		}
		row, err := q.UpsertBars(ctx, db, p)
		if err != nil {
			return nil, fmt.Errorf("upsert bars: %w", err)
		}
		res.Inserted += int(row.Inserted)
		res.Updated += int(row.Updated)
		if t, ok := row.FirstTs.(time.Time); ok && first == nil { // chunks ascend: the first chunk's is the earliest
			t = t.UTC()
			first = &t
		}
	}
	return first, nil
}

// MaxReportedLines caps the bad lines a failed CSV import names.
const MaxReportedLines = 50

// ParseCSV reads bars in the generic date,open,high,low,close,volume layout or Yahoo's
// layout, times of day without an offset in loc. A file with bad rows is a 400 naming the
// first and listing every bad line (up to MaxReportedLines) with its reason, so a user
// fixes the file once rather than once per line.
func ParseCSV(r io.Reader, loc *time.Location) ([]engine.Bar, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, apperr.Invalid("Invalid CSV: %v", err)
	}
	bars, err := barcsv.ParseIn(bytes.NewReader(data), 4096, loc)
	if err == nil {
		// The rows read, checked as the import checks them, each bad one by its line.
		if err := badBars(data, bars); err != nil {
			return nil, err
		}
		return bars, nil
	}
	var pe *barcsv.Error
	if !errors.As(err, &pe) {
		return nil, apperr.Invalid("Invalid CSV: %v", err)
	}
	return nil, linesError(badLines(data, loc, pe))
}

// badBars is the 400 listing every bar of a parsed CSV that the import would refuse (a date
// out of range, say), each by its line in the file rather than its index among the bars;
// nil when none is. data's rows are its lines after the header that are not blank, as the
// parser reads them.
func badBars(data []byte, bars []engine.Bar) error {
	var bad []apperr.LineError
	for i := range bars {
		if msg := barProblem(bars, i); msg != "" {
			bad = append(bad, apperr.LineError{Line: i, Message: msg})
			if len(bad) == MaxReportedLines {
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	rows, header := make([]int, 0, len(bars)), false
	for n, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if !header {
			header = true
			continue
		}
		rows = append(rows, n+1)
	}
	if len(rows) != len(bars) { // cannot happen: then the bars' indexes are all there is
		return checkBars(bars)
	}
	for i := range bad {
		bad[i].Line = rows[bad[i].Line]
	}
	return linesError(bad)
}

// linesError is the 400 of a CSV with bad lines: the first named in the detail, every one
// (up to MaxReportedLines) in lines.
func linesError(bad []apperr.LineError) error {
	detail := fmt.Sprintf("Invalid CSV at line %d: %s", bad[0].Line, bad[0].Message)
	switch n := len(bad); {
	case n == MaxReportedLines:
		detail += fmt.Sprintf(" (and more: the first %d bad lines are listed)", n)
	case n > 1:
		detail += fmt.Sprintf(" (%d bad lines in all)", n)
	}
	return &apperr.Error{Kind: apperr.KindInvalid, Detail: detail, Lines: bad}
}

// badLines lists the bad lines of data, the first being first. The parser stops at a bad
// line, so the rest is parsed again under the header, from the good line before the bad one
// (so the next row is still checked against it for order) then on from the line after it,
// up to MaxReportedLines. Only for a failed import, where the cost does not matter.
func badLines(data []byte, loc *time.Location, first *barcsv.Error) []apperr.LineError {
	// starts[i] is the offset of the file's line i+1
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	line := func(i int) []byte { // line i (0-based) with its newline
		if i+1 < len(starts) {
			return data[starts[i]:starts[i+1]]
		}
		return append(data[starts[i]:len(data):len(data)], '\n')
	}
	out := []apperr.LineError{{Line: first.Line, Message: first.Msg}}
	bad := first.Line - 1 // 0-based
	prev := bad - 1       // the last good row before the bad one, or the header
	pe := first
	for len(out) < MaxReportedLines && bad > 0 && bad+1 < len(starts) {
		in := [][]byte{line(0)}
		if prev > 0 {
			in = append(in, line(prev))
		}
		in = append(in, data[starts[bad+1]:])
		_, err := barcsv.ParseIn(bytes.NewReader(bytes.Join(in, nil)), 4096, loc)
		if !errors.As(err, &pe) || pe.Line < 2 {
			return out
		}
		// back from the stream's numbering to the file's
		rel := pe.Line - 2 // 0-based data row of the stream
		if prev > 0 {
			rel--
		}
		if rel < 0 { // the good row itself: cannot happen, but never loop on it
			return out
		}
		if rel > 0 { // rows between the two bad ones parsed: the last of them is good
			prev = bad + rel
		}
		bad = bad + 1 + rel
		out = append(out, apperr.LineError{Line: bad + 1, Message: pe.Msg})
	}
	return out
}

// jsonBar is one bar of a JSON import; the time may be called datetime, date, time or ts.
type jsonBar struct {
	Datetime *string  `json:"datetime"`
	Date     *string  `json:"date"`
	Time     *string  `json:"time"`
	Ts       *string  `json:"ts"`
	Open     *float64 `json:"open"`
	High     *float64 `json:"high"`
	Low      *float64 `json:"low"`
	Close    *float64 `json:"close"`
	Volume   *float64 `json:"volume"`
}

// ParseJSON reads a JSON array of bars, or an object {"bars": [...]}, each bar
// {datetime, open, high, low, close, volume}. A bad bar is a 400 naming its index: prices
// must be finite and greater than 0, datetimes from MinDay to MaxDay and ascending. Times of
// day without an offset are loc's.
func ParseJSON(r io.Reader, loc *time.Location) ([]engine.Bar, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, apperr.Invalid("Invalid JSON bars: %v", err)
	}
	data = bytes.TrimSpace(data)
	var raw []jsonBar
	if len(data) > 0 && data[0] == '{' {
		var wrap struct {
			Bars []jsonBar `json:"bars"`
		}
		if err := json.Unmarshal(data, &wrap); err != nil {
			return nil, apperr.Invalid("Invalid JSON bars: %v", err)
		}
		raw = wrap.Bars
	} else if err := json.Unmarshal(data, &raw); err != nil {
		return nil, apperr.Invalid("Invalid JSON bars: %v (expected an array of {datetime, open, high, low, close, volume})", err)
	}
	bars := make([]engine.Bar, len(raw))
	for i, b := range raw {
		bad := func(format string, a ...any) error {
			return apperr.Invalid("Invalid bar at index %d: %s", i, fmt.Sprintf(format, a...))
		}
		var ts *string
		for _, c := range []*string{b.Datetime, b.Date, b.Time, b.Ts} {
			if c != nil {
				ts = c
				break
			}
		}
		if ts == nil {
			return nil, bad("missing datetime")
		}
		t, err := barcsv.ParseTimeIn(strings.TrimSpace(*ts), loc)
		if err != nil {
			return nil, bad("%v", err)
		}
		if !InDateRange(t) {
			return nil, bad("datetime %s is out of range (%s)", *ts, DateRangeText)
		}
		for _, f := range []struct {
			n string
			v *float64
		}{{"open", b.Open}, {"high", b.High}, {"low", b.Low}, {"close", b.Close}} {
			if f.v == nil {
				return nil, bad("missing %s", f.n)
			}
			if math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
				return nil, bad("%s is not a finite number", f.n)
			}
		}
		vol := int64(0)
		if b.Volume != nil {
			if *b.Volume < 0 || *b.Volume > math.MaxInt64/2 {
				return nil, bad("volume %v is out of range", *b.Volume)
			}
			vol = int64(*b.Volume)
		}
		if *b.High < *b.Low {
			return nil, bad("high %v is below low %v", *b.High, *b.Low)
		}
		if name, v, ok := nonPositivePrice(*b.Open, *b.High, *b.Low, *b.Close); ok {
			return nil, bad("%s %v is not positive (prices must be greater than 0)", name, v)
		}
		if i > 0 {
			switch prev := bars[i-1].Time; {
			case t.Equal(prev):
				return nil, bad("duplicate datetime %s", *ts)
			case t.Before(prev):
				return nil, bad("datetime %s is before the previous bar's", *ts)
			}
		}
		bars[i] = engine.Bar{Time: t, Open: *b.Open, High: *b.High, Low: *b.Low, Close: *b.Close, Volume: vol}
	}
	return bars, nil
}

// timeLayout is how bar times of tf are written: dates for daily and coarser bars.
func timeLayout(tf string) string {
	if minutes[tf] >= minutes["1d"] {
		return "2006-01-02"
	}
	return "2006-01-02T15:04:05Z07:00"
}

// FormatBarTime writes a bar time of timeframe tf: YYYY-MM-DD for daily and coarser
// bars, RFC 3339 otherwise.
func FormatBarTime(t time.Time, tf string) string { return t.UTC().Format(timeLayout(tf)) }
