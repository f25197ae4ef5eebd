package engine

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFsum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1.0},
		{[]float64{1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50}, 1e-100},
		{[]float64{1, 1e100, 1, -1e100}, 2},
		{[]float64{0.5, 0.25}, 0.75},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := Fsum(tc.in); got != tc.want {
			t.Errorf("Fsum(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	// a rolling window must equal a fresh exact sum
	vals := RandomWalk(500, 1)
	var acc exactSum
	for i, b := range vals {
		acc.add(b.Close)
		if i >= 9 {
			w := make([]float64, 10)
			for j := range w {
				w[j] = vals[i-9+j].Close
			}
			if acc.value() != Fsum(w) {
				t.Fatalf("rolling sum differs at %d", i)
			}
			acc.remove(vals[i-9].Close)
		}
	}
}

func seq(vals ...float64) Series { return Line(vals) }

func checkSeries(t *testing.T, name string, got Series, first int, want []float64) {
	t.Helper()
	if got.First != first {
		t.Errorf("%s: first %d, want %d", name, got.First, first)
	}
	for i, w := range want {
		g := got.Vals[i]
		if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w))) {
			t.Errorf("%s[%d] = %v, want %v", name, i, g, w)
		}
	}
}

var nan = math.NaN()

func TestIndicators(t *testing.T) {
	t.Parallel()
	x := seq(1, 2, 3, 4, 5, 6)
	checkSeries(t, "SMA3", SMA(x, 3), 2, []float64{nan, nan, 2, 3, 4, 5})
	// EMA(3): alpha 0.5 seeded with SMA: 2, then 2*.5+4*.5=3, 4, 5
	checkSeries(t, "EMA3", EMA(x, 3), 2, []float64{nan, nan, 2, 3, 4, 5})
	// WMA(3) at i=2: (1*1+2*2+3*3)/6
	checkSeries(t, "WMA3", WMA(x, 3), 2, []float64{nan, nan, 14.0 / 6, 20.0 / 6, 26.0 / 6, 32.0 / 6})
	checkSeries(t, "Highest", Highest(seq(3, 1, 4, 1, 5, 9, 2), 3), 2, []float64{nan, nan, 4, 4, 5, 9, 9})
	checkSeries(t, "Lowest", Lowest(seq(3, 1, 4, 1, 5, 9, 2), 3), 2, []float64{nan, nan, 1, 1, 1, 1, 2})
	checkSeries(t, "Delay", Delay(x, 2), 2, []float64{nan, nan, 1, 2, 3, 4})
	checkSeries(t, "Momentum", Momentum(x, 2), 2, []float64{nan, nan, 2, 2, 2, 2})
	checkSeries(t, "ROC", ROC(x, 1), 1, []float64{nan, 1, 0.5, 1.0 / 3, 0.25, 0.2})
	// population sd of {1,2,3} = sqrt(2/3)
	checkSeries(t, "StdDev", StdDev(x, 3), 2, []float64{nan, nan, math.Sqrt(2.0 / 3), math.Sqrt(2.0 / 3)})
	mid, top, bot := Bollinger(x, 3, 2)
	checkSeries(t, "BB.mid", mid, 2, []float64{nan, nan, 2})
	checkSeries(t, "BB.top", top, 2, []float64{nan, nan, 2 + 2*math.Sqrt(2.0/3)})
	checkSeries(t, "BB.bot", bot, 2, []float64{nan, nan, 2 - 2*math.Sqrt(2.0/3)})

	// RSI(2) on 1,2,1,2: up 1,0,1 dn 0,1,0; seeds up .5 dn .5 -> 50; then up .75 dn .25 -> 75
	checkSeries(t, "RSI2", RSI(seq(1, 2, 1, 2), 2), 2, []float64{nan, nan, 50, 75})

	// True range and ATR(2)
	hi, lo, cl := seq(10, 12, 11), seq(8, 9, 7), seq(9, 11, 8)
	checkSeries(t, "TR", TrueRange(hi, lo, cl), 1, []float64{nan, 3, 4})
	checkSeries(t, "ATR1", ATR(hi, lo, cl, 1), 1, []float64{nan, 3, 4})

	// Stochastic(2,1,1): k = 100*(c-ll)/(hh-ll)
	k, d := Stochastic(hi, lo, cl, 2, 1, 1)
	checkSeries(t, "StochK", k, 1, []float64{nan, 100 * (11 - 8) / 4.0, 100 * (8 - 7) / 5.0})
	checkSeries(t, "StochD", d, 1, []float64{nan, 75, 20})

	// MACD of a line: fast EMA(2), slow EMA(3), signal EMA(2)
	m, s, h := MACD(x, 2, 3, 2)
	if m.First != 2 || s.First != 3 || h.First != 3 {
		t.Errorf("MACD firsts %d %d %d", m.First, s.First, h.First)
	}

	// CrossOver with the last-non-zero-difference rule: an equal bar does
	// not reset the state.
	a := seq(1, 2, 2, 3, 1)
	b := seq(2, 2, 2, 2, 2)
	checkSeries(t, "CrossOver", CrossOver(a, b), 1, []float64{nan, 0, 0, 1, -1})
	checkSeries(t, "CrossUp", CrossUp(a, b), 1, []float64{nan, 0, 0, 1, 0})
	checkSeries(t, "CrossDown", CrossDown(a, b), 1, []float64{nan, 0, 0, 0, 1})
}

