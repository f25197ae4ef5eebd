package barcsv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
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

func TestParseQuoted(t *testing.T) {
	t.Parallel()
	// As spreadsheets and jq's @csv write it: quoted header and dates, bare numbers.
	in := "\"Date\",\"Open\",\"High\",\"Low\",\"Close\",\"Volume\"\n\"2020-01-02\",1.5,2,1,\"1.75\",100\n"
	bars, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 1 || bars[0].Close != 1.75 || bars[0].Volume != 100 || !bars[0].Time.Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)) {
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
		{head + "2020-01-02,1,2,1,1,1\n2020-01-03,-1,2,1,1,1\n", 3, "open -1 is not positive"},
		{head + "2020-01-02,1,2,1,0,1\n", 2, "close 0 is not positive"},
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

// TestParseFilePieces checks that a file parsed in pieces gives what one pass gives, the
// same bars or the same error, wherever the pieces start.
func TestParseFilePieces(t *testing.T) {
	var rows strings.Builder
	day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 40 {
		fmt.Fprintf(&rows, "%s,%d.5,%d.75,%d.25,%d.5,%d\n", day.AddDate(0, 0, i).Format("2006-01-02"), 10+i, 11+i, 9+i, 10+i, 100*i)
	}
	good := rows.String()
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	swap := slices.Clone(lines)
	swap[20], swap[21] = swap[21], swap[20]
	dup := slices.Clone(lines)
	dup[25] = dup[24]
	bad := slices.Clone(lines)
	bad[30] = strings.Replace(bad[30], ".5,", "x,", 1)
	header := "date,open,high,low,close,volume\n"
	inputs := map[string]string{
		"good":         header + good,
		"no newline":   header + strings.TrimSuffix(good, "\n"),
		"crlf bom":     "\xef\xbb\xbf" + strings.ReplaceAll(header+good, "\n", "\r\n"),
		"blank lines":  "\n\n" + header + "\n" + strings.Join(lines[:15], "\n\n") + "\n\n\n" + strings.Join(lines[15:], "\n") + "\n\n",
		"out of order": header + strings.Join(swap, "\n") + "\n",
		"duplicate":    header + strings.Join(dup, "\n") + "\n",
		"not a number": header + strings.Join(bad, "\n") + "\n",
		"late header":  strings.Repeat("\n", 300) + header + good,
		"header only":  header,
		"empty":        "",
		"bad header":   "date,open,nope\n" + good,
	}
	for name, in := range inputs {
		want, wantErr := ParseIn(strings.NewReader(in), 0, time.UTC)
		for pieces := 1; pieces <= 45; pieces++ { // up to a piece a line
			got, err := parseFile(strings.NewReader(in), int64(len(in)), time.UTC, pieces)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s in %d pieces: error %v, want %v", name, pieces, err, wantErr)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s in %d pieces: %d bars, want %d (%v)", name, pieces, len(got), len(want), got)
			}
		}
	}
}

func TestSplitLines(t *testing.T) {
	in := "h\naa\nbb\ncc\ndd\nee\nff" // 7 lines, the last without a newline
	starts, lines, err := splitLines(strings.NewReader(in), int64(len(in)), 3)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range starts {
		if s == 0 || in[s-1] == '\n' {
			if got := strings.Count(in[:s], "\n"); got != lines[k] {
				t.Errorf("piece %d at %d: %d lines before, want %d", k, s, lines[k], got)
			}
			continue
		}
		t.Errorf("piece %d starts at %d, inside a line", k, s)
	}
	if len(starts) != 3 || lines[len(lines)-1] != 7 {
		t.Errorf("starts %v, lines %v: want 3 pieces and 7 lines", starts, lines)
	}
}

// TestFastRowMatchesSlow checks the plain-line fast path against the general parser: the
// same bar, to the bit, for every line the fast path takes, and the general parser's answer
// (a bar or an error) for every line it declines.
func TestFastRowMatchesSlow(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	num := func() string {
		switch r.IntN(8) {
		case 0:
			return strconv.FormatFloat(r.NormFloat64()*1e3, 'f', -1, 64) // up to 17 digits
		case 1:
			return strconv.FormatFloat(r.Float64()*math.Pow(10, float64(r.IntN(30)-10)), 'g', -1, 64)
		case 2:
			return []string{"", "-", ".", "-.5", "5.", "1e3", "+1", "0x1p3", "1_0", " 1", "1 ", "NaN", "Inf", "-0", "00.10", "1.2.3", "999999999999999", "9999999999999999", "0.000000000000001", "0.0000000000000001"}[r.IntN(20)]
		}
		digits := r.IntN(17) + 1
		s := strconv.FormatUint(r.Uint64N(uint64(math.Pow10(min(digits, 19)))), 10)
		if k := r.IntN(len(s) + 1); k < len(s) {
			s = s[:k] + "." + s[k:]
		}
		if r.IntN(4) == 0 {
			s = "-" + s
		}
		return s
	}
	date := func() string {
		switch r.IntN(10) {
		case 0:
			return fmt.Sprintf("%04d-%02d-%02d", r.IntN(10000), r.IntN(14), r.IntN(33))
		case 1:
			return []string{"2020-02-29", "2021-02-29", "1900-02-29", "2000-02-29", "0000-01-01", "0000-03-01", "9999-12-31", "2020-1-02", "2020/01/02", "2020-01-02 10:00", "2020-01-02T10:00:00Z"}[r.IntN(11)]
		}
		return time.Date(r.IntN(10000), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(366)).Format("2006-01-02")
	}
	layouts := []struct {
		header string
		cols   int
	}{{"date,open,high,low,close,volume", 6}, {"Date,Open,High,Low,Close,Adj Close,Volume", 7}, {"close,low,high,open,date", 5}}
	taken := 0
	for i := range 200_000 {
		l := layouts[i%len(layouts)]
		lay, err := parseHeader(splitFields([]byte(l.header), nil))
		if err != nil {
			t.Fatal(err)
		}
		f := make([]string, l.cols)
		for k := range f {
			f[k] = num()
		}
		f[lay.date] = date()
		if lay.volume >= 0 {
			f[lay.volume] = []string{strconv.Itoa(r.IntN(1e6)), "", "-3", "1.5", "12345678901234567890", "007"}[r.IntN(6)*r.IntN(2)]
		}
		if r.IntN(50) == 0 {
			f = f[:len(f)-1]
		}
		line := []byte(strings.Join(f, ","))
		want, wantErr := slowRow(line, lay, 2, time.UTC, new([][]byte))
		got, ok := fastRow(line, lay)
		if !ok {
			continue
		}
		taken++
		if wantErr != nil || got != want || math.Float64bits(got.Open) != math.Float64bits(want.Open) {
			t.Fatalf("%q: fast %+v, general %+v, %v", line, got, want, wantErr)
		}
	}
	if taken < 10_000 {
		t.Errorf("the fast path took %d lines of 200,000", taken)
	}
	for range 1_000_000 {
		s := num()
		got, n, ok := fastFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (n != len(s) || err != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("%q: fast %v, strconv %v, %v", s, got, want, err)
		}
	}
}
