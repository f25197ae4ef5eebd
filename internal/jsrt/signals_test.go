package jsrt

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// fills is a run's executions as comparable text: date, symbol, side, size and price.
func fills(t *testing.T, code string, feeds []engine.Feed) []string {
	t.Helper()
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: feeds})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.Executions))
	for i, x := range res.Executions {
		out[i] = fmt.Sprintf("%s %s %s %g %g", day(x.Time), x.Symbol, x.Side, x.Size, x.Price)
	}
	return out
}

func sameFills(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) < 4 {
		t.Fatalf("%s: only %d fills to compare", what, len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: %d fills\n%s\nwant %d\n%s", what, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// A longshort signal trades as the same rules written out in next(): flat, enter on the
// signal's side; in the market, on the opposite side close and enter the other way, both
// at the next open.
func TestSignalsAsNext(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{{Symbol: "X", Bars: walk(300)}}
	signal := `class S extends Strategy {
  static signals = [{ type: 'longshort', line: (s) => s.data.close.sub(ind.SMA(s.data.close, 8)) }];
  init() { this.setSizer({ type: 'fixed', stake: 3 }); }
}`
	byHand := `class H extends Strategy {
  init() { this.sig = this.data.close.sub(ind.SMA(this.data.close, 8)); }
  next() {
    const x = this.sig[0], size = this.position.size;
    if (size === 0) {
      if (x > 0) this.buy({ size: 3 }); else if (x < 0) this.sell({ size: 3 });
    } else if (size > 0 && x < 0) { this.close(); this.sell({ size: 3 }); }
    else if (size < 0 && x > 0) { this.close(); this.buy({ size: 3 }); }
  }
}`
	sameFills(t, "longshort", fills(t, signal, feeds), fills(t, byHand, feeds))

	// signalAdd in init() is the same signal
	added := `class A extends Strategy {
  init() { this.setSizer({ type: 'fixed', stake: 3 }); this.signalAdd('LONGSHORT', this.data.close.sub(ind.SMA(this.data.close, 8))); }
}`
	sameFills(t, "signalAdd", fills(t, added, feeds), fills(t, byHand, feeds))
}

// The _inv types read the line the other way round: long_inv of -x trades as long of x,
// and a longexit_inv of -y as a longexit of y (which, unlike the _inv one, also stops the
// long signal's short side from closing the long).
func TestSignalsInverted(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{{Symbol: "X", Bars: walk(300)}}
	code := func(long, exit string) string {
		return `class S extends Strategy {
  static signals = [
    { type: '` + long + `', line: (s) => ` + map[bool]string{true: "ind.SMA(s.data.close, 8).sub(s.data.close)", false: "s.data.close.sub(ind.SMA(s.data.close, 8))"}[strings.HasSuffix(long, "_inv")] + ` },
    { type: '` + exit + `', line: (s) => ` + map[bool]string{true: "ind.SMA(s.data.close, 12).sub(ind.SMA(s.data.close, 3))", false: "ind.SMA(s.data.close, 3).sub(ind.SMA(s.data.close, 12))"}[strings.HasSuffix(exit, "_inv")] + ` },
  ];
}`
	}
	sameFills(t, "long_inv", fills(t, code("long_inv", "shortexit"), feeds), fills(t, code("long", "shortexit"), feeds))
	sameFills(t, "signal_ prefix", fills(t, code("SIGNAL_LONG", "shortexit"), feeds), fills(t, code("long", "shortexit"), feeds))
	plain, inv := fills(t, code("long", "longexit"), feeds), fills(t, code("long", "longexit_inv"), feeds)
	if strings.Join(plain, "\n") == strings.Join(inv, "\n") {
		t.Error("longexit_inv trades as longexit: only a plain longexit should keep the long signal from closing the long")
	}
}

// signalOptions.data sends the orders to another feed, named by index or symbol; the
// signal stays on the feed its line was made of.
func TestSignalsTargetFeed(t *testing.T) {
	t.Parallel()
	other := walk(300)
	for i := range other {
		b := &other[i]
		b.Open, b.High, b.Low, b.Close = b.Open*2, b.High*2, b.Low*2, b.Close*2
	}
	feeds := []engine.Feed{{Symbol: "X", Bars: walk(300)}, {Symbol: "Y", Bars: other}}
	code := func(data string) string {
		return `class S extends Strategy {
  static signals = { type: 'longshort', line: (s) => s.data0.close.sub(ind.SMA(s.data0.close, 8)) };
  static signalOptions = { data: ` + data + ` };
}`
	}
	byIndex := fills(t, code("1"), feeds)
	sameFills(t, "data by symbol", fills(t, code("'Y'"), feeds), byIndex)
	first := fills(t, code("0"), feeds)
	if len(first) != len(byIndex) {
		t.Fatalf("%d fills on X, %d on Y: the same signal should trade as often", len(first), len(byIndex))
	}
	for i := range byIndex {
		if !strings.Contains(byIndex[i], " Y ") || !strings.Contains(first[i], " X ") || first[i][:10] != byIndex[i][:10] {
			t.Fatalf("fill %d: %q on data 1, %q on data 0", i, byIndex[i], first[i])
		}
	}
}

// Bad signals are refused with messages that say what is wrong.
func TestSignalErrors(t *testing.T) {
	t.Parallel()
	one := []engine.Feed{{Symbol: "X", Bars: walk(40)}}
	line := "line: (s) => s.data.close.sub(ind.SMA(s.data.close, 5))"
	cases := []struct{ name, body, want string }{
		{"not a list", `static signals = 'long';`, "static signals must be an array of {type, line} objects"},
		{"entry not an object", `static signals = ['long'];`, "signals[0] must be an object {type, line}, got long"},
		{"unknown type", `static signals = [{ type: 'buy', ` + line + ` }];`, `signals[0]: unknown signal type "buy" (use longshort, long, long_inv, long_any, short, short_inv, short_any, longexit, longexit_inv, longexit_any, shortexit, shortexit_inv, shortexit_any)`},
		{"no type", `static signals = [{ ` + line + ` }];`, `signals[0]: unknown signal type ""`},
		{"unknown key", `static signals = [{ type: 'long', ` + line + `, period: 5 }];`, `signals[0]: unknown key "period" (an entry is {type, line})`},
		{"line not a function", `static signals = [{ type: 'long', line: 5 }];`, "signals[0].line must be a function of the strategy returning the signal line"},
		{"line returns a number", `static signals = [{ type: 'long', line: () => 1 }];`, "signals[0].line: the signal must be a line or an indicator, got 1"},
		{"line returns nothing", `static signals = [{ type: 'long', line: () => {} }];`, "signals[0].line: the signal must be a line or an indicator, got undefined"},
		{"line throws", `static signals = [{ type: 'long', line: () => { throw new Error('no line'); } }];`, "no line"},
		{"options not an object", `static signals = [{ type: 'long', ` + line + ` }]; static signalOptions = true;`, "static signalOptions must be an object {accumulate, concurrent, data}"},
		{"options unknown key", `static signals = [{ type: 'long', ` + line + ` }]; static signalOptions = { accumulated: true };`, `signalOptions: unknown key "accumulated" (use accumulate, concurrent, data)`},
		{"options not boolean", `static signals = [{ type: 'long', ` + line + ` }]; static signalOptions = { concurrent: 1 };`, "signalOptions.concurrent must be true or false, got 1"},
		{"options bad feed", `static signals = [{ type: 'long', ` + line + ` }]; static signalOptions = { data: 1 };`, "signalOptions.data must be the index of one of the run's 1 feeds or a symbol, got 1"},
		{"options bad symbol", `static signals = [{ type: 'long', ` + line + ` }]; static signalOptions = { data: 'Z' };`, `signalOptions.data: no feed has the symbol "Z"`},
		{"options without signals", `static signalOptions = { accumulate: true };`, "static signalOptions without signals: declare static signals or call this.signalAdd(type, line) in init()"},
		{"signalAdd in next", `next() { this.signalAdd('long', this.data.close); }`, "signalAdd must be called in init()"},
		{"signalAdd bad type", `init() { this.signalAdd('up', this.data.close); }`, `signalAdd: unknown signal type "up"`},
		{"signalAdd not a line", `init() { this.signalAdd('long', 'close'); }`, "signalAdd: the signal must be a line or an indicator, got close"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := "class T extends Strategy {\n  " + c.body + "\n}\n"
			_, err := Run(context.Background(), RunConfig{Code: code, Feeds: one})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}
