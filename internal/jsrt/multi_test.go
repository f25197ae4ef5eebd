package jsrt

import (
	"context"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestSeveralStrategiesErrors checks that a strategies array the engine cannot run is
// refused with a message that says why, and what a valid one runs.
func TestSeveralStrategiesErrors(t *testing.T) {
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(80, 5)}}
	const a = "class A extends Strategy {\n  static params = { size: 2 };\n  next() { if (this.data.length % 10 === 0) this.buy({ size: this.p.size }); }\n  notifyOrder(o) { if (o.status === 'Completed') this.log('A got ' + o.ref); }\n}\n"
	const b = "class B extends Strategy {\n  init() { this.sma = ind.SMA(this.data.close, 20); }\n  next() { if (this.data.length % 10 === 5) this.sell({ size: 1 }); }\n  notifyOrder(o) { if (o.status === 'Completed') this.log('B got ' + o.ref); }\n}\n"
	cases := []struct {
		name, code, want string
	}{
		{"not an array", a + "const strategies = A;", "strategies must be an array"},
		{"empty", a + "const strategies = [];", "strategies is empty"},
		{"not a strategy", a + "const strategies = [A, Date];", "strategies[1] is not a Strategy subclass"},
		{"no class", a + "const strategies = [{ params: {} }];", "strategies[0] must be a Strategy class or {strategy, params}: its strategy is missing"},
		{"unknown param", a + "const strategies = [{ strategy: A, params: { nope: 1 } }];", "strategies[0] (A): Unknown parameter: nope"},
		{"params not an object", a + "const strategies = [{ strategy: A, params: 3 }];", "strategies[0].params must be an object"},
		{"resample on another class", a + "class C extends Strategy { static resample = { timeframe: 'weeks' }; }\nconst strategies = [A, C];", "declare static resample on A"},
		{"two strategies", a + b + "const strategies = [A, { strategy: A, params: { size: 3 } }, B];", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), RunConfig{Code: c.code, Feeds: feeds, Cash: 10000})
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Strategies) != 3 || res.Strategies[0].Name != "A" || res.Strategies[1].Name != "A" || res.Strategies[2].Name != "B" {
				t.Fatalf("strategies %+v", res.Strategies)
			}
			if res.Strategies[0].FirstNext != 1 || res.Strategies[2].FirstNext != 20 || res.FirstNext != 1 {
				t.Errorf("first next bars %d, %d, %d (run %d), want 1, 1, 20 (1): each strategy's own warm-up",
					res.Strategies[0].FirstNext, res.Strategies[1].FirstNext, res.Strategies[2].FirstNext, res.FirstNext)
			}
			// The trades still open at the end are each strategy's own (A buys 2 and 3 at a
			// time and never sells, B sells 1 at a time out of their shared position).
			open := map[int]float64{}
			for _, tr := range res.Trades {
				if tr.IsOpen {
					open[tr.Strategy] = tr.Size
				}
			}
			if len(open) != 3 || open[0] <= 0 || open[1] <= 0 || open[2] >= 0 || int(open[0])%2 != 0 || int(open[1])%3 != 0 {
				t.Errorf("open trades by strategy %v, want one for each: A's long in 2s, the other A's in 3s, B's short", open)
			}
			// Each strategy is notified of its own orders only, and the sizes are its own.
			owner := map[int]int{}
			for _, x := range res.Executions {
				owner[x.Ref] = x.Strategy
				if want := map[int]float64{0: 2, 1: 3, 2: -1}[x.Strategy]; x.Size != want {
					t.Errorf("fill of order %d (strategy %d) of size %v, want %v", x.Ref, x.Strategy, x.Size, want)
				}
			}
			got := 0
			for _, l := range res.Logs {
				var who string
				var ref int
				if n, _ := fmtSscan(l.Message, &who, &ref); n != 2 {
					continue
				}
				got++
				if want := map[int]string{0: "A", 1: "A", 2: "B"}[owner[ref]]; who != want {
					t.Errorf("%s was notified of order %d, strategy %d's", who, ref, owner[ref])
				}
			}
			if got == 0 || got != len(res.Executions) {
				t.Errorf("%d completions notified for %d fills", got, len(res.Executions))
			}
		})
	}
}

