// Package tabular writes the notebook-ready tables (a result's trades, executions, equity
// curve and statistics, a study's combinations) as plain CSV or as Parquet, and reads and
// writes bars as Parquet. It owns the column types and the Parquet schema rules, so a table
// reads the same in both formats: one header row of the column names, times as timestamps.
package tabular

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/backtestd/backtestd/internal/csvsafe"
)

// Kind is a column's type.
type Kind uint8

// Column kinds. Parquet writes Time as a timestamp (microseconds, UTC), Float as a double,
// Int as a 64-bit integer, String as UTF-8 text, Bool as a boolean, Date (a time.Time at
// midnight UTC) as a date.
const (
	Time Kind = iota
	Float
	Int
	String
	Bool
	Date
)

// Column is one typed column of a Table.
type Column struct {
	Name string
	Kind Kind
	// Nullable columns may hold nil (Parquet null, an empty CSV cell); others never do.
	Nullable bool
	// Cell is row i's value: a time.Time, float64, int64, string or bool as Kind says, or
	// nil where Nullable. A float that is NaN or infinite is written as NaN in Parquet and
	// as an empty cell in CSV, which pandas reads as NaN too.
	Cell func(i int) any
}

// Table is a table of Rows rows, read column by column: its cells are asked for as they
// are written, so a long equity curve is never copied whole.
type Table struct {
	Columns []Column
	Rows    int
}

// Formats are the formats a Table is written in.
var Formats = []string{"csv", "parquet"}

// Content types of the formats.
const (
	CSVContentType     = "text/csv; charset=utf-8"
	ParquetContentType = "application/vnd.apache.parquet"
)

// ContentType is format's media type.
func ContentType(format string) string {
	if format == "parquet" {
		return ParquetContentType
	}
	return CSVContentType
}

// Write writes t to w as format ("csv" or "parquet").
func Write(w io.Writer, t Table, format string) error {
	switch format {
	case "csv":
		return WriteCSV(w, t)
	case "parquet":
		return WriteParquet(w, t)
	}
	return fmt.Errorf("tabular: unknown format %q", format)
}

// WriteCSV writes t as CSV: one header row of the column names, then one row per row. A
// Time column whose times are all midnight UTC is written as dates (YYYY-MM-DD), any other
// as RFC 3339, so every cell of a column has one layout. Text that a spreadsheet would
// evaluate is written as text (csvsafe).
func WriteCSV(w io.Writer, t Table) error {
	cw := csvsafe.NewWriter(w)
	header := make([]string, len(t.Columns))
	dates := make([]bool, len(t.Columns))
	for c, col := range t.Columns {
		header[c] = col.Name
		dates[c] = col.Kind == Date || col.Kind == Time && allDates(col, t.Rows)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(t.Columns))
	for i := range t.Rows {
		for c, col := range t.Columns {
			row[c] = csvCell(col.Cell(i), dates[c])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
		if i%4096 == 4095 {
			if cw.Flush(); cw.Error() != nil {
				return cw.Error()
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func allDates(col Column, rows int) bool {
	for i := range rows {
		if t, ok := col.Cell(i).(time.Time); ok {
			if t = t.UTC(); t != t.Truncate(24*time.Hour) {
				return false
			}
		}
	}
	return true
}

func csvCell(v any, date bool) string {
	switch v := v.(type) {
	case nil:
		return ""
	case time.Time:
		if date {
			return v.UTC().Format(time.DateOnly)
		}
		return v.UTC().Format(time.RFC3339Nano)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	}
	panic(fmt.Sprintf("tabular: cell of type %T", v))
}