type script struct {
	next func(e *Engine)
}

func (s *script) Next(e *Engine) error                   { s.next(e); return nil }
func (s *script) Prenext(*Engine) error                  { return nil }
func (s *script) NotifyOrder(*Engine, *Order) error      { return nil }
func (s *script) NotifyTrade(*Engine, *TradeState) error { return nil }
func (s *script) Stop(*Engine) error                     { return nil }

func bars(ohlc ...[4]float64) []Bar {
	out := make([]Bar, len(ohlc))
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, b := range ohlc {
		out[i] = Bar{Time: t0.AddDate(0, 0, i), Open: b[0], High: b[1], Low: b[2], Close: b[3]}
	}
	return out
}

func TestOrdersAndMargin(t *testing.T) {
	t.Parallel()
	var live []string // engine log lines as they were reported, with the bar they came on
	e, err := New(Config{OnLog: func(l LogEntry) {
		if l.Source == "engine" {
			live = append(live, l.Time.Format("01-02")+" "+l.Message)
		}
	}, Feeds: []Feed{{Symbol: "X", Bars: bars(
		[4]float64{10, 10, 10, 10},
		[4]float64{11, 12, 9, 11}, // market fills at open 11; second buy rejected (scratch cash)
		[4]float64{11, 11, 7, 8},  // sell stop 9.5: fills at 9.5
		[4]float64{8, 8, 8, 8},
	)}}, Cash: 1000})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	s := &script{next: func(e *Engine) {
		switch step {
		case 0:
			_, _ = e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 60})
			_, _ = e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 60})
		case 1:
			_, _ = e.Submit(OrderRequest{Side: Sell, Type: Stop, Size: 60, Price: 9.5})
		}
		step++
	}}
	res, err := e.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Executions) != 2 || res.Executions[0].Price != 11 || res.Executions[1].Price != 9.5 {
		t.Fatalf("executions %+v", res.Executions)
	}
	if len(res.OrderEvents) != 1 || res.OrderEvents[0].Status != "Margin" || res.OrderEvents[0].Ref != 2 {
		t.Fatalf("events %+v", res.OrderEvents)
	}
	wantLive := []string{
		"01-01 order 1 submitted: buy Market 60 X",
		"01-01 order 2 submitted: buy Market 60 X",
		"01-02 order 2 (buy Market 60) rejected: Margin (not enough cash)",
		"01-02 order 1 filled: buy 60 X @ 11.0000, commission 0.0000",
		"01-02 order 3 submitted: sell Stop 60 X",
		"01-03 order 3 filled: sell 60 X @ 9.5000, commission 0.0000",
		"01-03 trade 1 closed: X, pnl -90.0000, net -90.0000, 1 bars",
	}
	if strings.Join(live, "\n") != strings.Join(wantLive, "\n") {
		t.Errorf("engine log lines as they happened:\n%s\nwant:\n%s", strings.Join(live, "\n"), strings.Join(wantLive, "\n"))
	}
	// An opening fill realises nothing: +0, never -0 (which JSON shows as "-0").
	if pnl := res.Executions[0].PnL; pnl != 0 || math.Signbit(pnl) {
		t.Errorf("opening execution pnl %v, want +0", pnl)
	}
	if want := 1000 - 60*11 + 60*(9.5); res.FinalCash != want {
		t.Errorf("cash %v, want %v", res.FinalCash, want)
	}
	if len(res.Trades) != 1 || res.Trades[0].PnLGross != 60*(9.5-11) || res.Trades[0].BarLen != 1 {
		t.Errorf("trades %+v", res.Trades)
	}
}

