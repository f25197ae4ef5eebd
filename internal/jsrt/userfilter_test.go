package jsrt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// Filters written in JavaScript on a small feed, each checked against what backtrader's
// load loop makes of it by hand: the bars the strategy then sees (length, dates, closes
// and volumes logged in stop()).
func TestUserFilters(t *testing.T) {
	t.Parallel()
	bars := walk(6) // daily from Monday 2000-01-03
	day := func(i int) string { return bars[i].Time.Format("2006-01-02") }
	const strat = `
class T extends Strategy {
  static filters = FILTERS;
  next() {}
  stop() {
    const d = this.data, out = [];
    for (let i = d.length - 1; i >= 0; i--) out.push(d.date(-i) + ' ' + d.close[-i].toFixed(4) + ' ' + d.volume[-i]);
    this.log(d.length + ': ' + out.join(', '));
  }
}`
	// seen is what stop() logs for bars i of the source, with their volumes
	seen := func(vol func(i int) string, is ...int) string {
		parts := make([]string, len(is))
		for k, i := range is {
			parts[k] = fmt.Sprintf("%s %.4f %s", day(i), bars[i].Close, vol(i))
		}
		return strings.Join(parts, ", ")
	}
	v1000 := func(int) string { return "1000" }
	all := []int{0, 1, 2, 3, 4, 5}
	var noon []string // each bar, then its noon copy with its volume halved
	for i := range bars {
		noon = append(noon, seen(func(int) string { return "500" }, i), seen(func(int) string { return "5" }, i))
	}
	scaled := make([]string, len(bars))
	for i, b := range bars {
		scaled[i] = fmt.Sprintf("%s %.4f 7", day(i), b.Close*1.001)
	}
	for _, c := range []struct {
		name, code, filters, want string
	}{
		{"drop every other bar (a function returning true after backwards)",
			`let n = 0;
			 function odd(data) { if (n++ % 2 === 1) { data.backwards(); return true; } return false; }`,
			`{ filter: odd }`, "3: " + seen(v1000, 0, 2, 4)},
		{"parameters reach the constructor and a line written in place",
			`class Scale { constructor(data, p) { this.k = p.k; } call(data) { data.close[0] = data.close[0] * this.k; data.volume[0] = 7; return false; } }`,
			`{ filter: Scale, k: 1.001 }`, "6: " + strings.Join(scaled, ", ")},
		{"a stashed copy passes the filters again",
			// each source bar gets a copy at noon through the stash, which comes back through
			// this filter (which lets it pass) and the next (which halves its volume)
			`class Noon { call(data) { const b = data.bar(0); if (b.datetime.getUTCHours() === 0) { b.datetime = new Date(b.datetime.getTime() + 12 * 3600e3); b.volume = 10; data.add2stack(b, true); } return false; } }
			 function half(data) { data.volume[0] = data.volume[0] / 2; return false; }`,
			`[{ filter: Noon }, { filter: half }]`, "12: " + strings.Join(noon, ", ")},
		{"last() hands over a bar at the end",
			`class Tail { call(data) { this.c = data.close[0]; return false; } last(data) { data.add2stack({ datetime: new Date(Date.UTC(2000, 0, 9)), open: 1, high: 2, low: 0.5, close: this.c, volume: 3 }); return true; } }`,
			`{ filter: Tail }`, "7: " + seen(v1000, all...) + fmt.Sprintf(", 2000-01-09 %.4f 3", bars[5].Close)},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := c.code + strings.ReplaceAll(strat, "FILTERS", c.filters)
			res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strategyLines(res); len(got) != 1 || got[0] != c.want {
				t.Errorf("the strategy saw %q\nwant %q", got, c.want)
			}
		})
	}
}

