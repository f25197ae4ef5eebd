package marketdata_test

import (
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Intraday bars are folded on the data's calendar: hours of a zone half an hour off UTC,
// days of a session that starts on the previous UTC day; dates are folded as they are.
func TestAggregateOnTheDataCalendar(t *testing.T) {
	t.Parallel()
	kolkata, sydney := zone(t, "Asia/Kolkata"), zone(t, "Australia/Sydney")
	bar := func(at time.Time, p float64) engine.Bar {
		return engine.Bar{Time: at.UTC(), Open: p, High: p, Low: p, Close: p, Volume: 1}
	}
	cases := []struct {
		name string
		in   []engine.Bar
		tf   string
		loc  *time.Location
		want []time.Time // bucket starts
	}{
		{"Kolkata hours", []engine.Bar{
			bar(time.Date(2024, 1, 2, 9, 15, 0, 0, kolkata), 1), bar(time.Date(2024, 1, 2, 9, 45, 0, 0, kolkata), 2),
			bar(time.Date(2024, 1, 2, 10, 0, 0, 0, kolkata), 3),
		}, "1h", kolkata, []time.Time{time.Date(2024, 1, 2, 9, 0, 0, 0, kolkata), time.Date(2024, 1, 2, 10, 0, 0, 0, kolkata)}},
		{"Sydney days", []engine.Bar{
			bar(time.Date(2024, 6, 4, 9, 0, 0, 0, sydney), 1), bar(time.Date(2024, 6, 4, 15, 0, 0, 0, sydney), 2),
			bar(time.Date(2024, 6, 5, 9, 0, 0, 0, sydney), 3),
		}, "1d", sydney, []time.Time{time.Date(2024, 6, 4, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 5, 0, 0, 0, 0, time.UTC)}},
		{"Sydney week from its Monday", []engine.Bar{
			bar(time.Date(2024, 6, 3, 9, 0, 0, 0, sydney), 1), bar(time.Date(2024, 6, 7, 15, 0, 0, 0, sydney), 2),
		}, "1w", sydney, []time.Time{time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)}},
		{"UTC days of the same bars", []engine.Bar{
			bar(time.Date(2024, 6, 4, 9, 0, 0, 0, sydney), 1), bar(time.Date(2024, 6, 4, 15, 0, 0, 0, sydney), 2),
		}, "1d", time.UTC, []time.Time{time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 4, 0, 0, 0, 0, time.UTC)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := marketdata.Aggregate(c.in, c.tf, c.loc)
			if len(got) != len(c.want) {
				t.Fatalf("%d bars %v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				if !got[i].Time.Equal(w) {
					t.Errorf("bar %d starts %v, want %v", i, got[i].Time, w.UTC())
				}
			}
		})
	}
}

// Span gives the UTC range of a zone's days for intraday bars, across a change to summer
// time, and leaves dates alone.
func TestSpan(t *testing.T) {
	t.Parallel()
	ny := zone(t, "America/New_York")
	day := func(d int) time.Time { return time.Date(2024, 3, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		tf          string
		loc         *time.Location
		from, until string
	}{
		{"5m", ny, "2024-03-08T05:00:00Z", "2024-03-12T04:00:00Z"}, // EST then EDT (from the 10th)
		{"1d", ny, "2024-03-08T00:00:00Z", "2024-03-12T00:00:00Z"},
		{"5m", time.UTC, "2024-03-08T00:00:00Z", "2024-03-12T00:00:00Z"},
	} {
		from, until := marketdata.Span(c.tf, c.loc, day(8), day(11))
		if f, u := from.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339); f != c.from || u != c.until {
			t.Errorf("Span(%s, %v) = %s..%s, want %s..%s", c.tf, c.loc, f, u, c.from, c.until)
		}
	}
}

// Imports read times without an offset in the symbol's zone (given, or stored), keep dates
// and explicit offsets as they are, and refuse to mix two zones in one symbol's bars.
func TestImportInTimeZone(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	md := marketdata.NewService(b.store, nil)
	for _, bad := range []string{"Mars/Olympus", "Local", "../../etc/passwd"} {
		if _, err := md.ImportZone(b.ctx, "builtin", "NYC", bad); !strings.Contains(detail(err), "Unknown time zone") {
			t.Errorf("zone %q: %v, want a 400 naming it", bad, err)
		}
	}
	if loc, err := md.ImportZone(b.ctx, "builtin", "NYC", ""); err != nil || loc != time.UTC {
		t.Fatalf("a new symbol's default zone: %v, %v; want UTC", loc, err)
	}
	ny, err := md.ImportZone(b.ctx, "builtin", "NYC", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	csv := "datetime,open,high,low,close,volume\n2024-03-08 09:30,1,1,1,1,1\n2024-03-11 09:30,1,1,1,1,1\n2024-03-11T16:00:00+01:00,1,1,1,1,1\n"
	bars, err := marketdata.ParseCSV(strings.NewReader(csv), ny)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2024-03-08T14:30:00Z", "2024-03-11T13:30:00Z", "2024-03-11T15:00:00Z"}
	for i, w := range want {
		if got := bars[i].Time.UTC().Format(time.RFC3339); got != w {
			t.Errorf("bar %d at %s, want %s", i, got, w)
		}
	}
	res, err := md.Import(b.ctx, "builtin", "NYC", "", "", ny, bars)
	if err != nil || res.Timezone != "America/New_York" {
		t.Fatalf("import: %+v, %v", res, err)
	}
	daily, err := marketdata.ParseJSON(strings.NewReader(`[{"date":"2024-03-08","open":1,"high":1,"low":1,"close":1}]`), ny)
	if err != nil || !daily[0].Time.Equal(time.Date(2024, 3, 8, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a date read in New York: %v, %v; want the date itself (midnight UTC)", daily, err)
	}

	if loc, err := md.ImportZone(b.ctx, "builtin", "NYC", ""); err != nil || loc.String() != "America/New_York" {
		t.Errorf("zone of a later import without one: %v, %v; want the stored America/New_York", loc, err)
	}
	_, err = md.Import(b.ctx, "builtin", "NYC", "", "", time.UTC, days(0, 2, 10))
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindConflict || !strings.Contains(e.Detail, "America/New_York") {
		t.Errorf("import in another zone: %v; want a 409 naming the stored zone", err)
	}
	list, err := md.Symbols(b.ctx, "builtin", "NYC", 10)
	if err != nil || len(list) != 1 || list[0].Timezone != "America/New_York" {
		t.Errorf("symbol list: %+v, %v", list, err)
	}
	got, loc, err := md.Bars(b.ctx, "builtin", "NYC", time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC), "1d")
	if err != nil || loc.String() != "America/New_York" || len(got) != 1 || !got[0].Time.Equal(time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("daily bars of the 11th: %v in %v, %v", got, loc, err)
	}
}
