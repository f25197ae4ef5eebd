package jsrt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// walk returns n deterministic daily bars.
func walk(n int) []engine.Bar {
	bars := make([]engine.Bar, n)
	t := time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC)
	p := 100.0
	for i := range bars {
		p *= 1 + 0.01*math.Sin(float64(i)*0.7)
		bars[i] = engine.Bar{Time: t.AddDate(0, 0, i), Open: p, High: p * 1.01, Low: p * 0.99, Close: p, Volume: 1000}
	}
	return bars
}

func TestSandbox(t *testing.T) {
	feeds := []engine.Feed{{Symbol: "X", Bars: walk(300)}}
	tests := []struct {
		name string
		code string
		kind ErrorKind
		msg  string
		line int
		mem  uint64
	}{
		{"endless loop in next", "class A extends Strategy {\n next() { while (true) {} }\n}", "timeout", "time limit", 0, 0},
		{"endless loop in init", "class A extends Strategy {\n init() { for (;;) {} }\n}", "timeout", "time limit", 0, 0},
		{"unbounded allocation", "class A extends Strategy {\n init() { const a = []; while (true) a.push(new Float64Array(1 << 20)); }\n}", "memory", "ran out of memory", 0, 64 << 20},
		{"deep recursion", "function f(n) { return f(n + 1) + 1; }\nclass A extends Strategy {\n next() { f(0); }\n}", "strategy", "RangeError: Maximum call stack size exceeded", 1, 0},
		{"throws", "class A extends Strategy {\n next() {\n  throw new Error('bad signal');\n }\n}", "strategy", "Error: bad signal", 3, 0},
		{"require", "class A extends Strategy {\n init() { require('fs'); }\n}", "strategy", "ReferenceError: require is not defined", 2, 0},
		{"process", "class A extends Strategy {\n init() { process.exit(1); }\n}", "strategy", "ReferenceError: process is not defined", 2, 0},
		{"setTimeout", "class A extends Strategy {\n init() { setTimeout(() => {}, 1); }\n}", "strategy", "ReferenceError: setTimeout is not defined", 2, 0},
		{"fetch", "class A extends Strategy {\n next() { fetch('http://example.com'); }\n}", "strategy", "ReferenceError: fetch is not defined", 2, 0},
		{"bad order", "class A extends Strategy {\n next() { this.buy({size: 1, exectype: 'Limit', price: -5}); }\n}", "strategy", "Limit order needs a positive price", 2, 0},
		{"unknown parameter", "class A extends Strategy {}", "strategy", "Unknown parameter: nope", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := RunConfig{Code: tc.code, Feeds: feeds, WallTimeLimit: 500 * time.Millisecond, MemoryLimit: tc.mem}
			if tc.mem > 0 {
				cfg.WallTimeLimit = 5 * time.Second // the memory budget must stop it first
			}
			if tc.name == "unknown parameter" {
				cfg.Params = map[string]any{"nope": 1}
			}
			start := time.Now()
			_, err := Run(context.Background(), cfg)
			// The kind check proves which limit fired; the bound only catches a run that
			// ignores interruption, with room for a loaded CI machine under -race.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
			var re *RunError
			if !errors.As(err, &re) {
				t.Fatalf("want *RunError, got %v", err)
			}
			if re.Kind != tc.kind || !strings.Contains(re.Message, tc.msg) {
				t.Errorf("got %s %q, want %s containing %q", re.Kind, re.Message, tc.kind, tc.msg)
			}
			if tc.line != 0 && re.Line != tc.line {
				t.Errorf("line %d, want %d", re.Line, tc.line)
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := Run(ctx, RunConfig{Code: "class A extends Strategy { next() { while (true) {} } }", Feeds: []engine.Feed{{Bars: walk(50)}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "cancelled" {
		t.Fatalf("want cancelled RunError, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second { // interrupted at all, not how fast: see process tests
		t.Errorf("took %s", d)
	}
}

func TestStrategyAPI(t *testing.T) {
	t.Parallel()
	code := `/**
 * Exercises the API.
 * n: number of bars
 */
class Api extends Strategy {
  static params = { n: 5 };
  init() {
    this.sma = ind.SMA(this.data, 3);
    this.bars = 0;
    this.log('init ' + this.p.n + ' ' + this.params.n, 'debug');
  }
  next() {
    this.bars++;
    if (this.bars === 1) {
      if (this.data.close[-1] !== this.data.close[-1]) throw new Error('close[-1] missing');
      if (!(this.sma[0] > 0)) throw new Error('sma');
      this.order = this.buy({ size: 5 });
      this.lim = this.buy({ size: 1, exectype: 'Limit', price: 1 });
    }
    if (this.bars === 2) {
      if (this.position.size !== 5) throw new Error('position ' + this.position.size);
      this.cancel(this.lim);
      this.orderTargetSize({ target: 2 });
    }
    if (this.bars === 3) {
      if (this.position.size !== 2) throw new Error('position ' + this.position.size);
      this.orderTargetPercent({ target: 0 });
    }
    if (this.bars === 4) {
      if (this.position.size !== 0) throw new Error('position ' + this.position.size);
      this.sell({ size: 3 });
    }
    if (this.bars === 5) {
      if (this.position.size !== -3) throw new Error('short ' + this.position.size);
      this.close();
      if (this.broker.getCash() !== this.broker.cash) throw new Error('cash');
      this.log('value ' + this.broker.value.toFixed(2), 'WARNING');
    }
  }
  notifyTrade(trade) { if (trade.isclosed) this.closed = (this.closed || 0) + 1; }
  stop() { this.log('closed ' + this.closed + ' ' + this.data.date(0)); }
}`
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(20)}}, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstNext != 3 {
		t.Errorf("first next %d", res.FirstNext)
	}
	var msgs []string
	for _, l := range res.Logs {
		msgs = append(msgs, l.Level+" "+l.Message)
	}
	joined := strings.Join(msgs, "\n")
	for _, want := range []string{"DEBUG init 5 5", "WARNING value", "INFO closed 2 2000-01-22"} {
		if !strings.Contains(joined, want) {
			t.Errorf("logs missing %q:\n%s", want, joined)
		}
	}
	if len(res.Trades) != 2 || res.Trades[1].Size != -3 {
		t.Errorf("trades %+v", res.Trades)
	}
	if len(res.OrderEvents) != 1 || res.OrderEvents[0].Status != "Canceled" {
		t.Errorf("events %+v", res.OrderEvents)
	}
}

// Nothing of the host's Go internals (symbol names, package paths, addresses) shows
// through the objects a strategy can reach.
func TestHostObjectsLeakNothing(t *testing.T) {
	t.Parallel()
	code := `class Leak extends Strategy {
  init() { this.sma = ind.SMA(this.data.close, 3); }
  next() {
    const o = this.buy({ size: 1 });
    const parts = [this.broker.getCash, this.broker.getValue, this.broker, this.data, this.data.close,
      this.data.date, this.position, this.sma, ind.SMA, ind, Strategy, o, o && o.isBuy, o && o.alive];
    for (const p of parts) {
      this.log(String(p));
      if (typeof p === 'function') this.log(p.name);
      if (p && typeof p === 'object') this.log(Object.keys(p).map(k => k + '=' + String(p[k])).join(','));
    }
    for (const k of Object.getOwnPropertyNames(globalThis)) this.log(k + ':' + String(globalThis[k]));
    this.stopped = true;
  }
}`
	var lines []string
	_, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "AAA", Bars: walk(10)}},
		OnLog: func(le engine.LogEntry) { lines = append(lines, le.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 20 {
		t.Fatalf("only %d lines logged", len(lines))
	}
	for _, l := range lines {
		for _, bad := range []string{"github.com", "-fm", "0xc0", "func(", "goja", "backtestd"} {
			if strings.Contains(l, bad) {
				t.Errorf("log line shows %q: %s", bad, l)
			}
		}
	}
}

func TestErrorsInJavaScriptWords(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), RunConfig{Code: `class E extends Strategy { next() { String(Object.create(null)); } }`,
		Feeds: []engine.Feed{{Symbol: "AAA", Bars: walk(10)}}})
	if err == nil || strings.Contains(err.Error(), "0x") || strings.Contains(err.Error(), "goja") ||
		!strings.Contains(err.Error(), "Cannot convert object to primitive value") {
		t.Fatalf("error %v", err)
	}
}

// The valid option's forms, and what a strategy sees of them; bad values are errors that
// name the option.
func TestOrderValidOption(t *testing.T) {
	t.Parallel()
	code := func(valid string) string {
		return `class V extends Strategy { next() { if (this.data.length === 1) { const o = this.buy({ exectype: 'Limit', price: 1, valid: ` + valid + ` }); this.log('valid ' + o.valid); } } }`
	}
	cases := []struct {
		valid, want, err string
	}{
		{`'Day'`, "valid 2000-01-03T23:59:59Z", ""},
		{`{ days: 2 }`, "valid 2000-01-05", ""},
		{`3`, "valid 2000-01-06", ""},
		{`'2000-01-05'`, "valid 2000-01-04T23:59:59Z", ""},
		{`'GTC'`, "valid null", ""},
		{`undefined`, "valid null", ""},
		{`'tomorrow'`, "", `valid: "tomorrow" is not a date (YYYY-MM-DD), 'Day' or 'GTC'`},
		{`-1`, "", "valid: days must be a number of 0 or more"},
		{`true`, "", "valid must be a date"},
	}
	for _, c := range cases {
		res, err := Run(context.Background(), RunConfig{Code: code(c.valid), Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("valid %s: error %v, want %q", c.valid, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("valid %s: %v", c.valid, err)
			continue
		}
		found := false
		for _, l := range res.Logs {
			found = found || l.Message == c.want
		}
		if !found {
			t.Errorf("valid %s: logs %+v, want %q", c.valid, res.Logs, c.want)
		}
	}
}

// A static resample adds a coarser feed after the given ones: each bar seen once its
// period is over, stamped with its last bar's date; orders cannot go to it; bad specs
// are errors that say what is wrong.
func TestResampledFeed(t *testing.T) {
	t.Parallel()
	run := func(static, body string) (*engine.Result, error) {
		code := `class R extends Strategy { static resample = ` + static + `; next() { ` + body + ` } }`
		return Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(20)}}})
	}
	res, err := run(`{ timeframe: 'weeks' }`, `if (this.data.length === 8 || this.data.length === 14) this.log([this.datas.length, this.datas[1].length, this.datas[1].date(0), this.datas[1].datetime[0].toISOString().slice(0, 10), this.datas[1].volume[0]].join(' '));`)
	if err != nil {
		t.Fatal(err)
	}
	// walk's days run from Monday 2000-01-03: the first week's 7 bars come with the 8th.
	if got := strings.Join(strategyLines(res), "; "); got != "2 1 2000-01-09 2000-01-09 7000; 2 1 2000-01-09 2000-01-09 7000" {
		t.Errorf("lines %q", got)
	}
	if res.FirstNext != 8 {
		t.Errorf("first next %d, want 8 (the first weekly bar)", res.FirstNext)
	}
	for _, c := range []struct{ static, body, err string }{
		{`{ timeframe: 'weeks' }`, `this.buy({ data: this.datas[1], size: 1 });`, "orders go to the feeds the run was given, not to a resampled one (this.datas[1])"},
		{`{ timeframe: 'days' }`, ``, "resample[0]: timeframe must be 'weeks', 'months' or 'years'"},
		{`[{ timeframe: 'weeks', data: 1 }]`, ``, "resample[0].data must be the index of one of the run's 1 feeds"},
		{`{ timeframe: 'months', compression: 1.5 }`, ``, "resample[0].compression must be a whole number"},
		{`'weeks'`, ``, "static resample must be an object"},
	} {
		if _, err := run(c.static, c.body); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.static, err, c.err)
		}
	}
}