func TestStatistics(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2020, 1, 30, 0, 0, 0, 0, time.UTC)
	vals := []float64{100, 110, 99, 121}
	eq := make([]EquityPoint, len(vals))
	for i, v := range vals {
		eq[i] = EquityPoint{Time: t0.AddDate(0, 0, i), Value: v}
	}
	ct := t0.AddDate(0, 0, 2)
	trades := []Trade{
		{OpenTime: t0, CloseTime: &ct, PnLNet: 10},
		{OpenTime: t0, CloseTime: &ct, PnLNet: -4},
		{OpenTime: t0, IsOpen: true},
	}
	st := ComputeStatistics(100, eq, trades, 1.5, nil)
	if len(st.Groups) != 4 || st.Groups[0].Name != "Curve" || st.Groups[1].Name != "Trade" || st.Groups[2].Name != "Time" || st.Groups[3].Name != "Risk" {
		t.Fatalf("groups %+v", st.Groups)
	}
	get := func(k string) *Metric {
		m := st.Get(k)
		if m == nil {
			t.Fatalf("missing %s", k)
		}
		if m.Explanation == "" || m.Label == "" {
			t.Errorf("%s lacks label or explanation", k)
		}
		return m
	}
	if m := get("total_return"); math.Abs(*m.Value-0.21) > 1e-12 || m.Display != "21.00%" {
		t.Errorf("total_return %v %s", *m.Value, m.Display)
	}
	if m := get("max_drawdown"); math.Abs(*m.Value-10) > 1e-12 || m.Display != "10.00%" {
		t.Errorf("max_drawdown %v %s", *m.Value, m.Display)
	}
	// From the peak (110, day 1) to the first value back above it (121, day 3).
	if m := get("max_drawdown_duration"); m.Display != "2 days" {
		t.Errorf("dd duration %s", m.Display)
	}
	// One won of two closed; the open trade is neither won nor lost.
	if m := get("win_rate"); *m.Value != 50 {
		t.Errorf("win_rate %v", *m.Value)
	}
	if m := get("avg_trade"); *m.Value != 3 {
		t.Errorf("avg_trade %v", *m.Value)
	}
	if m := get("best_trade"); *m.Value != 10 {
		t.Errorf("best %v", *m.Value)
	}
	if m := get("worst_trade"); *m.Value != -4 {
		t.Errorf("worst %v", *m.Value)
	}
	if m := get("avg_trade_duration"); m.Display != "2.0 days" {
		t.Errorf("duration %s", m.Display)
	}
	if m := get("total_trades"); m.Display != "3" {
		t.Errorf("total %s", m.Display)
	}
	if m := get("sqn"); m.Display != "1.50" {
		t.Errorf("sqn %s", m.Display)
	}
	// months: Jan 30-31 (0 + 0.1), Feb 1-2 (-0.1 + 0.2222)
	if m := get("win_month_pct"); *m.Value != 100 {
		t.Errorf("win months %v", *m.Value)
	}
	if m := get("best_month"); math.Abs(*m.Value-(99.0/110-1+121.0/99-1)) > 1e-12 {
		t.Errorf("best month %v", *m.Value)
	}
	for _, k := range []string{"cagr", "sharpe_ratio", "annual_volatility", "r_squared", "avg_win", "avg_loss", "avg_win_month", "avg_loss_month", "worst_month", "win_year_pct", "best_year", "worst_year"} {
		get(k)
	}
}

