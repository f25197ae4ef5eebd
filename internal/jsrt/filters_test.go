package jsrt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// A replayed feed as the strategy sees it on the third day of its second week: the week
// so far at [0], the first week at [-1], lengths in weeks, an SMA of the weeks with the
// unfinished one, and a number beside a replayed line; next() runs on every day.
func TestReplayView(t *testing.T) {
	t.Parallel()
	bars := walk(20) // daily from Monday 2000-01-03: weeks of 7 bars
	code := `class R extends Strategy {
  static replay = { timeframe: 'weeks' };
  init() {
    this.sma = ind.SMA(this.data, 2); this.up = this.data.close.gt(100); this.calls = 0;
    this.same = ind.SMA(this.data.close, 2).eq(this.sma); this.tr = ind.TrueRange(this.data);
  }
  next() {
    this.calls++;
    if (this.calls === 10) this.log([this.data.length, this.data.open[0], this.data.high[0], this.data.low[-1], this.data.close[0],
      this.data.volume[0], this.data.date(0), this.data.date(-1), this.sma[0], this.sma[-1], this.up[0], this.sma.length, this.same[0],
      this.tr[0]].join(' '));
  }
  stop() { this.log('calls ' + this.calls); }
}`
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
	if err != nil {
		t.Fatal(err)
	}
	// next() starts on the first bar of week 2 (bar 7, the SMA's warm-up of 2 weeks); its
	// tenth call is bar 16, the third day of week 3.
	w2, w3 := bars[7:14], bars[14:17]
	hi, lo := w3[0].High, w2[0].Low
	for _, b := range w3 {
		hi = max(hi, b.High)
	}
	for _, b := range w2 {
		lo = min(lo, b.Low)
	}
	up := 0
	if w3[2].Close > 100 {
		up = 1
	}
	// the true range of the week so far: its high and low against the last week's close
	tr := max(hi, w2[6].Close) - min(w3[0].Low, w3[1].Low, w3[2].Low, w2[6].Close)
	want := fmt.Sprint(3, " ", w3[0].Open, " ", hi, " ", lo, " ", w3[2].Close, " ", 3000, " 2000-01-19 2000-01-16 ",
		(w2[6].Close+w3[2].Close)/2, " ", (bars[6].Close+w2[6].Close)/2, " ", up, " ", 3, " ", 1, " ", tr)
	got := strategyLines(res)
	if len(got) != 2 || got[0] != want || got[1] != "calls 13" {
		t.Errorf("lines %q\nwant %q and calls 13", got, want)
	}
	if res.FirstNext != 2 || len(res.Equity) != 20 {
		t.Errorf("first next %d (want 2, in weeks), equity points %d (want 20)", res.FirstNext, len(res.Equity))
	}
}