// An order's tradeid: on the order and its trade as the strategy sees them; not a whole
// number of 0 or more is an error.
func TestOrderTradeID(t *testing.T) {
	t.Parallel()
	code := func(id string) string {
		return `class T extends Strategy {
  next() {
    if (this.data.length === 1) this.log('order ' + this.buy({ size: 1, tradeid: ` + id + ` }).tradeid);
    if (this.data.length === 3) this.close({ tradeid: ` + id + ` });
  }
  notifyTrade(t) { this.log('trade ' + t.tradeid + (t.isclosed ? ' closed' : ' opened')); }
}`
	}
	res, err := Run(context.Background(), RunConfig{Code: code("5"), Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strategyLines(res), "; "); got != "order 5; trade 5 opened; trade 5 closed" {
		t.Errorf("lines %q", got)
	}
	if len(res.Trades) != 1 || res.Trades[0].TradeID != 5 {
		t.Errorf("trades %+v", res.Trades)
	}
	for _, bad := range []string{"1.5", "-1", "'x'"} {
		_, err := Run(context.Background(), RunConfig{Code: code(bad), Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}})
		if err == nil || !strings.Contains(err.Error(), "tradeid must be") {
			t.Errorf("tradeid %s: error %v", bad, err)
		}
	}
}

// Sizers size buy() and sell() without a size; bad sizers are errors that say why.
func TestSizers(t *testing.T) {
	t.Parallel()
	run := func(setup string) (*engine.Result, error) {
		code := `class S extends Strategy { init() { ` + setup + ` } next() { if (this.data.length === 1) this.buy(); if (this.data.length === 2) this.buy({ size: 2 }); } }`
		return Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}})
	}
	sizes := func(res *engine.Result) []float64 {
		var out []float64
		for _, x := range res.Executions {
			out = append(out, x.Size)
		}
		return out
	}
	for _, c := range []struct {
		setup string
		want  []float64
	}{
		{``, []float64{1, 2}},
		{`this.setSizer({ type: 'fixed', stake: 7 });`, []float64{7, 2}},
		{`this.setSizer(() => 3.7);`, []float64{3.7, 2}},
		{`this.setSizer(() => -4);`, []float64{4, 2}}, // the sign is the order's: buy() buys
		{`this.setSizer(() => 0);`, []float64{2}},     // no order, as backtrader's "if size"
	} {
		res, err := run(c.setup)
		if err != nil {
			t.Errorf("%s: %v", c.setup, err)
			continue
		}
		if fmt.Sprint(sizes(res)) != fmt.Sprint(c.want) {
			t.Errorf("%s: sizes %v, want %v", c.setup, sizes(res), c.want)
		}
	}
	for _, c := range []struct{ setup, err string }{
		{`this.setSizer({ type: 'kelly' });`, `setSizer: unknown type "kelly"`},
		{`this.setSizer({ type: 'percent', percents: 0 });`, "percents must be more than 0"},
		{`this.setSizer(5);`, "setSizer expects"},
		{`this.setSizer(() => 'many');`, "the sizer returned many, not a number of units"},
		{`this.setSizer(() => { throw new Error('no size today'); });`, "no size today"},
	} {
		if _, err := run(c.setup); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.setup, err, c.err)
		}
	}
}