func BenchmarkComputeStatistics(b *testing.B) {
	bars := RandomWalk(10000, 3)
	eq := make([]EquityPoint, len(bars))
	for i, x := range bars {
		eq[i] = EquityPoint{Time: x.Time, Value: x.Close * 100}
	}
	for i := 0; i < b.N; i++ {
		ComputeStatistics(10000, eq, nil, 0, nil)
	}
}

func TestProgressAboutEveryPercent(t *testing.T) {
	t.Parallel()
	for _, n := range []int{50, 2600, 300000} {
		rows := make([][4]float64, n)
		for i := range rows {
			rows[i] = [4]float64{10, 10, 10, 10}
		}
		var calls []int
		e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bars(rows...)}}, Cash: 1000,
			OnProgress: func(cur, total int) {
				if total != n {
					t.Errorf("total %d, want %d", total, n)
				}
				calls = append(calls, cur)
			}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(context.Background(), &script{next: func(*Engine) {}}); err != nil {
			t.Fatal(err)
		}
		if calls[len(calls)-1] != n {
			t.Errorf("n=%d: last call at %d, want %d", n, calls[len(calls)-1], n)
		}
		maxGap := min(max(n/100, 1), 1024)
		for i := 1; i < len(calls); i++ {
			if gap := calls[i] - calls[i-1]; gap > maxGap {
				t.Errorf("n=%d: progress jumped %d bars (%d→%d), want at most %d", n, gap, calls[i-1], calls[i], maxGap)
				break
			}
		}
	}
}

// StopLimit fills on the bar that triggers it follow backtrader's BackBroker
// (_try_exec_stoplimit): a gap through the stop tries the limit at once; a stop touched
// within the bar fills at the stop when the limit allows it, and at the limit only when the
// bar moves away from the stop (a sell bar whose open <= close, a buy bar whose open > close).
func TestStopLimitTriggerBar(t *testing.T) {
	t.Parallel()
	const stop = 10.0
	cases := []struct {
		name   string
		side   Side
		plimit float64
		bar    [4]float64 // open, high, low, close of the bar after the order
		want   float64    // fill price, 0: none on that bar
	}{
		{"sell gap below stop, limit within the bar", Sell, 9.2, [4]float64{9, 9.5, 8, 9}, 9.2},
		{"sell touched, open < close, limit below stop", Sell, 9.5, [4]float64{11, 12, 9, 12}, stop},
		{"sell touched, open < close, limit above stop", Sell, 10.5, [4]float64{10.8, 12, 9, 11}, 10.5},
		{"sell touched, open == close, limit above stop", Sell, 10.5, [4]float64{11, 12, 9, 11}, 10.5},
		{"sell touched, open > close, limit above stop", Sell, 10.5, [4]float64{11, 12, 9, 10}, 0},
		{"sell touched, open > close, limit below stop", Sell, 9.5, [4]float64{11, 12, 9, 10}, stop},
		{"buy gap above stop, limit above open", Buy, 11, [4]float64{10.5, 12, 10, 11}, 10.5},
		{"buy touched, open > close, limit below stop", Buy, 9.5, [4]float64{9, 11, 8, 8.5}, 9.5},
		{"buy touched, open == close, limit below stop", Buy, 9.5, [4]float64{9, 11, 8, 9}, 0},
		{"buy touched, open < close, limit above stop", Buy, 10.5, [4]float64{9, 11, 8, 9.5}, stop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bars([4]float64{10, 10, 10, 10}, c.bar)}}, Cash: 1000})
			if err != nil {
				t.Fatal(err)
			}
			first := true
			res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
				if first {
					if _, err := e.Submit(OrderRequest{Side: c.side, Type: StopLimit, Size: 1, Price: stop, PLimit: c.plimit}); err != nil {
						t.Error(err)
					}
				}
				first = false
			}})
			if err != nil {
				t.Fatal(err)
			}
			got := 0.0
			if len(res.Executions) > 0 {
				got = res.Executions[0].Price
			}
			if got != c.want {
				t.Errorf("filled at %v, want %v", got, c.want)
			}
		})
	}
}