// Bad filters and replays are refused with messages that say what is wrong.
func TestFilterAndReplayErrors(t *testing.T) {
	t.Parallel()
	one := []engine.Feed{{Symbol: "X", Bars: walk(40)}}
	two := []engine.Feed{{Symbol: "X", Bars: walk(40)}, {Symbol: "Y", Bars: walk(40)}}
	cases := []struct {
		name, static string
		feeds        []engine.Feed
		want         string
	}{
		{"filters not an object", `static filters = 'HeikinAshi';`, one, "static filters must be an object {filter, data, ...} or an array of them"},
		{"unknown filter", `static filters = { filter: 'SessionFilters' };`, one, "filters[0].filter must be 'HeikinAshi', 'Renko', 'CalendarDays', 'SessionFiller', 'SessionFilter', 'DaySplitter_Close' or 'BarReplayer_Open', got SessionFilters"},
		{"SessionFilter time", `static filters = { filter: 'SessionFilter', sessionstart: 9 };`, one, "filters[0]: sessionstart must be a time of day (HH:MM or HH:MM:SS), got 9"},
		{"SessionFilter backwards", `static filters = { filter: 'SessionFilter', sessionstart: '17:00', sessionend: '09:00' };`, one, "filters[0]: the session must start and end within a day, start before end"},
		{"SessionFilter keeping nothing", `static filters = { filter: 'SessionFilter', sessionstart: '09:00', sessionend: '17:00' };`, one, "filters[0]: SessionFilter kept none of this.datas[0]'s 40 bars"},
		{"SessionFilter and resample", `static filters = { filter: 'SessionFilter' }; static resample = { timeframe: 'weeks' };`, one, "filters[0]: SessionFilter cannot be combined with static resample"},
		{"DaySplitter_Close closevol", `static filters = { filter: 'DaySplitter_Close', closevol: 2 };`, one, "filters[0]: closevol must be from 0 to 1, got 2"},
		{"DaySplitter_Close parameter", `static filters = { filter: 'DaySplitter_Close', fill_vol: 0 };`, one, `filters[0]: DaySplitter_Close has no parameter "fill_vol"`},
		{"DaySplitter_Close twice", `static filters = [{ filter: 'DaySplitter_Close' }, { filter: 'DaySplitter_Close' }];`, one, "filters[1]: DaySplitter_Close must be the last filter of its feed (this.datas[0])"},
		{"BarReplayer_Open and replay", `static filters = { filter: 'BarReplayer_Open' }; static replay = { timeframe: 'days' };`, one, "filters[0]: BarReplayer_Open cannot be combined with static replay"},
		{"filter after SessionFilter before replay", `static filters = [{ filter: 'SessionFilter' }, { filter: 'CalendarDays' }]; static replay = { timeframe: 'days' };`, one, "filters[1]: CalendarDays cannot be combined with static replay"},
		{"no bar size", `static filters = { filter: 'SessionFiller' };`, one, "filters[0]: minutes, the bars' size in minutes, is required"},
		{"bad bar size", `static filters = { filter: 'SessionFiller', minutes: 2.5 };`, one, "filters[0]: minutes must be the bars' size, a whole number of minutes from 1 to 1440, got 2.5"},
		{"bad session time", `static filters = { filter: 'SessionFiller', minutes: 5, sessionend: '25:00' };`, one, `filters[0]: sessionend must be a time of day (HH:MM or HH:MM:SS), got "25:00"`},
		{"session backwards", `static filters = { filter: 'SessionFiller', minutes: 5, sessionstart: '17:00', sessionend: '09:00' };`, one, "filters[0]: the session must start and end within a day, start before end"},
		{"bad skip flag", `static filters = { filter: 'SessionFiller', minutes: 5, skip_first_fill: 'no' };`, one, "filters[0]: skip_first_fill must be true or false, got no"},
		{"unknown parameter", `static filters = { filter: 'Renko', sise: 2 };`, one, `filters[0]: Renko has no parameter "sise"`},
		{"feed out of range", `static filters = { filter: 'HeikinAshi', data: 1 };`, one, "filters[0].data must be the index of one of the run's 1 feeds, got 1"},
		{"bad size", `static filters = { filter: 'Renko', size: -1 };`, one, "filters[0]: size must be above 0, got -1"},
		{"size not a number", `static filters = { filter: 'Renko', size: 'big' };`, one, "filters[0]: size must be a number, got big"},
		{"flag not a boolean", `static filters = { filter: 'Renko', size: 1, hilo: 1 };`, one, "filters[0]: hilo must be true or false, got 1"},
		{"autosize making 0", `static filters = { filter: 'Renko', autosize: 200 };`, one, "filters[0]: autosize 200 makes bricks of 0 from the first open"},
		{"filter after SessionFilter, then after SessionFiller", `static filters = [{ filter: 'SessionFilter' }, { filter: 'SessionFiller', minutes: 1440, sessionend: '00:00' }, { filter: 'HeikinAshi' }];`, one, "filters[2]: SessionFiller must be the last filter of its feed (this.datas[0])"},
		{"filter after Renko", `static filters = [{ filter: 'Renko', size: 1 }, { filter: 'HeikinAshi' }];`, one, "filters[1]: Renko must be the last filter of its feed (this.datas[0])"},
		{"filter after CalendarDays", `static filters = [{ filter: 'CalendarDays' }, { filter: 'Renko', size: 1 }];`, one, "filters[1]: CalendarDays must be the last filter of its feed (this.datas[0])"},
		{"BarReplayer_Open on two feeds", `static filters = { filter: 'BarReplayer_Open', data: 1 };`, two, "filters[0]: BarReplayer_Open needs a run of one feed, this one has 2"},
		{"filter after BarReplayer_Open", `static filters = [{ filter: 'BarReplayer_Open' }, { filter: 'HeikinAshi' }];`, one, "filters[1]: BarReplayer_Open must be the last filter of its feed (this.datas[0])"},
		{"BarReplayer_Open and resample", `static filters = { filter: 'BarReplayer_Open' }; static resample = { timeframe: 'weeks' };`, one, "filters[0]: BarReplayer_Open cannot be combined with static resample"},
		{"BarReplayer_Open parameter", `static filters = { filter: 'BarReplayer_Open', closevol: 0.5 };`, one, `filters[0]: BarReplayer_Open has no parameter "closevol"`},
		{"filters and replay", `static filters = { filter: 'HeikinAshi' }; static replay = { timeframe: 'weeks' };`, one, "filters[0]: HeikinAshi cannot be combined with static replay: backtrader runs it before the replay"},
		{"Renko and resample", `static filters = { filter: 'Renko', size: 1 }; static resample = { timeframe: 'weeks' };`, one, "filters[0]: Renko cannot be combined with static resample"},
		{"CalendarDays and resample", `static filters = [{ filter: 'HeikinAshi' }, { filter: 'CalendarDays' }]; static resample = { timeframe: 'weeks' };`, one, "filters[1]: CalendarDays cannot be combined with static resample"},
		{"bad fill price", `static filters = { filter: 'CalendarDays', fill_price: -3 };`, one, "filters[0]: fill_price must be above 0, 0 (the last close) or -1"},
		{"bad fill volume", `static filters = { filter: 'CalendarDays', fill_vol: 2.5 };`, one, "filters[0]: fill_vol must be a whole number of 0 or more, got 2.5"},
		{"no brick", `static filters = { filter: 'Renko', size: 1000 };`, one, "filters[0]: Renko made no brick of this.datas[0]'s 40 bars"},
		{"replay not an object", `static replay = 'weeks';`, one, "static replay must be an object {timeframe, compression, data}"},
		{"replay bad key", `static replay = { timeframe: 'weeks', every: 2 };`, one, `static replay has no key "every"`},
		{"replay timeframe", `static replay = { timeframe: 'hours' };`, one, "replay: timeframe must be 'days', 'weeks', 'months' or 'years', got \"hours\""},
		{"replay compression", `static replay = { timeframe: 'weeks', compression: 0 };`, one, "replay: compression must be a whole number of 1 or more, got 0"},
		{"replay feed out of range", `static replay = { timeframe: 'weeks', data: 2 };`, two, "replay.data must be the index of one of the run's 2 feeds, got 2"},
		{"replay a feed twice", `static replay = [{ timeframe: 'weeks' }, { timeframe: 'months', data: 0 }];`, two, "replay[1]: this.datas[0] is replayed twice"},
		{"replay entry not an object", `static replay = [{ timeframe: 'weeks' }, 'months'];`, two, "replay[1] must be an object {timeframe, compression, data}"},
		{"replay entry bad key", `static replay = [{ timeframe: 'weeks', feed: 1 }];`, two, `static replay[0] has no key "feed"`},
		{"replayed feeds in one indicator", `static replay = [{ timeframe: 'weeks' }, { timeframe: 'weeks', data: 1 }]; init() { ind.Sub(this.datas[0].close, this.datas[1].close); }`, two,
			"Sub: the lines of two replayed feeds (this.datas[0] and this.datas[1]) cannot meet in one indicator"},
		{"replayed and plain feed in one indicator", `static replay = { timeframe: 'weeks', data: 1 }; init() { this.datas[1].close.sub(ind.SMA(this.datas[0].close, 3)); }`, two,
			"sub: a replayed feed's lines (this.datas[1]) cannot meet another feed's (this.datas[0]) in one indicator"},
		{"replayed feed missing a day", `static replay = { timeframe: 'weeks', data: 1 };`, []engine.Feed{{Symbol: "X", Bars: walk(40)}, {Symbol: "Y", Bars: slices.Delete(walk(40), 10, 11)}},
			"replay: Y has no bar at 2000-01-13 00:00:00, which another feed has"},
		{"replay and resample", `static replay = { timeframe: 'weeks' }; static resample = { timeframe: 'months' };`, one, "static replay and static resample cannot be used together"},
		{"replay with Apply", `static replay = { timeframe: 'weeks' }; init() { ind.Apply(this.data.close, c => c); }`, one, "Apply: a replayed feed's lines take the built-in indicators only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := "class T extends Strategy {\n  " + c.static + "\n}\n"
			_, err := Run(context.Background(), RunConfig{Code: code, Feeds: c.feeds})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// BenchmarkReplay is the cost of a replayed feed's indicators, computed again at each bar
// over the finished coarser bars: 5,000 daily bars replayed into weeks, with none, one
// SMA, and an SMA and its crossover with the close.
func BenchmarkReplay(b *testing.B) {
	bars := engine.RandomWalk(5000, 3)
	for _, c := range []struct{ name, init string }{
		{"none", ""},
		{"sma", "this.s = ind.SMA(this.data.close, 10);"},
		{"sma+cross", "this.s = ind.SMA(this.data.close, 10); this.x = ind.CrossOver(this.data.close, this.s);"},
	} {
		code := "class R extends Strategy { static replay = { timeframe: 'weeks' }; init() { " + c.init + " } next() {} }"
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "RW", Bars: bars}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Session times as written: backtrader's defaults when left out, fractions of a second
// kept (backtrader's default end, 23:59:59.999990, can be written out).
func TestSessionTimes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m          map[string]any
		start, end time.Duration
	}{
		{map[string]any{}, 0, engine.DefaultSessionEnd},
		{map[string]any{"sessionend": "23:59:59.99999"}, 0, engine.DefaultSessionEnd},
		{map[string]any{"sessionstart": "09:30", "sessionend": "16:00:30"}, 9*time.Hour + 30*time.Minute, 16*time.Hour + 30*time.Second},
	} {
		start, end, err := sessionTimes(c.m)
		if err != nil || start != c.start || end != c.end {
			t.Errorf("%v: %v to %v (%v), want %v to %v", c.m, start, end, err, c.start, c.end)
		}
	}
}