// nextStart runs once, on the first bar next would run on (after the warm-up), instead
// of next; without one, next runs there as in backtrader.
func TestNextStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ extra, want string }{
		{`nextStart() { this.log('start ' + this.data.length); }`, "pre 1,pre 2,start 3,next 4,next 5"},
		{``, "pre 1,pre 2,next 3,next 4,next 5"},
		{`nextStart() { this.log('start ' + this.data.length); super.nextStart(); }`, "pre 1,pre 2,start 3,next 3,next 4,next 5"},
	} {
		code := `class N extends Strategy { init() { this.sma = ind.SMA(this.data, 3); } prenext() { this.log('pre ' + this.data.length); } next() { this.log('next ' + this.data.length); } ` + c.extra + ` }`
		res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}})
		if err != nil {
			t.Fatal(err)
		}
		got := strategyLines(res)
		if strings.Join(got, ",") != c.want {
			t.Errorf("%q: calls %s, want %s", c.extra, strings.Join(got, ","), c.want)
		}
	}
}

// setCommission's schemes, and its errors.
func TestSetCommission(t *testing.T) {
	t.Parallel()
	run := func(setup string) (*engine.Result, error) {
		code := `class C extends Strategy { init() { ` + setup + ` } next() { if (this.data.length === 1) this.buy({ size: 10 }); } }`
		return Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(5)}}, Commission: 0.001})
	}
	res, err := run(``)
	if err != nil {
		t.Fatal(err)
	}
	fill := res.Executions[0]
	for _, c := range []struct {
		setup string
		want  float64
	}{
		{``, 10 * 0.001 * fill.Price},
		{`this.broker.setCommission({ commission: 0.002 });`, 10 * 0.002 * fill.Price},
		{`this.broker.setCommission({ commission: 0.05, commtype: 'fixed' });`, 10 * 0.05},
		{`this.broker.setCommission({ commission: 0.05, commtype: 'fixed', minimum: 1 });`, 1},
		{`this.broker.setCommission({ commission: 2, margin: 100, mult: 5 });`, 10 * 2},
	} {
		res, err := run(c.setup)
		if err != nil {
			t.Errorf("%s: %v", c.setup, err)
			continue
		}
		if got := res.Executions[0].Commission; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: commission %v, want %v", c.setup, got, c.want)
		}
	}
	for _, c := range []struct{ setup, err string }{
		{`this.broker.setCommission({ commission: -1 });`, "must be numbers of 0 or more"},
		{`this.broker.setCommission({ commission: 2 });`, "a percent commission is a fraction below 1"},
		{`this.broker.setCommission({ commission: 1, commtype: 'perShare' });`, "commtype must be 'percent' or 'fixed'"},
		{`this.broker.setCommission(0.001);`, "setCommission expects"},
	} {
		if _, err := run(c.setup); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.setup, err, c.err)
		}
	}
}

