package barcsv

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	in := "date,open,high,low,close,volume\n2020-01-02,1.5,2,1,1.75,100\n2020-01-03,1.75,2.5,1.5,2,0\n"
	bars, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 2 || bars[0].Open != 1.5 || bars[0].Volume != 100 || !bars[1].Time.Equal(time.Date(2020, 1, 3, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("%+v", bars)
	}
}

func TestParseYahooAndIntraday(t *testing.T) {
	t.Parallel()
	in := "Date,Open,High,Low,Close,Adj Close,Volume\r\n2020-01-02 09:30,10,11,9,10.5,5.25,7\r\n2020-01-02T09:31:00Z,10.5,11,10,10.75,5.3,8\r\n"
	bars, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 2 || bars[0].Close != 10.5 || bars[1].Time.Minute() != 31 {
		t.Fatalf("%+v", bars)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	head := "date,open,high,low,close,volume\n"
	tests := []struct {
		in   string
		line int
		msg  string
	}{
		{head + "2020-01-02,1,2,1,1,1\n2020-01-03,x,2,1,1,1\n", 3, `open "x" is not a number`},
		{head + "2020-01-02,10,9.5,10.1,10,1\n", 2, "high 9.5 is below low 10.1"},
		{head + "2020-01-02,1,2,1,1,1\n2020-01-02,1,2,1,1,1\n", 3, "duplicate date 2020-01-02"},
		{head + "2020-13-02,1,2,1,1,1\n", 2, "unparsable date"},
		{head + "2020-01-02,1,2,1\n", 2, "expected 6 fields, got 4"},
		{"when,open\n", 1, "unknown column"},
		{"", 1, "empty file"},
		{head + "2020-01-03,1,2,1,1,1\n2020-01-02,1,2,1,1,1\n", 3, "before the previous"},
		// Stored with microsecond precision, these two would be one bar.
		{head + "2020-01-02T10:00:00.0000001Z,1,2,1,1,1\n2020-01-02T10:00:00.0000002Z,1,2,1,1,1\n", 3, "duplicate date"},
	}
	for _, tc := range tests {
		_, err := Parse(strings.NewReader(tc.in))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: want *Error, got %v", tc.in, err)
			continue
		}
		if pe.Line != tc.line || !strings.Contains(pe.Error(), tc.msg) || !strings.HasPrefix(pe.Error(), fmt.Sprintf("line %d: ", tc.line)) {
			t.Errorf("%q: got %q (line %d), want line %d %q", tc.in, pe.Error(), pe.Line, tc.line, tc.msg)
		}
	}
}

func bigCSV(n int) string {
	var b strings.Builder
	b.WriteString("date,open,high,low,close,volume\n")
	t := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s,%.6f,%.6f,%.6f,%.6f,%d\n", t.AddDate(0, 0, i).Format("2006-01-02"), 10.5+float64(i%7), 12.25+float64(i%7), 9.125, 11.0, 1000+i)
	}
	return b.String()
}

func TestParseLarge(t *testing.T) {
	t.Parallel()
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	bars, err := Parse(strings.NewReader(bigCSV(n)))
	if err != nil || len(bars) != n {
		t.Fatalf("%d bars, %v", len(bars), err)
	}
}

func BenchmarkParse1M(b *testing.B) {
	s := bigCSV(1_000_000)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(strings.NewReader(s)); err != nil {
			b.Fatal(err)
		}
	}
}

// Times without an offset are read in the zone given; a time the clocks skip is refused.
func TestParseTimeIn(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want, err string }{
		{"2024-03-08 09:30", "2024-03-08T14:30:00Z", ""},
		{"2024-03-11T09:30:00", "2024-03-11T13:30:00Z", ""},
		{"2024-03-11 9:30", "2024-03-11T13:30:00Z", ""},
		{"2024-03-11", "2024-03-11T00:00:00Z", ""},
		{"2024-03-11T09:30:00+01:00", "2024-03-11T08:30:00Z", ""},
		{"2024-03-10 02:30", "", `time "2024-03-10 02:30" does not exist in America/New_York`},
	} {
		got, err := ParseTimeIn(c.in, ny)
		switch {
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: %v, %v; want error %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got.Format(time.RFC3339) != c.want):
			t.Errorf("%s: %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}
