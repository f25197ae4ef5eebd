package tabular

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/backtestd/backtestd/internal/engine"
)

// MaxParquetBars is the most rows a bars file may hold: about what the largest CSV import
// (128 MiB) can, so a small file that unpacks to billions of rows is refused before it is
// read.
const MaxParquetBars = 8_000_000

// BarProblem is a row of a bars file that holds no bar: a null or a volume that is not a
// whole number. Row is 1-based.
type BarProblem struct {
	Row int
	Msg string
}

// timeKind is how a bars file writes its times.
type timeKind uint8

const (
	tsMillis timeKind = iota
	tsMicros
	tsNanos
	dateDays
)

// barColumn is where a bar field is in a bars file and how to read it.
type barColumn struct {
	name  string
	index int // leaf column; -1 when the file lacks it
	kind  parquet.Kind
	times timeKind
	local bool // a timestamp not adjusted to UTC: a wall clock, read in the symbol's zone
}

// ReadBars reads a Parquet bars file: a time column named datetime or date (also time or
// timestamp, as CSV), with a timestamp (milliseconds, microseconds or nanoseconds) or date
// logical type; open, high, low and close of any integer or floating type; volume (optional,
// 0 without it) of an integer type or a float that is whole. A timestamp adjusted to UTC is
// that instant; one that is not is a wall clock read in loc; a date stays a date (midnight
// UTC). Columns that are not these (but adj close and openinterest, as CSV, and pandas's
// __index_level_N__) are refused. The error is about the whole file (missing or mistyped
// columns, too many rows, a file that is not Parquet); problems lists the rows that hold no
// bar, in order, those bars left zero. The bars' other rules (prices positive, high not
// below low, times ascending) are the importer's.
func ReadBars(data []byte, loc *time.Location) (bars []engine.Bar, problems []BarProblem, err error) {
	// A corrupt file can make the library panic where it trusts the file's own lengths.
	defer func() {
		if p := recover(); p != nil {
			bars, problems, err = nil, nil, fmt.Errorf("not a readable Parquet file (%v)", p)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, fmt.Errorf("not a Parquet file: %w", err)
	}
	cols, err := barColumns(f.Schema())
	if err != nil {
		return nil, nil, err
	}
	if n := f.NumRows(); n > MaxParquetBars {
		return nil, nil, fmt.Errorf("%d rows: the most a file may hold is %d", n, MaxParquetBars)
	}
	bars = make([]engine.Bar, 0, f.NumRows())
	r := parquet.NewReader(bytes.NewReader(data))
	defer r.Close()
	buf := make([]parquet.Row, 1024)
	for {
		n, rerr := r.ReadRows(buf)
		for _, row := range buf[:n] {
			bar, msg := barOf(row, cols, loc)
			if msg != "" {
				problems = append(problems, BarProblem{Row: len(bars) + 1, Msg: msg})
			}
			bars = append(bars, bar)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, nil, fmt.Errorf("read rows: %w", rerr)
		}
		if n == 0 {
			break
		}
	}
	return bars, problems, nil
}

// barColumns finds the bar fields among the file's columns and checks their types.
func barColumns(s *parquet.Schema) ([6]barColumn, error) {
	cols := [6]barColumn{{name: "datetime"}, {name: "open"}, {name: "high"}, {name: "low"}, {name: "close"}, {name: "volume"}}
	for i := range cols {
		cols[i].index = -1
	}
	for i, f := range s.Fields() {
		name := strings.ToLower(strings.TrimSpace(f.Name()))
		slot := -1
		switch name {
		case "date", "datetime", "time", "timestamp":
			slot = 0
		case "open":
			slot = 1
		case "high":
			slot = 2
		case "low":
			slot = 3
		case "close":
			slot = 4
		case "volume":
			slot = 5
		case "adj close", "adj_close", "adjclose", "openinterest", "open_interest":
		default:
			if !strings.HasPrefix(name, "__index_level_") {
				return cols, fmt.Errorf("unknown column %q (expected datetime or date, open, high, low, close, volume)", f.Name())
			}
		}
		if slot < 0 {
			continue
		}
		if !f.Leaf() || f.Repeated() {
			return cols, fmt.Errorf("column %q is a group or a list; want a plain value", f.Name())
		}
		if cols[slot].index >= 0 {
			return cols, fmt.Errorf("two columns for %s", cols[slot].name)
		}
		cols[slot].index, cols[slot].kind = i, f.Type().Kind()
		if slot == 0 {
			if err := timeColumn(&cols[0], f); err != nil {
				return cols, err
			}
		} else if err := numberColumn(cols[slot], f); err != nil {
			return cols, err
		}
	}
	var missing []string
	for _, c := range cols[:5] {
		if c.index < 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return cols, fmt.Errorf("missing column(s) %s", strings.Join(missing, ", "))
	}
	// Leaf columns are numbered as the fields are when none is a group, as checked above
	// for the bar fields; a group among the others would shift them.
	for _, f := range s.Fields() {
		if !f.Leaf() {
			return cols, fmt.Errorf("column %q is a group; bars files are flat", f.Name())
		}
	}
	return cols, nil
}

func timeColumn(c *barColumn, f parquet.Field) error {
	t := f.Type()
	lt := t.LogicalType()
	switch v := logicalValue(lt).(type) {
	case *format.TimestampType:
		c.local = !v.IsAdjustedToUTC
		switch v.Unit.Value.(type) {
		case *format.MilliSeconds:
			c.times = tsMillis
		case *format.MicroSeconds:
			c.times = tsMicros
		case *format.NanoSeconds:
			c.times = tsNanos
		default:
			return fmt.Errorf("column %q: a timestamp of unit %s", f.Name(), &v.Unit)
		}
		if c.kind == parquet.Int64 {
			return nil
		}
	case *format.DateType:
		c.times = dateDays
		if c.kind == parquet.Int32 {
			return nil
		}
	case nil:
		if ct := t.ConvertedType(); ct != nil {
			switch *ct {
			case deprecated.TimestampMillis:
				c.times = tsMillis
				return nil
			case deprecated.TimestampMicros:
				c.times = tsMicros
				return nil
			case deprecated.Date:
				c.times = dateDays
				return nil
			}
		}
	}
	what := t.String()
	if lt != nil && lt.Value != nil {
		what = lt.String()
	}
	return fmt.Errorf("column %q has type %s; want a timestamp or a date", f.Name(), what)
}

func logicalValue(lt *format.LogicalType) any {
	if lt == nil {
		return nil
	}
	return lt.Value
}

func numberColumn(c barColumn, f parquet.Field) error {
	t := f.Type()
	switch c.kind {
	case parquet.Double, parquet.Float, parquet.Int32, parquet.Int64:
		switch logicalValue(t.LogicalType()).(type) {
		case nil, *format.IntType:
			return nil
		}
	}
	what := t.String()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		what = lt.String()
	}
	return fmt.Errorf("column %q has type %s; want a number (integer, float or double)", f.Name(), what)
}