// Line arithmetic, comparisons, the strategy's own indicators and options-object
// parameters, with their warm-up; and the stub list of indicator names matches ind.
func TestLinesYouComputeWith(t *testing.T) {
	t.Parallel()
	code := `class L extends Strategy {
  init() {
    const c = this.data.close;
    this.fast = ind.SMA(c, { period: 3 });
    this.slow = ind.SMA(c, 5);
    this.spread = ind.Sub(this.fast, this.slow);
    this.ratio = ind.Div(this.fast, this.slow);
    this.twice = ind.Mul(2, c);
    this.above = ind.Gt(this.fast, this.slow);
    this.z = ind.Div(ind.Sub(c, ind.SMA(c, 4)), ind.StdDev(c, 4));
    this.mine = ind.Apply([this.fast, this.slow], (f, s, i) => f - s + i, { warmup: 1 });
    this.whole = ind.Compute(c, (xs) => xs.map((x, i) => (i < 2 ? NaN : x - xs[i - 2])));
    this.macd = ind.MACD(c, { fast: 3, slow: 6, signal: 2 });
    this.macdPos = ind.MACD(c, 3, 6, 2);
    this.methods = [this.fast.sub(this.slow), this.fast.gt(this.slow), c.sub(ind.SMA(c, 4)).div(ind.StdDev(c, 4)), c.mul(2)];
  }
  next() {
    const n = this.data.length;
    const v = (l) => (Number.isNaN(l[0]) ? 'NaN' : l[0].toFixed(6));
    this.log([n, v(this.spread), v(this.ratio), v(this.twice), v(this.above), v(this.z), v(this.mine), v(this.whole),
      v(this.macd.macd) === v(this.macdPos.macd) ? 'same' : 'differ',
      this.methods.map(v).join() === [v(this.spread), v(this.above), v(this.z), v(this.twice)].join() ? 'same' : 'differ'].join(' '));
  }
}`
	bars := walk(12)
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
	if err != nil {
		t.Fatal(err)
	}
	// next() first runs when every line has a value: the slow SMA and the z-score from bar
	// 5, Apply one bar later (warmup 1), MACD(3, 6, 2) from bar 6+2-1 = 7.
	if res.FirstNext != 7 {
		t.Errorf("first next at bar %d, want 7", res.FirstNext)
	}
	closes := make([]float64, len(bars))
	for i, b := range bars {
		closes[i] = b.Close
	}
	sma := func(i, p int) float64 {
		s := 0.0
		for _, x := range closes[i-p+1 : i+1] {
			s += x
		}
		return s / float64(p)
	}
	lines := strategyLines(res)
	i := 6 // bar 7
	f, s := sma(i, 3), sma(i, 5)
	above := "0.000000"
	if f > s {
		above = "1.000000"
	}
	want := fmt.Sprintf("7 %.6f %.6f %.6f %s", f-s, f/s, 2*closes[i], above)
	if len(lines) == 0 || !strings.HasPrefix(lines[0], want) {
		t.Fatalf("bar 7: %q, want prefix %q", lines, want)
	}
	fields := strings.Fields(lines[0])
	if fields[6] != fmt.Sprintf("%.6f", f-s+float64(i)) || fields[7] != fmt.Sprintf("%.6f", closes[i]-closes[i-2]) || fields[8] != "same" || fields[9] != "same" {
		t.Errorf("own indicators and options: %q", lines[0])
	}

	for _, c := range []struct{ code, err string }{
		{`ind.Apply(this.data.close, 5)`, "Apply: expected a function"},
		{`ind.Compute(this.data.close, (xs) => [1, 2])`, "Compute: the function must return an array of 12 values"},
		{`ind.SMA(this.data.close, { period: 0 })`, "SMA: period must be a positive integer"},
		{`ind.Apply(this.data.close, (x) => { throw new Error('mine failed'); })`, "mine failed"},
		{`ind.Add(1, 2)`, "Add: expected a line"},
		{`this.data.close.sub('x')`, "Sub: expected a line"},
		{`ind.Apply(5, (x) => x)`, "Apply: expected a line"},
	} {
		_, err := Run(context.Background(), RunConfig{Code: `class E extends Strategy { init() { ` + c.code + `; } }`, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.code, err, c.err)
		}
	}

	// The names Inspect stubs are ind's own.
	h := &host{rt: goja.New()}
	keys := h.indObject().Keys()
	sort.Strings(keys)
	names := append([]string(nil), indicatorNames()...)
	sort.Strings(names)
	if strings.Join(keys, ",") != strings.Join(names, ",") {
		t.Errorf("ind has %v, indicatorNames %v", keys, names)
	}
}