// fmtSscan reads "<name> got <ref>".
func fmtSscan(s string, who *string, ref *int) (int, error) {
	name, rest, ok := strings.Cut(s, " got ")
	if !ok {
		return 0, nil
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 1, nil
		}
		n = n*10 + int(c-'0')
	}
	*who, *ref = name, n
	return 2, nil
}

// TestOrderHistoryErrors checks that an order history the engine cannot run is refused
// with a message that says why, and what a valid one does with notify true and false.
func TestOrderHistoryErrors(t *testing.T) {
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(60, 7)}, {Symbol: "RX", Bars: engine.RandomWalk(60, 8)}}
	cases := []struct {
		name, init, extra, want string
		fills                   int
		notified                int
	}{
		{"not an array", `this.broker.addOrderHistory({})`, "", "addOrderHistory expects an array", 0, 0},
		{"short entry", `this.broker.addOrderHistory([['1970-01-05', 1]])`, "", "entry 0 has 2 fields", 0, 0},
		{"bad date", `this.broker.addOrderHistory([['05/01/1970', 1, 10]])`, "", `date "05/01/1970" is not YYYY-MM-DD`, 0, 0},
		{"zero size", `this.broker.addOrderHistory([['1970-01-05', 0, 10]])`, "", "size must be a number other than 0", 0, 0},
		{"bad price", `this.broker.addOrderHistory([['1970-01-05', 1, -3]])`, "", "price must be a positive number", 0, 0},
		{"out of order", `this.broker.addOrderHistory([['1970-01-09', 1, 10], ['1970-01-05', -1, 10]])`, "", "must be in time order", 0, 0},
		{"unknown symbol", `this.broker.addOrderHistory([['1970-01-05', 1, 10, 'ZZZ']])`, "", `names the symbol "ZZZ"`, 0, 0},
		{"after init", ``, `next() { this.broker.addOrderHistory([]); }`, "addOrderHistory must be called in init()", 0, 0},
		{"historical from the strategy", ``, `next() { this.buy({ exectype: 'Historical', size: 1 }); }`, "historical orders come from an order history", 0, 0},
		{"notified", `this.broker.addOrderHistory([['1970-01-05', 2, 10], ['1970-01-09T00:00:00', -2, 12.5, 'RX'], [new Date(Date.UTC(1970, 0, 20)), -2, 11, this.datas[0]]], { notify: true })`,
			`notifyOrder(o) { if (o.status === 'Completed') this.log('hist ' + o.exectype + ' ' + o.executed.price); }`, "", 3, 3},
		{"not notified", `this.broker.addOrderHistory([['1970-01-05', 2, 10], ['1970-01-09', -2, 12.5, 1]], { notify: false })`,
			`notifyOrder(o) { this.log('hist ' + o.exectype); }`, "", 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := "class T extends Strategy {\n  init() { " + c.init + " }\n  " + c.extra + "\n}\n"
			res, err := Run(context.Background(), RunConfig{Code: code, Feeds: feeds, Cash: 10000})
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Executions) != c.fills {
				t.Fatalf("%d fills, want %d: %+v", len(res.Executions), c.fills, res.Executions)
			}
			for _, x := range res.Executions {
				if x.ExecType != "Historical" || x.Commission != 0 {
					t.Errorf("fill %+v: want a Historical fill without commission (none set)", x)
				}
			}
			if x := res.Executions[0]; x.Price != 10 || x.Size != 2 || x.Time.Day() != 5 || x.Symbol != "RW" {
				t.Errorf("first fill %+v, want 2 RW at 10 on 1970-01-05", x)
			}
			if x := res.Executions[1]; x.Price != 12.5 || x.Size != -2 || x.Time.Day() != 9 || x.Symbol != "RX" {
				t.Errorf("second fill %+v, want -2 RX at 12.5 on 1970-01-09", x)
			}
			notified := 0
			for _, l := range res.Logs {
				if strings.HasPrefix(l.Message, "hist Historical") {
					notified++
				}
			}
			if notified != c.notified {
				t.Errorf("notifyOrder saw %d historical orders, want %d", notified, c.notified)
			}
		})
	}
}