// A filter that misbehaves fails the run with a clear error naming it, however it does.
func TestUserFilterErrors(t *testing.T) {
	t.Parallel()
	one := []engine.Feed{{Symbol: "X", Bars: walk(40)}}
	for _, c := range []struct {
		name, code, filters, want string
		kind                      ErrorKind
	}{
		{"throws", `class Boom { call(data) { if (data.length > 3) throw new Error('no more'); return false; } }`, `{ filter: Boom }`,
			"filters[0]: Boom.call: Error: no more", KindStrategy},
		{"throws in its constructor", `class Boom { constructor() { null.x; } call() { return false; } }`, `{ filter: Boom }`,
			"filters[0]: Boom.constructor: TypeError", KindStrategy},
		{"throws in last", `class Boom { call() { return false; } last() { throw new RangeError('late'); } }`, `{ filter: Boom }`,
			"filters[0]: Boom.last: RangeError: late", KindStrategy},
		{"a class without call", `class Nope { next() {} }`, `{ filter: Nope }`,
			"filters[0]: Nope is a class without a call(data) method", KindStrategy},
		{"not a function", ``, `{ filter: 42 }`,
			"filters[0].filter must be a built-in filter's name or a class or function of the strategy file, got 42", KindStrategy},
		{"bars out of order", `function back(data) { data.datetime[0] = new Date(Date.UTC(1999, 0, 1) - data.length); return false; }`, `{ filter: back }`,
			"is not after the bar before it", KindStrategy},
		{"NaN prices", `function hole(data) { if (data.length === 5) data.close[0] = NaN; return false; }`, `{ filter: hole }`,
			"filters: bar 4 of this.datas[0] as its filters left it (2000-01-07T00:00:00Z) has close NaN: prices must be finite numbers", KindStrategy},
		{"a fractional volume", `function v(data) { data.volume[0] = 0.5; return false; }`, `{ filter: v }`,
			"has volume 0.5: volumes are whole numbers of 0 or more", KindStrategy},
		{"a bar without a time", `function b(data) { data.add2stack({ close: 1 }); return false; }`, `{ filter: b }`,
			"filters[0]: b.call: TypeError: add2stack: the bar's datetime must be a Date or milliseconds since 1970, got undefined", KindStrategy},
		{"not a bar", `function b(data) { data.add2stack(3); return false; }`, `{ filter: b }`,
			"add2stack expects a bar {datetime, open, high, low, close, volume, openinterest}, got 3", KindStrategy},
		{"backwards past the start", `function b(data) { data.backwards(); data.backwards(); return true; }`, `{ filter: b }`,
			"backwards: the feed has no bar to take back", KindStrategy},
		{"updatebar past the start", `function b(data) { data.updatebar(data.bar(0), -5); return false; }`, `{ filter: b }`,
			"updatebar: there is no bar 5 ago (the feed has 1)", KindStrategy},
		{"drops every bar", `function none(data) { data.backwards(); return true; }`, `{ filter: none }`,
			"filters: the filters of this.datas[0] left none of its 40 bars", KindStrategy},
		{"bars without end", `function flood(data) { for (let i = 1; i < 100; i++) data.add2stack({ ...data.bar(0), datetime: new Date(data.datetime[0].getTime() + i) }); return false; }`, `{ filter: flood }`,
			"filters: the filters of this.datas[0] delivered or stacked more than 1400 bars from 40 (at most 10 a bar read)", KindStrategy},
		{"beside a built-in filter", `function f() { return false; }`, `[{ filter: 'HeikinAshi' }, { filter: f }]`,
			"filters[1]: a filter written in JavaScript cannot share this.datas[0] with HeikinAshi", KindStrategy},
		{"before a built-in filter", `function f() { return false; }`, `[{ filter: f }, { filter: 'Renko', size: 1 }]`,
			"filters[1]: Renko cannot share this.datas[0] with a filter written in JavaScript", KindStrategy},
		{"feed out of range", `function f() { return false; }`, `{ filter: f, data: 3 }`,
			"filters[0].data must be the index of one of the run's 1 feeds, got 3", KindStrategy},
		{"with replay", `function f() { return false; }`, `{ filter: f }; static replay = { timeframe: 'weeks' }`,
			"filters[0]: a filter written in JavaScript cannot be combined with static replay", KindStrategy},
		{"a bad session", `function f() { return false; }`, `{ filter: f, sessionend: 'late' }`,
			`filters[0]: sessionend must be a time of day (HH:MM or HH:MM:SS), got "late"`, KindStrategy},
		{"loops forever", `function spin(data) { for (;;) {} }`, `{ filter: spin }`, "", KindTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := c.code + "\nclass T extends Strategy {\n  static filters = " + c.filters + ";\n  next() {}\n}\n"
			_, err := Run(context.Background(), RunConfig{Code: code, Feeds: one, WallTimeLimit: 2 * time.Second})
			var re *RunError
			if !errors.As(err, &re) || re.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a %s error saying %q", err, c.kind, c.want)
			}
		})
	}
}
