package jsrt

import (
	"context"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestCompensate checks data.compensate: what is refused and why, and that a compensating
// feed's fill moves the other feed's position and books its trade there (the compensate
// fixture pins the figures against backtrader).
func TestCompensate(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{contractFeed("A", 100, 1, 10), contractFeed("B", 200, 1, 10), contractFeed("C", 300, 1, 10)}
	cases := []struct{ name, init, next, want string }{
		{"no argument", `this.datas[1].compensate();`, ``, "compensate expects one of this.datas or its index"},
		{"not a feed", `this.datas[1].compensate('A');`, ``, "data must be one of this.datas"},
		{"itself", `this.datas[1].compensate(1);`, ``, "feed 1 cannot compensate itself"},
		{"a chain", `this.datas[1].compensate(this.datas[0]); this.datas[2].compensate(this.datas[1]);`, ``, "one level only"},
		{"compensated compensating", `this.datas[1].compensate(this.datas[0]); this.datas[0].compensate(this.datas[2]);`, ``, "one level only"},
		{"B's fills move A's position", `this.datas[1].compensate(this.datas[0]);`,
			`if (this.data.length === 2) this.sell({ data: this.datas[1], size: 3 });
			 if (this.data.length === 5) this.buy({ data: this.datas[0], size: 3 });
			 this.log(this.getPosition(this.datas[0]).size + ' ' + this.getPosition(this.datas[1]).size);`,
			"-3 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := "class T extends Strategy {\n  init() { " + c.init + " }\n  next() { " + c.next + " }\n}\n"
			res, err := Run(context.Background(), RunConfig{Code: code, Feeds: feeds, Cash: 10000})
			if c.next == "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var logs []string
			for _, l := range res.Logs {
				if l.Source == "strategy" {
					logs = append(logs, l.Message)
				}
			}
			if !strings.Contains(strings.Join(logs, "\n"), c.want) {
				t.Errorf("logs lack %q:\n%s", c.want, strings.Join(logs, "\n"))
			}
			// the short opened at B's price (201 + 2: the third bar's open) and closed at A's
			if len(res.Trades) != 1 || res.Trades[0].Symbol != "A" || res.Trades[0].Size != -3 || res.Trades[0].EntryPrice != 203 ||
				res.Trades[0].ExitPrice != 106 || res.Trades[0].IsOpen {
				t.Fatalf("trades %+v, want one closed short of 3 A from 203 to 106", res.Trades)
			}
			if x := res.Executions; len(x) != 2 || x[0].Symbol != "B" || x[1].Symbol != "A" {
				t.Fatalf("executions %+v, want B's sale then A's buy", x)
			}
		})
	}
}
