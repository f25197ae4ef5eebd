package jsrt

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

func contractFeed(sym string, base float64, from, n int) engine.Feed {
	f := engine.Feed{Symbol: sym}
	for d := from; d < from+n; d++ {
		c := base + float64(d)
		f.Bars = append(f.Bars, engine.Bar{Time: time.Date(2001, 1, d, 0, 0, 0, 0, time.UTC), Open: c, High: c, Low: c, Close: c, Volume: int64(d)})
	}
	return f
}

// TestJoinedFeeds checks static chain and rollover: what is refused and why, where the
// joined feed goes in this.datas, and what the callbacks and this.data.contract see.
func TestJoinedFeeds(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{contractFeed("A", 100, 1, 10), contractFeed("B", 200, 5, 10), contractFeed("X", 0, 1, 14)}
	cases := []struct {
		name, static, body, want string
	}{
		{"chain not an object", `static chain = 3;`, ``, "static chain must be an object {data, name} or an array of them"},
		{"rollover true", `static rollover = true;`, ``, "static rollover must be an object"},
		{"bad index", `static chain = { data: [0, 3] };`, ``, "chain[0].data must hold distinct indexes of the run's 3 feeds, got 3"},
		{"repeated index", `static chain = { data: [1, 1] };`, ``, "distinct indexes"},
		{"empty data", `static rollover = { data: [] };`, ``, "rollover[0].data must be an array of indexes"},
		{"joined twice", `static chain = { data: [0, 1] }; static rollover = { data: [1, 2] };`, ``, "feed 1 is joined twice (by chain[0] and rollover[0])"},
		{"bad name", `static chain = { data: [0, 1], name: 5 };`, ``, "chain[0].name must be a non-empty string"},
		{"checkdate not a function", `static rollover = { data: [0, 1], checkdate: 1 };`, ``, "rollover[0].checkdate must be a function"},
		{"checkdate throws", `static rollover = { data: [0, 1], checkdate() { throw new Error('no dates'); } };`, ``, "no dates"},
		{"chain: the joined feed first, X after it", `static chain = { data: [0, 1], name: 'AB' };`,
			`next() { this.log(this.datas.length + ' ' + this.data.symbol + ' ' + this.data.contract + ' ' + this.data.close[0] + ' ' + this.datas[1].symbol + ' ' + this.datas[1].contract); }`,
			"2 AB A 101 X undefined|2 AB B 214 X undefined"},
		{"rollover: the callbacks see both contracts", `static rollover = { data: [1, 0],
			checkdate(dt, d) { return d.symbol === 'B' && dt.getUTCDate() >= 7; },
			checkcondition(d0, d1) { return d0.length === 3 && d1.close[0] === 107 && d1.close[-1] === 106 && d1.date(0) === '2001-01-07'; } };`,
			`next() { this.log(this.datas.length + ' ' + this.data.symbol + ' ' + this.data.contract + ' ' + this.data.close[0] + ' ' + this.datas[1].symbol); }`,
			"2 B B 205 X|2 B B 206 X|2 B A 107 X|2 B A 110 X"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := "class T extends Strategy {\n  " + c.static + "\n  " + c.body + "\n}\n"
			res, err := Run(context.Background(), RunConfig{Code: code, Feeds: feeds, Cash: 10000})
			if strings.Contains(c.want, "|") {
				if err != nil {
					t.Fatal(err)
				}
				var logs []string
				for _, l := range res.Logs {
					if l.Source == "strategy" {
						logs = append(logs, l.Message)
					}
				}
				all := strings.Join(logs, "\n")
				for _, w := range strings.Split(c.want, "|") {
					if !strings.Contains(all, w) {
						t.Errorf("logs lack %q:\n%s", w, all)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}