// A cancel of an order submitted on the same bar is ignored, as in backtrader: the order
// stays live and fills; a WARNING line says why. On a later bar a cancel works.
func TestCancelOfUnacceptedOrderIsIgnored(t *testing.T) {
	t.Parallel()
	var warnings []string
	e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bars(
		[4]float64{10, 10, 10, 10}, [4]float64{10, 11, 9, 10}, [4]float64{10, 11, 9, 10}, [4]float64{10, 11, 9, 10},
	)}}, Cash: 1000, OnLog: func(l LogEntry) {
		if l.Level == "WARNING" {
			warnings = append(warnings, l.Message)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	var limit *Order
	res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
		switch step {
		case 0:
			o, _ := e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 1})
			if e.Cancel(o) {
				t.Error("cancel of an order submitted on the same bar reported success")
			}
			limit, _ = e.Submit(OrderRequest{Side: Buy, Type: Limit, Size: 1, Price: 1})
		case 1:
			if !e.Cancel(limit) {
				t.Error("cancel of an accepted order failed")
			}
		}
		step++
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Executions) != 1 || res.Executions[0].Ref != 1 {
		t.Fatalf("executions %+v, want the market order filled", res.Executions)
	}
	if len(res.OrderEvents) != 1 || res.OrderEvents[0].Ref != 2 || res.OrderEvents[0].Status != "Canceled" {
		t.Fatalf("events %+v, want the limit order cancelled", res.OrderEvents)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cancel of order 1 ignored") {
		t.Fatalf("warnings %q", warnings)
	}
}

// runOrders runs one submit on the first bar over bs and returns the result.
func runOrders(t *testing.T, bs []Bar, submit func(e *Engine)) *Result {
	t.Helper()
	e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bs}}, Cash: 100000})
	if err != nil {
		t.Fatal(err)
	}
	first := true
	res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
		if first {
			submit(e)
		}
		first = false
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTrailingStops(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  OrderRequest
		bars []Bar
		want float64 // fill price; 0: none
		stop float64 // the order's stop at the end (when unfilled) or at the fill
	}{
		// Sell 1.0 below the close of 10: stop 9; the close rises to 12 (stop 11), then a
		// bar gaps down through it and fills at its open.
		{"sell by amount, gap through", OrderRequest{Side: Sell, Type: StopTrail, Size: 1, TrailAmount: 1},
			bars([4]float64{10, 10, 10, 10}, [4]float64{10, 12, 10, 12}, [4]float64{10.5, 10.6, 10, 10.2}), 10.5, 11},
		// The stop never moves back: after 12 the close falls to 11.5 (stop stays 11),
		// then a bar trades through 11 and fills there.
		{"sell by amount, never back", OrderRequest{Side: Sell, Type: StopTrail, Size: 1, TrailAmount: 1},
			bars([4]float64{10, 10, 10, 10}, [4]float64{10, 12, 10, 12}, [4]float64{11.8, 11.9, 11.2, 11.5}, [4]float64{11.6, 11.7, 10.8, 11}), 11, 11},
		// Buy 10% above the close: 110 at first, then the close falls to 90 (stop 99).
		{"buy by percent", OrderRequest{Side: Buy, Type: StopTrail, Size: 1, TrailPercent: 0.1},
			bars([4]float64{100, 100, 100, 100}, [4]float64{100, 100, 90, 90}, [4]float64{95, 100, 94, 98}), 99, 99},
		// A reference price instead of the close: stop 20-2 = 18 until the closes pass 20.
		{"sell from a reference price", OrderRequest{Side: Sell, Type: StopTrail, Size: 1, Price: 20, TrailAmount: 2},
			bars([4]float64{10, 10, 10, 10}, [4]float64{19, 21, 18.5, 21}), 0, 19},
		// Stop-limit: stop 9 and limit 8.5 (0.5 below); both follow the close to 12 (11 and
		// 10.5); the next bar gaps to 10.4, below the limit: no fill, as a limit order.
		{"sell stop-limit gap below its limit", OrderRequest{Side: Sell, Type: StopTrailLimit, Size: 1, Price: 10, PLimit: 9.5, TrailAmount: 1},
			bars([4]float64{10, 10, 10, 10}, [4]float64{10, 12, 10, 12}, [4]float64{10.4, 10.45, 10.3, 10.4}), 0, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var o *Order
			res := runOrders(t, c.bars, func(e *Engine) {
				var err error
				if o, err = e.Submit(c.req); err != nil {
					t.Fatal(err)
				}
			})
			got := 0.0
			if len(res.Executions) > 0 {
				got = res.Executions[0].Price
			}
			if got != c.want || o.Price != c.stop {
				t.Errorf("filled at %v with stop %v, want %v with stop %v", got, o.Price, c.want, c.stop)
			}
			if o.Type == StopTrailLimit && o.Price-o.PLimit != 0.5 {
				t.Errorf("limit %v is not 0.5 below the stop %v", o.PLimit, o.Price)
			}
		})
	}
	for _, bad := range []OrderRequest{
		{Side: Sell, Type: StopTrail, Size: 1, TrailPercent: 1},
		{Side: Sell, Type: StopTrail, Size: 1, TrailAmount: -1},
		{Side: Sell, Type: StopTrailLimit, Size: 1, TrailAmount: 1},
	} {
		runOrders(t, bars([4]float64{10, 10, 10, 10}), func(e *Engine) {
			if _, err := e.Submit(bad); err == nil {
				t.Errorf("%+v accepted", bad)
			}
		})
	}
}