// barOf is row's bar, or what keeps it from being one.
func barOf(row parquet.Row, cols [6]barColumn, loc *time.Location) (engine.Bar, string) {
	var v [6]parquet.Value
	for _, x := range row {
		for i := range cols {
			if cols[i].index == x.Column() {
				v[i] = x
			}
		}
	}
	var bar engine.Bar
	for i, c := range cols {
		if c.index < 0 {
			continue
		}
		if v[i].IsNull() {
			return bar, c.name + " is null"
		}
	}
	switch t := v[0]; cols[0].times {
	case dateDays:
		bar.Time = time.Unix(int64(t.Int32())*86400, 0).UTC()
	case tsMillis:
		bar.Time = time.UnixMilli(t.Int64()).UTC()
	case tsMicros:
		bar.Time = time.UnixMicro(t.Int64()).UTC()
	case tsNanos:
		// PostgreSQL keeps microseconds, as CSV's RFC 3339 times are cut.
		bar.Time = time.Unix(0, t.Int64()).UTC().Truncate(time.Microsecond)
	}
	if cols[0].local && cols[0].times != dateDays && loc != time.UTC {
		w := bar.Time
		bar.Time = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UTC()
		if l := bar.Time.In(loc); l.Hour() != w.Hour() || l.Minute() != w.Minute() {
			return bar, fmt.Sprintf("time %s does not exist in %s (the clocks skip it)", w.Format("2006-01-02 15:04:05"), loc)
		}
	}
	num := func(i int) float64 {
		switch cols[i].kind {
		case parquet.Double:
			return v[i].Double()
		case parquet.Float:
			return float64(v[i].Float())
		case parquet.Int32:
			return float64(v[i].Int32())
		}
		return float64(v[i].Int64())
	}
	bar.Open, bar.High, bar.Low, bar.Close = num(1), num(2), num(3), num(4)
	if cols[5].index >= 0 {
		switch cols[5].kind {
		case parquet.Int32:
			bar.Volume = int64(v[5].Int32())
		case parquet.Int64:
			bar.Volume = v[5].Int64()
		default:
			f := num(5)
			if f != math.Trunc(f) || math.Abs(f) > 1<<62 {
				return bar, fmt.Sprintf("volume %v is not a whole number", f)
			}
			bar.Volume = int64(f)
		}
	}
	return bar, ""
}

// WriteBars writes bars as a Parquet bars file: datetime (a UTC timestamp in microseconds,
// or a date where every bar is at midnight UTC), open, high, low, close (doubles) and
// volume (a 64-bit integer), the columns ReadBars reads.
func WriteBars(w io.Writer, bars []engine.Bar) error {
	timeCol := Column{Name: "datetime", Kind: Time, Cell: func(i int) any { return bars[i].Time }}
	dates := allDates(timeCol, len(bars))
	if dates {
		timeCol = Column{Name: "date", Kind: Date, Cell: timeCol.Cell}
	}
	f := func(name string, get func(b *engine.Bar) float64) Column {
		return Column{Name: name, Kind: Float, Cell: func(i int) any { return get(&bars[i]) }}
	}
	return WriteParquet(w, Table{Rows: len(bars), Columns: []Column{
		timeCol,
		f("open", func(b *engine.Bar) float64 { return b.Open }),
		f("high", func(b *engine.Bar) float64 { return b.High }),
		f("low", func(b *engine.Bar) float64 { return b.Low }),
		f("close", func(b *engine.Bar) float64 { return b.Close }),
		{Name: "volume", Kind: Int, Cell: func(i int) any { return bars[i].Volume }},
	}})
}
