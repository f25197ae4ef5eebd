package jsrt

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// The families of ind_ma.go as a strategy calls them: script functions as ReduceN's,
// ApplyN's, PercentRank's and FindFirstIndex's function, positional parameters, the
// variants' defaults, and a clear error for a required parameter left out.
func TestMAFamiliesThroughInd(t *testing.T) {
	t.Parallel()
	bars := walk(300)
	cols := columnsOf(bars)
	closeIn := IndIn{Lines: []engine.Series{cols.close}}
	last := func(name string, given map[string]any, line int) float64 {
		d := lookupInd(name)
		args, err := d.args(given)
		if err != nil {
			t.Fatal(err)
		}
		return d.Compute(closeIn, args)[line].Vals[len(bars)-1]
	}
	window := cols.close.Vals[len(bars)-5:]
	maxOf := window[0]
	for _, v := range window {
		maxOf = math.Max(maxOf, v)
	}
	cases := []struct {
		js   string
		want float64
	}{
		// a two-value reduce: the window's maximum, as backtrader's ReduceN(max)
		{`ind.ReduceN(c, (p) => Math.max(p[0], p[1]), 5)`, maxOf},
		{`ind.ReduceN(c, 'max', 5)`, maxOf},
		{`ind.ApplyN(c, { period: 5, func: (w) => Math.max(...w) })`, maxOf},
		// backtrader's rank function is the default; a script's replaces it
		{`ind.PercentRank(c, 20)`, last("PercentRank", map[string]any{"period": 20}, 0)},
		{`ind.PercentRank(c, { period: 5, func: (w) => w[w.length - 1] })`, cols.close.Vals[len(bars)-1]},
		{`ind.FindFirstIndex(c, { period: 10, _evalfunc: (w) => Math.min(...w) })`, last("FindFirstIndexLowest", map[string]any{"period": 10}, 0)},
		{`ind.RSI_EMA(c)`, last("RelativeStrengthIndex", map[string]any{"movav": "EMA"}, 0)},
		{`ind.RSI(c, { movav: 'SMA', lookback: 3 })`, last("RSI_SMA", map[string]any{"lookback": 3}, 0)},
		{`ind.RMI(c)`, last("RelativeStrengthIndex", map[string]any{"period": 20, "lookback": 5}, 0)},
		{`ind.SMAEnvelope(c, 10).top`, last("SMA", map[string]any{"period": 10}, 0) * 1.025},
		{`ind.EMAOsc(c, { period: 10 })`, cols.close.Vals[len(bars)-1] - last("EMA", map[string]any{"period": 10}, 0)},
		{`ind.DEMA(c, { period: 10, _movav: 'SMA' })`, 2*last("SMA", map[string]any{"period": 10}, 0) -
			lookupInd("SMA").Compute(IndIn{Lines: []engine.Series{lookupInd("SMA").Compute(closeIn, mustArgs(t, "SMA", map[string]any{"period": 10}))[0]}},
				mustArgs(t, "SMA", map[string]any{"period": 10}))[0].Vals[len(bars)-1]},
	}
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = c.js
	}
	got := lastValues(t, bars, exprs)
	for i, c := range cases {
		if math.IsNaN(c.want) || math.Abs(got[i]-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.js, got[i], c.want)
		}
	}
	for _, c := range []struct{ js, err string }{
		{`ind.ApplyN(this.data.close, 5)`, "ApplyN needs the parameter func"},
		{`ind.ReduceN(this.data.close)`, "ReduceN needs the parameter function"},
		{`ind.FindLastIndex(this.data.close, { period: 3 })`, "FindLastIndex needs the parameter _evalfunc"},
		{`ind.ExpSmoothingDynamic(this.data.close, 5)`, "ExpSmoothingDynamic needs the parameter alpha"},
		{`ind.FindFirstIndex(this.data.close, { _evalfunc: 'median' })`, "FindFirstIndex: _evalfunc must be a function"},
	} {
		code := "class E extends Strategy { init() { " + c.js + "; } }"
		_, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.js, err, c.err)
		}
	}
}

func mustArgs(t *testing.T, name string, given map[string]any) IndArgs {
	t.Helper()
	a, err := lookupInd(name).args(given)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