func TestOrderValidity(t *testing.T) {
	t.Parallel()
	day := func(i int) time.Time { return time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC) }
	flat := [4]float64{10, 10, 10, 10}
	cases := []struct {
		name    string
		req     OrderRequest
		expired string // date of the Expired event; "" none
	}{
		// valid through bar 2's time exactly: not expired on bar 2, expired on bar 3.
		{"boundary is still valid", OrderRequest{Side: Buy, Type: Limit, Size: 1, Price: 5, ValidUntil: day(2)}, "2020-01-04"},
		{"day order expires on the next bar", OrderRequest{Side: Buy, Type: Limit, Size: 1, Price: 5, ValidUntil: ValidDay(day(0))}, "2020-01-02"},
		{"good till cancelled", OrderRequest{Side: Buy, Type: Limit, Size: 1, Price: 5}, ""},
		{"market orders never expire", OrderRequest{Side: Buy, Type: Market, Size: 1, ValidUntil: ValidDay(day(0))}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := runOrders(t, bars(flat, flat, flat, flat, flat), func(e *Engine) {
				if _, err := e.Submit(c.req); err != nil {
					t.Fatal(err)
				}
			})
			got := ""
			for _, ev := range res.OrderEvents {
				if ev.Status == "Expired" {
					got = ev.Time.Format(time.DateOnly)
				}
			}
			if got != c.expired {
				t.Errorf("expired on %q, want %q (events %+v)", got, c.expired, res.OrderEvents)
			}
		})
	}
	// An expiring bracket entry takes its children with it.
	res := runOrders(t, bars(flat, flat, flat), func(e *Engine) {
		if _, err := e.Bracket(OrderRequest{Side: Buy, Type: Limit, Size: 1, Price: 5, ValidUntil: ValidDay(day(0))}, 4, 12); err != nil {
			t.Fatal(err)
		}
	})
	var statuses []string
	for _, ev := range res.OrderEvents {
		statuses = append(statuses, ev.Status)
	}
	if strings.Join(statuses, ",") != "Expired,Canceled,Canceled" {
		t.Errorf("bracket events %v, want the entry expired and both children cancelled", statuses)
	}
}

