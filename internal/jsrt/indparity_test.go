package jsrt

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/reftest"
)

// TestIndicatorParity compares the engine's indicators with backtrader's, bar by bar and
// line by line (testdata/backtrader/indicators, made by indicators.py): the same bars
// without a value (the warm-up, and any bar backtrader leaves without one) and the same
// values to 1e-9 relative.
func TestIndicatorParity(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "backtrader", "indicators", "*.json"))
	if len(files) == 0 {
		t.Fatal("no indicator fixtures in testdata/backtrader/indicators")
	}
	ref := referenceDir(t)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Data       string `json:"data"`
			Bars       int    `json:"bars"`
			Indicators map[string]struct {
				Lines map[string][]*float64 `json:"lines"`
			} `json:"indicators"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatal(err)
		}
		hi, lo, cl, _ := columns(reftest.Bars(t, filepath.Join(ref, "data", exp.Data))[:exp.Bars])
		ours := map[string]map[string]engine.Series{
			"DEMA":               {"dema": engine.DEMA(cl, 30)},
			"TEMA":               {"tema": engine.TEMA(cl, 30)},
			"HMA":                {"hma": engine.HMA(cl, 30)},
			"ZLEMA":              {"zlema": engine.ZLEMA(cl, 30)},
			"TRIX":               {"trix": engine.TRIX(cl, 15)},
			"KAMA":               {"kama": engine.KAMA(cl, 30, 2, 30)},
			"CCI":                {"cci": engine.CCI(hi, lo, cl, 20, 0.015)},
			"WilliamsR":          {"percR": engine.WilliamsR(hi, lo, cl, 14)},
			"UltimateOscillator": {"uo": engine.UltimateOscillator(hi, lo, cl, 7, 14, 28)},
			"ParabolicSAR":       {"psar": engine.ParabolicSAR(hi, lo, cl, 0.02, 0.2)},
		}
		up, down, osc := engine.Aroon(hi, lo, 14)
		ours["Aroon"] = map[string]engine.Series{"up": up, "down": down, "osc": osc}
		p, m, adx, adxr := engine.DMI(hi, lo, cl, 14)
		ours["DMI"] = map[string]engine.Series{"plusDI": p, "minusDI": m, "adx": adx, "adxr": adxr}
		tk, kj, sa, sb := engine.Ichimoku(hi, lo, 9, 26, 52, 26)
		ours["Ichimoku"] = map[string]engine.Series{"tenkan": tk, "kijun": kj, "senkouA": sa, "senkouB": sb}
		if len(ours) != len(exp.Indicators) {
			t.Errorf("%s: %d indicators here, %d in the fixture", exp.Data, len(ours), len(exp.Indicators))
		}
		for name, ind := range exp.Indicators {
			for line, want := range ind.Lines {
				got, ok := ours[name][line]
				if !ok {
					t.Errorf("%s %s.%s: not computed", exp.Data, name, line)
					continue
				}
				for i, w := range want {
					g := got.Vals[i]
					if w == nil {
						if !math.IsNaN(g) {
							t.Errorf("%s %s.%s bar %d: %v, want no value", exp.Data, name, line, i, g)
							break
						}
						continue
					}
					if math.IsNaN(g) || math.Abs(g-*w) > 1e-9*math.Max(1e-9, math.Abs(*w)) {
						t.Errorf("%s %s.%s bar %d: %v, want %v", exp.Data, name, line, i, g, *w)
						break
					}
				}
			}
		}
	}
}

// The new indicators through ind: each gives the engine's values (at the last bar) with
// its parameters given positionally or as an options object.
func TestIndicatorsThroughInd(t *testing.T) {
	t.Parallel()
	bars := walk(300)
	hi, lo, cl, vol := columns(bars)
	last := func(s engine.Series) float64 { return s.Vals[len(s.Vals)-1] }
	up, down, _ := engine.Aroon(hi, lo, 10)
	_, _, adx, _ := engine.DMI(hi, lo, cl, 14)
	tk, _, _, sb := engine.Ichimoku(hi, lo, 9, 26, 52, 26)
	du, _, _ := engine.Donchian(hi, lo, 20)
	_, _, kl := engine.Keltner(hi, lo, cl, 20, 10, 1.5)
	cases := []struct {
		js   string
		want float64
	}{
		{`ind.DEMA(c, 20)`, last(engine.DEMA(cl, 20))},
		{`ind.TEMA(c, { period: 10 })`, last(engine.TEMA(cl, 10))},
		{`ind.HMA(c)`, last(engine.HMA(cl, 30))},
		{`ind.ZLEMA(c, 12)`, last(engine.ZLEMA(cl, 12))},
		{`ind.TRIX(c)`, last(engine.TRIX(cl, 15))},
		{`ind.KAMA(c, { period: 10, fast: 3 })`, last(engine.KAMA(cl, 10, 3, 30))},
		{`ind.StochRSI(c, 14, 10)`, last(engine.StochRSI(cl, 14, 10))},
		{`ind.CCI(d, { factor: 0.02 })`, last(engine.CCI(hi, lo, cl, 20, 0.02))},
		{`ind.WilliamsR(d, 10)`, last(engine.WilliamsR(hi, lo, cl, 10))},
		{`ind.Aroon(d, 10).up`, last(up)},
		{`ind.Aroon(d, 10).down`, last(down)},
		{`ind.UltimateOscillator(d)`, last(engine.UltimateOscillator(hi, lo, cl, 7, 14, 28))},
		{`ind.DMI(d).adx`, last(adx)},
		{`ind.ADX(d)`, last(adx)},
		{`ind.ParabolicSAR(d, { afmax: 0.3 })`, last(engine.ParabolicSAR(hi, lo, cl, 0.02, 0.3))},
		{`ind.Ichimoku(d).tenkan`, last(tk)},
		{`ind.Ichimoku(d).senkouB`, last(sb)},
		{`ind.Donchian(d).upper`, last(du)},
		{`ind.Keltner(d, { mult: 1.5 }).lower`, last(kl)},
		{`ind.OBV(d)`, last(engine.OBV(cl, vol))},
	}
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = c.js
	}
	got := lastValues(t, bars, exprs)
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s = %v, want %v", c.js, got[i], c.want)
		}
	}
}

// columns are bars' highs, lows, closes and volumes as series.
func columns(bars []engine.Bar) (hi, lo, cl, vol engine.Series) {
	h, l, c, v := make([]float64, len(bars)), make([]float64, len(bars)), make([]float64, len(bars)), make([]float64, len(bars))
	for i, b := range bars {
		h[i], l[i], c[i], v[i] = b.High, b.Low, b.Close, float64(b.Volume)
	}
	return engine.Line(h), engine.Line(l), engine.Line(c), engine.Line(v)
}

// lastValues runs the indicator expressions exprs (with c the feed's close and d the feed)
// on bars and returns each one's value on the last bar.
func lastValues(t *testing.T, bars []engine.Bar, exprs []string) []float64 {
	t.Helper()
	code := "class I extends Strategy {\n  init() {\n    const c = this.data.close, d = this.data;\n    this.v = [" +
		strings.Join(exprs, ", ") + "];\n  }\n  stop() { this.log(JSON.stringify(this.v.map((l) => l[0]))); }\n}"
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, l := range res.Logs {
		if l.Source == "strategy" {
			if err := json.Unmarshal([]byte(l.Message), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != len(exprs) {
		t.Fatalf("%d values, want %d", len(got), len(exprs))
	}
	return got
}
