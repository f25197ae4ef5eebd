package tabular

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/backtestd/backtestd/internal/engine"
)

func TestBarsRoundTrip(t *testing.T) {
	t.Parallel()
	daily := engine.RandomWalk(300, 7)
	intraday := make([]engine.Bar, 50)
	for i := range intraday {
		intraday[i] = engine.Bar{Time: time.Date(2024, 3, 1, 14, 30, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
			Open: 10 + float64(i)/8, High: 11 + float64(i)/8, Low: 9.5 + float64(i)/8, Close: 10.25 + float64(i)/8, Volume: int64(1000 + i)}
	}
	for name, bars := range map[string][]engine.Bar{"daily": daily, "intraday": intraday} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := WriteBars(&b, bars); err != nil {
				t.Fatal(err)
			}
			got, problems, err := ReadBars(b.Bytes(), time.UTC)
			if err != nil || len(problems) > 0 {
				t.Fatalf("read back: %v %v", err, problems)
			}
			if len(got) != len(bars) {
				t.Fatalf("%d bars back of %d", len(got), len(bars))
			}
			for i := range bars {
				if !got[i].Time.Equal(bars[i].Time) || got[i].Open != bars[i].Open || got[i].High != bars[i].High ||
					got[i].Low != bars[i].Low || got[i].Close != bars[i].Close || got[i].Volume != bars[i].Volume {
					t.Fatalf("bar %d: %+v, wrote %+v", i, got[i], bars[i])
				}
			}
		})
	}
	// Daily bars are written with a date column, intraday ones with a timestamp.
	var b bytes.Buffer
	if err := WriteBars(&b, daily); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Schema().Fields()[0]; c.Name() != "date" || c.Type().LogicalType().String() != "DATE" {
		t.Errorf("daily bars' time column %s of %s, want a date", c.Name(), c.Type().LogicalType())
	}
}

// TestBarsFromArrow reads files written by Apache Arrow's Go module (testdata/parquet,
// made by testdata/parquet/arrowgen): millisecond timestamps with float32 prices and int32
// volumes, and date32 dates with doubles and int64 volumes.
func TestBarsFromArrow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file  string
		first engine.Bar
		n     int
	}{
		{"arrow_intraday.parquet", engine.Bar{Time: time.Date(2024, 3, 1, 14, 30, 0, 0, time.UTC), Open: 100, High: 100.5, Low: 99.5, Close: 100.25, Volume: 1000}, 5},
		{"arrow_daily.parquet", engine.Bar{Time: time.Date(2016, 7, 13, 0, 0, 0, 0, time.UTC), Open: 50.5, High: 52, Low: 49.75, Close: 51.125, Volume: 250000}, 3},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "parquet", c.file))
			if err != nil {
				t.Fatal(err)
			}
			bars, problems, err := ReadBars(data, time.UTC)
			if err != nil || len(problems) > 0 {
				t.Fatalf("%v %v", err, problems)
			}
			if len(bars) != c.n || bars[0] != c.first {
				t.Fatalf("%d bars, first %+v; want %d, first %+v", len(bars), bars[0], c.n, c.first)
			}
			for i := 1; i < len(bars); i++ {
				if !bars[i].Time.After(bars[i-1].Time) {
					t.Fatalf("bar %d at %v is not after %v", i, bars[i].Time, bars[i-1].Time)
				}
			}
		})
	}
}

// writeTable writes columns as a Parquet file for the bad-input cases.
func writeTable(t *testing.T, tb Table) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteParquet(&b, tb); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadBarsRefuses(t *testing.T) {
	t.Parallel()
	day := func(i int) any { return time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC) }
	price := func(i int) any { return 10.0 }
	cols := func(replace map[string]Column, drop ...string) Table {
		base := []Column{{Name: "date", Kind: Date, Cell: day}, {Name: "open", Kind: Float, Cell: price}, {Name: "high", Kind: Float, Cell: price},
			{Name: "low", Kind: Float, Cell: price}, {Name: "close", Kind: Float, Cell: price}, {Name: "volume", Kind: Int, Cell: func(int) any { return int64(5) }}}
		var out []Column
		for _, c := range base {
			if r, ok := replace[c.Name]; ok {
				c = r
			}
			if !strings.Contains(strings.Join(drop, ","), c.Name) {
				out = append(out, c)
			}
		}
		return Table{Rows: 3, Columns: out}
	}
	good := writeTable(t, cols(nil))
	for _, c := range []struct {
		name string
		data []byte
		err  string // the file's error, or
		rows string // the rows' problems
	}{
		{"missing columns", writeTable(t, cols(nil, "high", "close")), "missing column(s) high, close", ""},
		{"a text time", writeTable(t, cols(map[string]Column{"date": {Name: "date", Kind: String, Cell: func(int) any { return "2020-01-01" }}})), `column "date" has type STRING; want a timestamp or a date`, ""},
		{"a text price", writeTable(t, cols(map[string]Column{"open": {Name: "open", Kind: String, Cell: func(int) any { return "10" }}})), `column "open" has type STRING; want a number`, ""},
		{"a boolean volume", writeTable(t, cols(map[string]Column{"volume": {Name: "volume", Kind: Bool, Cell: func(int) any { return true }}})), `column "volume" has type BOOLEAN`, ""},
		{"an unknown column", writeTable(t, cols(map[string]Column{"volume": {Name: "ticker", Kind: String, Cell: func(int) any { return "X" }}})), `unknown column "ticker"`, ""},
		{"not Parquet", []byte("date,open,high,low,close\n2020-01-01,1,1,1,1\n"), "not a Parquet file", ""},
		{"cut short", good[:len(good)/2], "not a Parquet file", ""},
		{"a corrupt page", corrupt(good), "", ""},
		{"nulls and a fractional volume", writeTable(t, cols(map[string]Column{
			"close":  {Name: "close", Kind: Float, Nullable: true, Cell: func(i int) any { return map[bool]any{true: nil, false: 10.0}[i == 1] }},
			"volume": {Name: "volume", Kind: Float, Cell: func(i int) any { return []float64{1, 2, 2.5}[i] }},
		})), "", "2: close is null; 3: volume 2.5 is not a whole number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, problems, err := ReadBars(c.data, time.UTC)
			var rows []string
			for _, p := range problems {
				rows = append(rows, strconv.Itoa(p.Row)+": "+p.Msg)
			}
			switch {
			case c.name == "a corrupt page":
				// Some error, never a panic or a silent success with other values.
				if err == nil && len(problems) == 0 {
					bars, _, _ := ReadBars(c.data, time.UTC)
					orig, _, _ := ReadBars(good, time.UTC)
					t.Fatalf("a corrupt file read without an error: %v (the file's own %v)", bars, orig)
				}
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
			default:
				if err != nil || strings.Join(rows, "; ") != c.rows {
					t.Fatalf("err %v, rows %q; want rows %q", err, rows, c.rows)
				}
			}
		})
	}
}

// corrupt flips bytes in the middle of a file's column data.
func corrupt(b []byte) []byte {
	out := bytes.Clone(b)
	for i := 8; i < len(out)/2; i += 7 {
		out[i] ^= 0x5a
	}
	return out
}