// The indicators backtrader lacks, on hand-made bars (those it has are pinned by
// testdata/backtrader/indicators).
func TestOwnIndicators(t *testing.T) {
	t.Parallel()
	hi, lo, cl := seq(3, 5, 4, 6, 7), seq(1, 2, 2, 3, 5), seq(2, 4, 3, 5, 6)
	up, mid, low := Donchian(hi, lo, 3)
	checkSeries(t, "Donchian.upper", up, 2, []float64{nan, nan, 5, 6, 7})
	checkSeries(t, "Donchian.lower", low, 2, []float64{nan, nan, 1, 2, 2})
	checkSeries(t, "Donchian.mid", mid, 2, []float64{nan, nan, 3, 4, 4.5})
	checkSeries(t, "OBV", OBV(cl, seq(10, 20, 30, 40, 50)), 0, []float64{0, 20, -10, 30, 80})
	ku, km, kl := Keltner(hi, lo, cl, 2, 2, 2)
	atr := ATR(hi, lo, cl, 2)
	ema := EMA(cl, 2)
	checkSeries(t, "Keltner.mid", km, 1, ema.Vals)
	for i := atr.First; i < 5; i++ {
		if ku.Vals[i] != ema.Vals[i]+2*atr.Vals[i] || kl.Vals[i] != ema.Vals[i]-2*atr.Vals[i] {
			t.Errorf("Keltner bands at %d: %v %v", i, ku.Vals[i], kl.Vals[i])
		}
	}
	// StochRSI: where the RSI is at the top of its window 100, at the bottom 0.
	x := seq(1, 2, 3, 4, 5, 4, 3, 2, 1, 2)
	s := StochRSI(x, 2, 3)
	r := RSI(x, 2)
	for i := s.First; i < len(x.Vals); i++ {
		hh, ll := math.Inf(-1), math.Inf(1)
		for _, v := range r.Vals[i-2 : i+1] {
			hh, ll = math.Max(hh, v), math.Min(ll, v)
		}
		want := 100 * (r.Vals[i] - ll) / (hh - ll)
		if math.IsNaN(want) != math.IsNaN(s.Vals[i]) || (!math.IsNaN(want) && math.Abs(s.Vals[i]-want) > 1e-12) {
			t.Errorf("StochRSI[%d] = %v, want %v", i, s.Vals[i], want)
		}
	}
	if s.First != r.First+2 {
		t.Errorf("StochRSI first %d, want %d", s.First, r.First+2)
	}
}

// Bars before TradeFrom only warm up: the strategy's first call is on the first bar at or
// after it, with a minimum period already met there by the warm-up bars; the equity curve
// and the figures start on that bar.
func TestTradeFromWarmsUp(t *testing.T) {
	t.Parallel()
	rows := make([][4]float64, 40)
	for i := range rows {
		p := 10 + float64(i)
		rows[i] = [4]float64{p, p, p, p}
	}
	b := bars(rows...)
	cases := []struct {
		name      string
		from      int // index of the first trading bar
		minPeriod int
		firstCall int // index of the bar of the first Next
	}{
		{"no warm-up", 0, 20, 19},
		{"warm-up covers the period", 25, 20, 25},
		{"warm-up shorter than the period", 10, 20, 19},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Feeds: []Feed{{Symbol: "X", Bars: b}}, Cash: 1000}
			if c.from > 0 {
				cfg.TradeFrom = b[c.from].Time
			}
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.RequireMinPeriod(0, c.minPeriod)
			var first time.Time
			res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
				if first.IsZero() {
					first = e.Now()
					if _, err := e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 1}); err != nil {
						t.Error(err)
					}
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if want := b[c.firstCall].Time; !first.Equal(want) {
				t.Errorf("first next() on %s, want %s", first.Format(time.DateOnly), want.Format(time.DateOnly))
			}
			if len(res.Equity) != len(b)-c.from || !res.Equity[0].Time.Equal(b[c.from].Time) {
				t.Errorf("equity has %d points from %s, want %d from %s", len(res.Equity), res.Equity[0].Time.Format(time.DateOnly),
					len(b)-c.from, b[c.from].Time.Format(time.DateOnly))
			}
			if len(res.Executions) != 1 || !res.Executions[0].Time.Equal(b[c.firstCall+1].Time) {
				t.Errorf("executions %+v, want one on %s", res.Executions, b[c.firstCall+1].Time.Format(time.DateOnly))
			}
		})
	}
	if _, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: b}}, TradeFrom: b[39].Time.AddDate(0, 0, 1)}); err == nil {
		t.Error("TradeFrom after the last bar: no error")
	}
}

