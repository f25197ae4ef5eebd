package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func filterBars(rows ...[4]float64) Feed {
	f := Feed{Symbol: "X"}
	t := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC) // a Monday
	for i, r := range rows {
		f.Bars = append(f.Bars, Bar{Time: t.AddDate(0, 0, i), Open: r[0], High: r[1], Low: r[2], Close: r[3], Volume: int64(10 * (i + 1))})
	}
	return f
}

func ohlc(f Feed) string {
	var out []string
	for _, b := range f.Bars {
		out = append(out, fmt.Sprintf("%s %g %g %g %g %d", b.Time.Format("01-02"), b.Open, b.High, b.Low, b.Close, b.Volume))
	}
	return strings.Join(out, "; ")
}

// Heikin-Ashi candles by hand: the first bar keeps its high and low.
func TestHeikinAshi(t *testing.T) {
	f := filterBars([4]float64{10, 12, 8, 10}, [4]float64{11, 15, 10, 14}, [4]float64{14, 14, 9, 9})
	// bar 1: close (10+12+8+10)/4 = 10, open (10+10)/2 = 10
	// bar 2: close (11+15+10+14)/4 = 12.5, open (10+10)/2 = 10, high max(10, 12.5, 15), low min(10, 12.5, 10)
	// bar 3: close (14+14+9+9)/4 = 11.5, open (10+12.5)/2 = 11.25, high 14, low 9
	want := "03-04 10 12 8 10 10; 03-05 10 15 10 12.5 20; 03-06 11.25 14 9 11.5 30"
	if got := ohlc(HeikinAshi(f)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// The expected bricks are what backtrader 1.9.78.123's bt.filters.Renko makes of these bars
// with the same parameters (checked with it).
func TestRenko(t *testing.T) {
	f := filterBars(
		[4]float64{100.4, 101, 99, 100.5}, // start: open aligned to 100, top 102, bottom 98
		[4]float64{100, 103, 100, 101.9},  // under the top: dropped (its high would do with hilo)
		[4]float64{102, 106, 101, 105},    // reaches 102: one brick 102-104 however far it went
		[4]float64{105, 105, 97, 101.5},   // reaches the bottom 102 (the last brick's bottom): falling brick 102-100
		[4]float64{101, 101, 95, 99},      // reaches 100: falling brick 100-98
		[4]float64{99, 99, 95, 97.9},      // reaches 98: falling brick 98-96
	)
	tests := []struct {
		name string
		p    RenkoParams
		want string
	}{
		{"size 2", RenkoParams{Size: 2, Align: 1, RoundStart: true},
			"03-06 102 104 102 104 0; 03-07 102 100 102 100 0; 03-08 100 98 100 98 0; 03-09 98 96 98 96 0"},
		// on the high and low: the first bar's 101 and 99 stay inside, the second's high
		// reaches the top, the fourth's low the bottom of the brick before
		{"hilo", RenkoParams{Size: 2, Align: 1, RoundStart: true, Hilo: true},
			"03-05 102 104 102 104 0; 03-06 104 106 104 106 0; 03-07 104 102 104 102 0; 03-08 102 100 102 100 0; 03-09 100 98 100 98 0"},
		// autosize 50: 100 // 50 = 2, then taken again from each brick's close: 99 // 50 = 1
		{"dynamic", RenkoParams{Autosize: 50, Dynamic: true, Align: 1, RoundStart: true},
			"03-06 102 104 102 104 0; 03-07 102 100 102 100 0; 03-08 100 99 100 99 0; 03-09 99 98 99 98 0"},
	}
	for _, tt := range tests {
		got, err := Renko(f, tt.p)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ohlc(got) != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, ohlc(got), tt.want)
		}
	}
	for _, p := range []RenkoParams{{Size: -1, Align: 1}, {Autosize: 0, Align: 1}, {Size: 1, Align: 0}, {Autosize: 500, Align: 1}} {
		if _, err := Renko(f, p); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

// A replayed feed's coarser bars as they stand at each bar, and which bar each builds.
func TestReplay(t *testing.T) {
	// Mon 03-04 .. Tue 03-12 daily (weekends included): weeks 03-04..03-10 and 03-11..
	var rows [][4]float64
	for i := range 9 {
		p := float64(10 + i)
		rows = append(rows, [4]float64{p, p + 1, p - 1, p + 0.5})
	}
	got, err := Replay(filterBars(rows...), "weeks", 1)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Replay
	if fmt.Sprint(r.Index) != "[0 0 0 0 0 0 0 1 1]" || fmt.Sprint(r.Last) != "[6 8]" {
		t.Errorf("index %v, last %v", r.Index, r.Last)
	}
	if b := r.Bars[3]; b.Open != 10 || b.High != 14 || b.Low != 9 || b.Close != 13.5 || b.Volume != 100 || b.Time.Format("01-02") != "03-07" {
		t.Errorf("the week as it stands on its fourth day: %+v", b)
	}
	if b := r.Bars[7]; b.Open != 17 || b.High != 18 || b.Low != 16 || b.Volume != 80 {
		t.Errorf("the second week's first day: %+v", b)
	}
	if len(got.Bars) != 9 || got.Bars[8] != filterBars(rows...).Bars[8] {
		t.Error("the feed's own bars must stay the steps")
	}
	two, err := Replay(filterBars(rows...), "weeks", 2)
	if err != nil || fmt.Sprint(two.Replay.Last) != "[8]" {
		t.Errorf("compression 2: %v, last %v", err, two.Replay.Last)
	}
	if _, err := Replay(filterBars(rows...), "hours", 1); err == nil || !strings.Contains(err.Error(), "'days', 'weeks', 'months' or 'years'") {
		t.Errorf("hours: %v", err)
	}
}

// A daily feed split by DaySplitter_Close and replayed to days, as backtrader replays the
// split bars of a feed declared in minutes: the two parts form one day bar, the second
// completing it with the day's close and both volumes.
func TestReplayDaySplit(t *testing.T) {
	src := filterBars([4]float64{10, 12, 9, 11}, [4]float64{11, 13, 10, 12.5}, [4]float64{12, 12.5, 11, 11.5})
	split, err := DaySplitterClose(src, 0.5, 0, DefaultSessionEnd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Replay(split, "days", 1)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Replay
	if fmt.Sprint(r.Index) != "[0 0 1 1 2 2]" || fmt.Sprint(r.Last) != "[1 3 5]" {
		t.Fatalf("index %v, last %v", r.Index, r.Last)
	}
	first, whole := r.Bars[2], r.Bars[3]
	if first.Open != 11 || first.High != 13 || first.Low != 10 || first.Close != 34.0/3 || first.Volume != src.Bars[1].Volume/2 {
		t.Errorf("the second day's open-high-low part: %+v", first)
	}
	if whole.Open != 11 || whole.High != 13 || whole.Low != 10 || whole.Close != 12.5 || whole.Volume != src.Bars[1].Volume || !whole.Time.Equal(split.Bars[3].Time) {
		t.Errorf("the second day completed by its close part: %+v", whole)
	}
	two, err := Replay(split, "days", 2)
	if err != nil || fmt.Sprint(two.Replay.Last) != "[3 5]" {
		t.Errorf("compression 2: %v, last %v", err, two.Replay.Last)
	}
	if _, err := Replay(split, "days", 0); err == nil {
		t.Error("compression 0: no error")
	}
}

// CalendarDays by hand: Friday to Monday fills Saturday, Sunday and, as backtrader does,
// Monday itself before Monday's own bar; the price is the last close, a given price or
// the last bar's high-low midpoint, at the time of day of the bar after the gap.
func TestCalendarDays(t *testing.T) {
	f := Feed{Symbol: "X"}
	fri := time.Date(2024, 3, 8, 9, 30, 0, 0, time.UTC)
	f.Bars = []Bar{
		{Time: fri.AddDate(0, 0, -1), Open: 9, High: 10, Low: 8, Close: 9.5, Volume: 5},
		{Time: fri, Open: 10, High: 12, Low: 8, Close: 11, Volume: 7},
		{Time: fri.AddDate(0, 0, 3).Add(time.Hour), Open: 12, High: 13, Low: 11, Close: 12.5, Volume: 9},
	}
	tests := []struct {
		price float64
		vol   int64
		want  string
	}{
		{0, 0, "03-07 9 10 8 9.5 5; 03-08 10 12 8 11 7; 03-09 11 11 11 11 0; 03-10 11 11 11 11 0; 03-11 11 11 11 11 0; 03-11 12 13 11 12.5 9"},
		{20, 3, "03-07 9 10 8 9.5 5; 03-08 10 12 8 11 7; 03-09 20 20 20 20 3; 03-10 20 20 20 20 3; 03-11 20 20 20 20 3; 03-11 12 13 11 12.5 9"},
		{-1, 0, "03-07 9 10 8 9.5 5; 03-08 10 12 8 11 7; 03-09 10 10 10 10 0; 03-10 10 10 10 10 0; 03-11 10 10 10 10 0; 03-11 12 13 11 12.5 9"},
	}
	for _, tt := range tests {
		got, err := CalendarDays(f, tt.price, tt.vol)
		if err != nil {
			t.Fatal(err)
		}
		if ohlc(got) != tt.want {
			t.Errorf("fill %v:\n got  %s\n want %s", tt.price, ohlc(got), tt.want)
		}
		if tm := got.Bars[2].Time.Format("15:04"); tm != "10:30" {
			t.Errorf("filler at %s, want the next bar's 10:30", tm)
		}
	}
	for _, c := range []struct {
		price float64
		vol   int64
	}{{-2, 0}, {0, -1}} {
		if _, err := CalendarDays(f, c.price, c.vol); err == nil {
			t.Errorf("fill %v volume %d: no error", c.price, c.vol)
		}
	}
}

// SessionFiller by hand, on 5-minute bars in 09:00-09:30 sessions: a gap inside a session,
// the first session's start left alone (skip_first_fill), the second's filled from 09:00,
// the first's end filled up to 09:30 when the next day's first bar comes.
func TestSessionFiller(t *testing.T) {
	at := func(day, hm string) time.Time {
		tm, _ := time.Parse("2006-01-02 15:04", "2024-03-0"+day+" "+hm)
		return tm
	}
	f := Feed{Symbol: "X", Bars: []Bar{
		{Time: at("4", "09:05"), Open: 1, High: 1, Low: 1, Close: 1, Volume: 1},
		{Time: at("4", "09:20"), Open: 2, High: 2, Low: 2, Close: 2, Volume: 1},
		{Time: at("5", "09:10"), Open: 3, High: 3, Low: 3, Close: 3, Volume: 1},
	}}
	p := SessionFillerParams{Unit: 5 * time.Minute, Start: 9 * time.Hour, End: 9*time.Hour + 30*time.Minute, SkipFirstFill: true}
	got, err := SessionFiller(f, p)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, b := range got.Bars {
		s = append(s, fmt.Sprintf("%s %g %d", b.Time.Format("02 15:04"), b.Close, b.Volume))
	}
	want := "04 09:05 1 1; 04 09:10 1 0; 04 09:15 1 0; 04 09:20 2 1; 04 09:25 2 0; 04 09:30 2 0; 05 09:00 2 0; 05 09:05 2 0; 05 09:10 3 1"
	if strings.Join(s, "; ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(s, "; "), want)
	}
	// a session whose first bar is at its start after a session filled to its end: the
	// end's fillers would come after that bar in backtrader
	f.Bars[2].Time = at("5", "09:00")
	if _, err := SessionFiller(f, p); err == nil || !strings.Contains(err.Error(), "out of time order") {
		t.Errorf("error %v, want one saying out of time order", err)
	}
	p.SkipFirstFill = false
	f.Bars[2].Time = at("5", "09:10")
	if _, err := SessionFiller(f, p); err == nil || !strings.Contains(err.Error(), "give a fill_price") {
		t.Errorf("error %v, want one asking for a fill_price", err)
	}
	p.FillPrice = 7
	if got, err := SessionFiller(f, p); err != nil || got.Bars[0].Time.Format("15:04") != "09:00" || got.Bars[0].Close != 7 {
		t.Errorf("with skip_first_fill false and a fill price: %v, first bar %+v", err, got.Bars[0])
	}
}

// BarReplayer_Open by hand: each bar as its open alone (no volume), then whole, both at its
// time; the replay maps both steps to the bar and ends each bar at its whole step.
func TestBarReplayerOpen(t *testing.T) {
	f := BarReplayerOpen(filterBars([4]float64{10, 12, 8, 11}, [4]float64{11, 15, 10, 14}))
	want := "03-04 10 10 10 10 0; 03-04 10 12 8 11 10; 03-05 11 11 11 11 0; 03-05 11 15 10 14 20"
	if got := ohlc(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r := f.Replay
	if r == nil || fmt.Sprint(r.Index, r.Last) != "[0 0 1 1] [1 3]" || len(r.Bars) != 4 || r.Bars[1] != f.Bars[1] {
		t.Errorf("replay %+v", r)
	}
	if e := BarReplayerOpen(Feed{Symbol: "X"}); len(e.Bars) != 0 || len(e.Replay.Last) != 0 {
		t.Errorf("an empty feed split into %d bars", len(e.Bars))
	}
}

// SessionFilter by hand: the bars before the session's start and after its end dropped,
// both ends kept.
func TestSessionFilter(t *testing.T) {
	day := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	f := Feed{Symbol: "X"}
	for _, hm := range []time.Duration{8*time.Hour + 55*time.Minute, 9 * time.Hour, 12 * time.Hour, 16 * time.Hour, 16*time.Hour + 5*time.Minute} {
		f.Bars = append(f.Bars, Bar{Time: day.Add(hm), Close: float64(hm / time.Minute)})
	}
	got, err := SessionFilter(f, 9*time.Hour, 16*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, b := range got.Bars {
		s = append(s, b.Time.Format("15:04"))
	}
	if strings.Join(s, " ") != "09:00 12:00 16:00" {
		t.Errorf("kept %v, want 09:00 12:00 16:00", s)
	}
	if _, err := SessionFilter(f, 17*time.Hour, 9*time.Hour); err == nil {
		t.Error("a session ending before it starts: no error")
	}
}

// DaySplitter_Close by hand: each day as its open, high and low with their average as the
// close at the session start, then its close alone at the session end; the volume split
// by closevol, the first part's truncated.
func TestDaySplitterClose(t *testing.T) {
	f := filterBars([4]float64{10, 12, 8, 11}, [4]float64{11, 15, 10, 14})
	f.Bars[0].Volume = 11
	got, err := DaySplitterClose(f, 0.3, 9*time.Hour+30*time.Minute, 16*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, b := range got.Bars {
		s = append(s, fmt.Sprintf("%s %g %g %g %g %d", b.Time.Format("01-02 15:04"), b.Open, b.High, b.Low, b.Close, b.Volume))
	}
	// day 1: close (10+12+8)/3 = 10, volume int(11*0.7) = 7 and 4; day 2: (11+15+10)/3 = 12, 14 and 6
	want := "03-04 09:30 10 12 8 10 7; 03-04 16:00 11 11 11 11 4; 03-05 09:30 11 15 10 12 14; 03-05 16:00 14 14 14 14 6"
	if strings.Join(s, "; ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(s, "; "), want)
	}
	if _, err := DaySplitterClose(f, 1.5, 0, DefaultSessionEnd); err == nil {
		t.Error("closevol 1.5: no error")
	}
	two := got // already split: two bars a day
	if _, err := DaySplitterClose(two, 0.5, 0, DefaultSessionEnd); err == nil || !strings.Contains(err.Error(), "not the first of its day") {
		t.Errorf("error %v, want one saying a bar is not the first of its day", err)
	}
}

// Two feeds replayed to weeks with one's first bar a week later: the strategy's length
// grows when either begins a week, and a replayed feed missing a day the other has is
// refused.
func TestReplaySeveralFeeds(t *testing.T) {
	days := func(from, n int, skip int) Feed {
		f := Feed{Symbol: fmt.Sprint("F", from, skip)}
		t0 := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC) // a Monday
		for i := from; i < from+n; i++ {
			if i != skip {
				f.Bars = append(f.Bars, Bar{Time: t0.AddDate(0, 0, i), Open: 1, High: 1, Low: 1, Close: 1})
			}
		}
		return f
	}
	a, err := Replay(days(0, 21, -1), "weeks", 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Replay(days(9, 12, -1), "weeks", 1) // from the second week's Wednesday
	e, err := New(Config{Feeds: []Feed{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	var lens []int
	if _, err := e.Run(context.Background(), &script{next: func(e *Engine) { lens = append(lens, e.strategyLen()) }}); err != nil {
		t.Fatal(err)
	}
	// weeks begin on days 0, 7 and 14 for a and on day 9 (a Wednesday: b's first bar, from
	// which next() runs) for b
	want := "[3 3 3 3 3 4 4 4 4 4 4 4]"
	if fmt.Sprint(lens) != want {
		t.Errorf("strategy lengths %v\nwant %s", lens, want)
	}
	gap, _ := Replay(days(0, 21, 10), "weeks", 1)
	if _, err := New(Config{Feeds: []Feed{a, gap}}); err == nil || !strings.Contains(err.Error(), "has no bar at 2024-03-14") {
		t.Errorf("error %v, want one saying the replayed feed has no bar at 2024-03-14", err)
	}
	if _, err := New(Config{Feeds: []Feed{days(0, 21, 10), a}}); err != nil {
		t.Errorf("a feed that is not replayed may miss a day: %v", err)
	}
}