// Lines of two feeds combine by time: each bar of the first input takes the second's
// latest value at or before it.
func TestLinesOfTwoFeedsAlignByTime(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	bar := func(d int, c float64) engine.Bar { return engine.Bar{Time: day(d), Open: c, High: c, Low: c, Close: c} }
	a := []engine.Bar{bar(1, 10), bar(2, 11), bar(3, 12), bar(4, 13), bar(5, 14)}
	b := []engine.Bar{bar(2, 100), bar(4, 300), bar(5, 400)} // none on the 1st and the 3rd
	code := `class P extends Strategy {
  init() { this.spread = ind.Sub(this.datas[1].close, this.datas[0].close); this.x = ind.CrossOver(this.datas[0].close, ind.Mul(0.1, this.datas[1].close)); }
  next() { this.log(this.data.date(0) + ' ' + this.spread[0]); }
}`
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "A", Bars: a}, {Symbol: "B", Bars: b}}})
	if err != nil {
		t.Fatal(err)
	}
	got := strategyLines(res)
	// The spread is a line of feed B (its first input): B's bars, A's value of the same date;
	// on the 3rd, B has no bar and its line stays at the 2nd's. next() starts on the 3rd:
	// the crossover, a line of A, has its first value where B's price has two.
	want := "2024-01-03 89,2024-01-04 287,2024-01-05 386"
	if strings.Join(got, ",") != want {
		t.Errorf("spread %q, want %q", strings.Join(got, ","), want)
	}
}

// strategyLines are the messages the strategy itself logged.
func strategyLines(res *engine.Result) []string {
	var out []string
	for _, l := range res.Logs {
		if l.Source == "strategy" {
			out = append(out, l.Message)
		}
	}
	return out
}