// TestRecycle: a run whose equity curve and position rows are written over a recycled
// result's storage (a longer run's, a shorter one's, or its own kind's) gives the result a
// run on fresh storage gives, and the recycled result lets go of that storage.
func TestRecycle(t *testing.T) {
	t.Parallel()
	run := func(n int, seed float64) *Result {
		ohlc := make([][4]float64, n)
		for i := range ohlc {
			p := 100 + 10*math.Sin(float64(i)/7+seed)
			ohlc[i] = [4]float64{p, p + 1, p - 1, p + 0.5}
		}
		e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bars(ohlc...)}}, Cash: 10000})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
			switch i % 20 {
			case 3:
				_, _ = e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 5})
			case 13:
				_, _ = e.Submit(OrderRequest{Side: Sell, Type: Market, Size: 5})
			}
			i++
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tt := range []struct {
		name          string
		before, after int // bars of the recycled run, of the run after it
	}{
		{"same length", 300, 300}, {"onto a longer run's", 500, 200}, {"onto a shorter run's", 100, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := run(tt.after, 2)
			old := run(tt.before, 1)
			Recycle(old)
			if old.Equity != nil || old.Analyzers.PyFolio.Positions.Flat != nil {
				t.Error("the recycled result still holds its storage")
			}
			got := run(tt.after, 2)
			if !reflect.DeepEqual(got.Equity, want.Equity) || !reflect.DeepEqual(got.Analyzers, want.Analyzers) || !reflect.DeepEqual(got.Summary, want.Summary) {
				t.Errorf("%d bars on recycled storage differ from a fresh run", tt.after)
			}
		})
	}
	Recycle(nil) // nothing to give back
}

// TestSummaryOnly: a run that leaves out the analyzers a study does not read has the same
// summary, equity curve, trades, executions, statistics and remaining analyzers as the
// whole run, and those analyzers empty.
func TestSummaryOnly(t *testing.T) {
	t.Parallel()
	run := func(summaryOnly bool) *Result {
		ohlc := make([][4]float64, 800)
		for i := range ohlc {
			p := 100 + 10*math.Sin(float64(i)/9) + float64(i)/50
			ohlc[i] = [4]float64{p, p + 1, p - 1, p + 0.5}
		}
		e, err := New(Config{Feeds: []Feed{{Symbol: "X", Bars: bars(ohlc...)}}, Cash: 10000, Commission: 0.001, SummaryOnly: summaryOnly})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		res, err := e.Run(context.Background(), &script{next: func(e *Engine) {
			switch i % 30 {
			case 4:
				_, _ = e.Submit(OrderRequest{Side: Buy, Type: Market, Size: 7})
			case 21:
				_, _ = e.Submit(OrderRequest{Side: Sell, Type: Market, Size: 7})
			}
			i++
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	whole, part := run(false), run(true)
	if !reflect.DeepEqual(part.Summary, whole.Summary) || !reflect.DeepEqual(part.Equity, whole.Equity) ||
		!reflect.DeepEqual(part.Trades, whole.Trades) || !reflect.DeepEqual(part.Executions, whole.Executions) {
		t.Error("the summary, equity, trades or executions differ")
	}
	stats := func(r *Result) Statistics {
		return ComputeStatistics(r.InitialCash, r.Equity, r.Trades, r.Summary.SQN, nil)
	}
	if !reflect.DeepEqual(stats(part), stats(whole)) {
		t.Error("the statistics differ")
	}
	wa, pa := whole.Analyzers, part.Analyzers
	if !reflect.DeepEqual(pa.Drawdown, wa.Drawdown) || !reflect.DeepEqual(pa.SQN, wa.SQN) || !reflect.DeepEqual(pa.TradeAnalyzer, wa.TradeAnalyzer) ||
		!reflect.DeepEqual(pa.Sharpe.DailyAnnualized, wa.Sharpe.DailyAnnualized) || !reflect.DeepEqual(pa.PyFolio.Positions, wa.PyFolio.Positions) {
		t.Error("an analyzer the summary reads differs")
	}
	if wa.VWR == nil || len(wa.TimeReturn.Years) == 0 || len(wa.PyFolio.Transactions) == 0 {
		t.Fatal("the whole run lacks the analyzers this test compares")
	}
	if pa.VWR != nil || pa.TimeReturn.Years != nil || pa.AnnualReturn != nil || pa.Calmar.ByMonth != nil || pa.PyFolio.Transactions != nil {
		t.Error("a left-out analyzer was computed")
	}
}
