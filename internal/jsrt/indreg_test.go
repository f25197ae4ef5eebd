package jsrt

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/reftest"
)

// btFixture is one file of testdata/backtrader/indicators/all (indicators_all.py).
type btFixture struct {
	file     string
	Datas    []string           `json:"datas"`
	Start    string             `json:"start"`
	Bars     int                `json:"bars"`
	Classes  map[string]btClass `json:"classes"`
	Abstract map[string]string  `json:"abstract"`
	Cases    []btCase           `json:"cases"`
}

type btClass struct {
	Module  string   `json:"module"`
	Aliases []string `json:"aliases"`
	Lines   []string `json:"lines"`
	Params  []struct {
		Name    string `json:"name"`
		Default any    `json:"default"`
		Kind    string `json:"kind"`
	} `json:"params"`
}

type btCase struct {
	ID        string                `json:"id"`
	Cls       string                `json:"cls"`
	Params    map[string]any        `json:"params"`
	Inputs    []string              `json:"inputs"`
	MinPeriod int                   `json:"minperiod"`
	Lines     map[string][]*float64 `json:"lines"`
	NextLines map[string][]*float64 `json:"next_lines"`
	Error     string                `json:"error"`
}

var (
	btFixturesOnce sync.Once
	btFixtures     []*btFixture
	btFixturesErr  error
)

// loadBTFixtures reads every fixture once for the package's tests.
func loadBTFixtures(t testing.TB) []*btFixture {
	t.Helper()
	btFixturesOnce.Do(func() {
		files, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "backtrader", "indicators", "all", "*.json.gz"))
		if len(files) == 0 {
			btFixturesErr = fmt.Errorf("no fixtures in testdata/backtrader/indicators/all")
		}
		for _, file := range files {
			fx, err := readBTFixture(file)
			if err != nil {
				btFixturesErr = err
				return
			}
			btFixtures = append(btFixtures, fx)
		}
	})
	if btFixturesErr != nil {
		t.Fatal(btFixturesErr)
	}
	return btFixtures
}

func readBTFixture(file string) (*btFixture, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	fx := &btFixture{file: filepath.Base(file)}
	if err := json.NewDecoder(z).Decode(fx); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return fx, nil
}

// btMissing is testdata/backtrader/indicators/missing.txt: backtrader's classes not
// registered yet ("Class") and names of a class (a parameter, line or alias) the registry
// does not have as backtrader does ("Class.name"), each with its reason after '#'.
func btMissing(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "testdata", "backtrader", "indicators", "missing.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, why, _ := strings.Cut(line, "#")
		m[strings.TrimSpace(name)] = strings.TrimSpace(why)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// fixtureBars are the fixture's bars of each of its feeds.
func fixtureBars(t testing.TB, fx *btFixture) [][]engine.Bar {
	t.Helper()
	out := make([][]engine.Bar, len(fx.Datas))
	for i, d := range fx.Datas {
		bars := reftest.Bars(t, filepath.Join(referenceDir(t), "data", d))
		if fx.Start != "" {
			k := 0
			for k < len(bars) && bars[k].Time.Format("2006-01-02") < fx.Start {
				k++
			}
			bars = bars[k:]
		}
		out[i] = bars[:fx.Bars]
	}
	return out
}

type feedColumns struct{ open, high, low, close, volume engine.Series }

func columnsOf(bars []engine.Bar) feedColumns {
	n := len(bars)
	o, h, l, c, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, b := range bars {
		o[i], h[i], l[i], c[i], v[i] = b.Open, b.High, b.Low, b.Close, float64(b.Volume)
	}
	return feedColumns{engine.Line(o), engine.Line(h), engine.Line(l), engine.Line(c), engine.Line(v)}
}

func (f feedColumns) line(name string) (engine.Series, bool) {
	switch name {
	case "open":
		return f.open, true
	case "high":
		return f.high, true
	case "low":
		return f.low, true
	case "close", "data", "data0":
		return f.close, true
	case "volume":
		return f.volume, true
	}
	return engine.Series{}, false
}

// caseInputs builds an entry's inputs from a fixture case's (data, a line of the feed, or
// data0 and data1 of two feeds).
func caseInputs(d *IndDef, c btCase, feeds []feedColumns) (IndIn, error) {
	var in IndIn
	switch {
	case d.Input == InFeed && slices.Equal(c.Inputs, []string{"data"}):
		f := feeds[0]
		in.Open, in.High, in.Low, in.Close, in.Volume = f.open, f.high, f.low, f.close, f.volume
		return in, nil
	case d.Input == InLine && len(c.Inputs) == 1:
		l, ok := feeds[0].line(c.Inputs[0])
		if ok {
			in.Lines = []engine.Series{l}
			return in, nil
		}
	case d.Input == InTwoLines && slices.Equal(c.Inputs, []string{"data0", "data1"}) && len(feeds) == 2:
		in.Lines = []engine.Series{feeds[0].close, feeds[1].close}
		return in, nil
	case d.Input == InTwoLines && len(c.Inputs) == 2:
		a, ok1 := feeds[0].line(c.Inputs[0])
		b, ok2 := feeds[0].line(c.Inputs[1])
		if ok1 && ok2 {
			in.Lines = []engine.Series{a, b}
			return in, nil
		}
	}
	return in, fmt.Errorf("%s reads %s; the case gives %v", d.Name, d.Input, c.Inputs)
}

// caseArgs are a case's parameters as the entry's; skipped names the parameter missing.txt
// lists as not supported yet ("" when every one is).
func caseArgs(d *IndDef, c btCase, feeds []feedColumns, missing map[string]string) (args IndArgs, skipped string, err error) {
	given := map[string]any{}
	for k, v := range c.Params {
		p := d.param(k)
		if p == nil || p.Name != k {
			if _, ok := missing[c.Cls+"."+k]; ok {
				return IndArgs{}, k, nil
			}
			return IndArgs{}, "", fmt.Errorf("%s has no parameter %s (add it, or list %s.%s in missing.txt)", d.Name, k, c.Cls, k)
		}
		if p.Kind == ParamLine && v == "low/high" { // indicators_all.py's alpha line
			given[k] = binarySeries(feeds[0].low, feeds[0].high, func(l, h float64) float64 { return l / h })
			continue
		}
		given[k] = v
	}
	args, err = d.args(given)
	return args, "", err
}

// within is the parity tolerance: 1e-9, relative for values above 1 in size.
func within(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// compareLine reports the first bar where got differs from want (null: no value).
func compareLine(got engine.Series, want []*float64) string {
	if len(got.Vals) < len(want) {
		return fmt.Sprintf("%d values, want %d", len(got.Vals), len(want))
	}
	for i, w := range want {
		g := got.Vals[i]
		if w == nil {
			if !math.IsNaN(g) {
				return fmt.Sprintf("bar %d: %v, want no value", i, g)
			}
			continue
		}
		if math.IsNaN(g) || !within(g, *w) {
			return fmt.Sprintf("bar %d: %v, want %v", i, g, *w)
		}
	}
	return ""
}

// TestRegistryParity runs every registry entry on each of backtrader's cases of its class
// (testdata/backtrader/indicators/all: default parameters and others, on orcl, nvda and
// the pair) and compares every line on every bar, warm-up included, to 1e-9 (relative
// above 1), and the lines' latest first bar (Series.First) to backtrader's minperiod. A case whose class
// or parameter missing.txt lists is left out and counted.
func TestRegistryParity(t *testing.T) {
	t.Parallel()
	missing := btMissing(t)
	compared, left := 0, map[string]int{}
	for _, fx := range loadBTFixtures(t) {
		bars := fixtureBars(t, fx)
		feeds := make([]feedColumns, len(bars))
		for i, b := range bars {
			feeds[i] = columnsOf(b)
		}
		for _, c := range fx.Cases {
			d := lookupInd(c.Cls)
			if d == nil || d.Name != c.Cls {
				left[c.Cls]++ // TestRegistryCoversBacktrader fails unless missing.txt lists it
				continue
			}
			if c.Error != "" {
				t.Logf("%s %s: backtrader cannot compute it on the data (%s)", fx.file, c.ID, c.Error)
				continue
			}
			in, err := caseInputs(d, c, feeds)
			if err != nil {
				t.Errorf("%s %s: %v", fx.file, c.ID, err)
				continue
			}
			args, skipped, err := caseArgs(d, c, feeds, missing)
			if err != nil {
				t.Errorf("%s %s: %v", fx.file, c.ID, err)
				continue
			}
			if skipped != "" {
				left[c.Cls+"."+skipped]++
				continue
			}
			out := d.Compute(in, args)
			if len(out) != len(d.AllLines()) {
				t.Errorf("%s %s: %d lines computed, the entry has %d", fx.file, c.ID, len(out), len(d.AllLines()))
				continue
			}
			compared++
			lines := fx.Classes[c.Cls].Lines
			for _, ln := range lines {
				k := slices.Index(d.Lines, ln)
				if k < 0 {
					if _, ok := missing[c.Cls+"."+ln]; !ok {
						t.Errorf("%s %s: no line %s (add it, or list %s.%s in missing.txt)", fx.file, c.ID, ln, c.Cls, ln)
					}
					continue
				}
				want := c.Lines[ln]
				if d.ParityNext && c.NextLines[ln] != nil {
					want = c.NextLines[ln]
				}
				got := out[k]
				if slices.Contains(d.FutureLines, ln) && len(want) > 0 { // its last bar: see IndDef.FutureLines
					got.Vals, want = got.Vals[:len(got.Vals)-1], want[:len(want)-1]
				}
				if msg := compareLine(got, want); msg != "" {
					t.Errorf("%s %s.%s: %s", fx.file, c.ID, ln, msg)
				}
			}
			// backtrader's minperiod is its lines' latest first value, as the strategy's
			// warm-up here is its lines' (output registers each)
			first := 0
			for k := range d.Lines {
				first = max(first, out[k].First)
			}
			if first != c.MinPeriod-1 && !d.ParityNext {
				t.Errorf("%s %s: first value at bar %d, backtrader's minperiod is %d", fx.file, c.ID, first, c.MinPeriod)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no case compared")
	}
	keys := make([]string, 0, len(left))
	for k, n := range left {
		keys = append(keys, fmt.Sprintf("%s (%d)", k, n))
	}
	sort.Strings(keys)
	t.Logf("%d cases compared; left out, listed in missing.txt: %s", compared, strings.Join(keys, ", "))
}

// TestRegistryCoversBacktrader holds the registry to backtrader's classes (the fixtures'
// "classes"): each is registered under its class name with backtrader's aliases,
// parameters (names and defaults) and lines (names and order), or missing.txt lists it
// (or the name of it that differs); an entry missing.txt lists that is now there fails
// too, so the list only shrinks. Entries of no backtrader class must be marked
// NotBacktrader.
func TestRegistryCoversBacktrader(t *testing.T) {
	t.Parallel()
	missing := btMissing(t)
	used := map[string]bool{}
	classes := map[string]btClass{}
	for _, fx := range loadBTFixtures(t) {
		for n, c := range fx.Classes {
			classes[n] = c
		}
	}
	lacks := func(key, format string, args ...any) {
		if _, ok := missing[key]; ok {
			used[key] = true
			return
		}
		t.Errorf("%s: "+format+" (or list %s in testdata/backtrader/indicators/missing.txt)", append([]any{key}, append(args, key)...)...)
	}
	var absent []string
	for name, c := range classes {
		d := lookupInd(name)
		if d == nil || d.Name != name {
			if _, ok := missing[name]; !ok {
				absent = append(absent, name)
			}
			for k := range missing { // the class's names listed for when it is registered
				if k == name || strings.HasPrefix(k, name+".") {
					used[k] = true
				}
			}
			continue
		}
		if d.NotBacktrader {
			t.Errorf("%s is backtrader's but marked NotBacktrader", name)
		}
		if fam := strings.TrimPrefix(c.Module, "indicators."); d.Family != fam && !strings.HasPrefix(c.Module, "studies.") {
			t.Errorf("%s: family %s, backtrader's module is %s", name, d.Family, fam)
		}
		for _, a := range c.Aliases {
			if o := lookupInd(a); o != d {
				lacks(name+"."+a, "alias %s is not this entry's", a)
			}
		}
		for _, p := range c.Params {
			q := d.param(p.Name)
			if q == nil || q.Name != p.Name {
				lacks(name+"."+p.Name, "no parameter %s", p.Name)
				continue
			}
			if !sameDefault(q, p.Default) {
				t.Errorf("%s.%s: default %v, backtrader's is %v", name, p.Name, q.Default, p.Default)
			}
		}
		for i, ln := range c.Lines {
			if i >= len(d.Lines) || d.Lines[i] != ln {
				lacks(name+"."+ln, "line %d is not %s (it has %v, backtrader %v)", i, ln, d.Lines, c.Lines)
			}
		}
		if len(d.Lines) > len(c.Lines) {
			t.Errorf("%s: lines %v, backtrader's are %v (put the project's own in ExtraLines)", name, d.Lines, c.Lines)
		}
	}
	sort.Strings(absent)
	for _, n := range absent {
		t.Errorf("%s: backtrader's class is not registered (register it, or list it in testdata/backtrader/indicators/missing.txt)", n)
	}
	for k := range missing {
		if !used[k] {
			t.Errorf("missing.txt lists %s, which the registry now has as backtrader does (or backtrader lacks): remove it", k)
		}
	}
	for _, d := range registeredInds() {
		if _, ok := classes[d.Name]; !ok && !d.NotBacktrader {
			t.Errorf("%s is registered but is no backtrader class: mark it NotBacktrader or use the class name", d.Name)
		}
	}
}

// sameDefault reports whether an entry's default is backtrader's (a moving average by any
// of its names, whole numbers as floats).
func sameDefault(p *IndParam, bt any) bool {
	switch p.Kind {
	case ParamMovAv:
		name, _ := p.Default.(string)
		btName, _ := bt.(string)
		return lookupInd(name) != nil && lookupInd(name) == lookupInd(btName)
	case ParamPeriod, ParamInt, ParamFloat:
		f, ok := bt.(float64)
		if !ok {
			return bt == nil && p.Default == nil
		}
		switch v := p.Default.(type) {
		case int:
			return float64(v) == f
		case float64:
			return v == f
		}
		return false
	case ParamList:
		l, _ := p.Default.([]float64)
		b, _ := bt.([]any)
		if len(l) != len(b) {
			return false
		}
		for i := range l {
			if x, ok := b[i].(float64); !ok || x != l[i] {
				return false
			}
		}
		return true
	}
	if p.Kind == ParamFunc && p.Default == nil && bt == "<lambda>" {
		return true // the class's own function, which Compute uses when none is given
	}
	return fmt.Sprint(p.Default) == fmt.Sprint(bt) || p.Default == nil && bt == nil
}

// TestRegistryThroughInd calls every name of every entry (aliases included) through ind in
// a strategy, with default parameters, and compares each line at the last bar with the
// entry's Compute: what a strategy gets is what the parity test checks.
func TestRegistryThroughInd(t *testing.T) {
	t.Parallel()
	bars := walk(400)
	cols := columnsOf(bars)
	type call struct {
		js, line string
		want     float64
	}
	var calls []call
	for _, d := range registeredInds() {
		var in IndIn
		var arg string
		switch d.Input {
		case InLine:
			in.Lines, arg = []engine.Series{cols.close}, "this.data.close"
		case InFeed:
			in.Open, in.High, in.Low, in.Close, in.Volume = cols.open, cols.high, cols.low, cols.close, cols.volume
			arg = "this.data"
		case InTwoLines:
			in.Lines, arg = []engine.Series{cols.close, cols.high}, "this.data.close, this.data.high"
		}
		args, err := d.args(nil)
		if err != nil {
			// a parameter without a default (a function): given in the fixtures' cases only
			t.Logf("%s: %v", d.Name, err)
			continue
		}
		if slices.ContainsFunc(d.Params, func(p IndParam) bool { return p.Default == nil }) {
			continue
		}
		out := d.Compute(in, args)
		for _, n := range d.names() {
			if len(out) == 1 {
				calls = append(calls, call{fmt.Sprintf("ind.%s(%s)", n, arg), "", out[0].Vals[len(bars)-1]})
				continue
			}
			for i, ln := range d.AllLines() {
				calls = append(calls, call{fmt.Sprintf("ind.%s(%s)", n, arg), ln, out[i].Vals[len(bars)-1]})
			}
			for c, ln := range d.CompatLines {
				calls = append(calls, call{fmt.Sprintf("ind.%s(%s)", n, arg), c, out[slices.Index(d.AllLines(), ln)].Vals[len(bars)-1]})
			}
		}
	}
	var code strings.Builder
	code.WriteString("class R extends Strategy {\n  init() {\n    this.v = [\n")
	for _, c := range calls {
		if c.line == "" {
			fmt.Fprintf(&code, "      %s,\n", c.js)
		} else {
			fmt.Fprintf(&code, "      %s.%s,\n", c.js, c.line)
		}
	}
	code.WriteString("    ];\n  }\n  stop() { this.log(JSON.stringify(this.v.map((l) => Number.isNaN(l[0]) ? null : l[0]))); }\n}")
	res, err := Run(context.Background(), RunConfig{Code: code.String(), Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []*float64
	for _, l := range res.Logs {
		if l.Source == "strategy" {
			if err := json.Unmarshal([]byte(l.Message), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != len(calls) || len(calls) == 0 {
		t.Fatalf("%d values, want %d", len(got), len(calls))
	}
	for i, c := range calls {
		switch {
		case got[i] == nil && (math.IsNaN(c.want) || math.IsInf(c.want, 0)): // JSON has neither (CointN's -Inf score of collinear lines)
		case got[i] == nil || *got[i] != c.want:
			t.Errorf("%s.%s = %v, want %v", c.js, c.line, got[i], c.want)
		}
	}
}

// Parameters through ind: by backtrader's names and the project's older ones, a moving
// average as the function or its name, and errors in the strategy's words.
func TestIndParamsThroughInd(t *testing.T) {
	t.Parallel()
	bars := walk(300)
	cols := columnsOf(bars)
	feed := IndIn{Open: cols.open, High: cols.high, Low: cols.low, Close: cols.close, Volume: cols.volume}
	last := func(name string, in IndIn, given map[string]any, line int) float64 {
		d := lookupInd(name)
		args, err := d.args(given)
		if err != nil {
			t.Fatal(err)
		}
		return d.Compute(in, args)[line].Vals[len(bars)-1]
	}
	closeIn := IndIn{Lines: []engine.Series{cols.close}}
	ema, _ := movAvOf("EMA")
	cases := []struct {
		js   string
		want float64
	}{
		{`ind.BollingerBands(c, { movav: ind.EMA }).top`, last("BollingerBands", closeIn, map[string]any{"movav": ema}, 1)},
		{`ind.BollingerBands(c, { movav: 'EMA', period: 10 }).bot`, last("BollingerBands", closeIn, map[string]any{"movav": "EMA", "period": 10}, 2)},
		{`ind.Stochastic(d, { dfast: 5 }).k`, last("Stochastic", feed, map[string]any{"period_dfast": 5}, 0)},
		{`ind.Stochastic(d, 10, 4, 5).percD`, last("Stochastic", feed, map[string]any{"period": 10, "period_dfast": 4, "period_dslow": 5}, 1)},
		{`ind.MACD(c, { period_me1: 5, slow: 20 }).macd`, last("MACD", closeIn, map[string]any{"period_me1": 5, "period_me2": 20}, 0)},
		{`ind.MACDHistogram(c).histo`, last("MACD", closeIn, nil, 2)},
		{`ind.ATR(d, { movav: ind.SMA })`, last("ATR", feed, map[string]any{"movav": "SMA"}, 0)},
		{`ind.StdDev(c, 10, 'WMA')`, last("StdDev", closeIn, map[string]any{"period": 10, "movav": "WMA"}, 0)},
	}
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = c.js
	}
	got := lastValues(t, bars, exprs)
	for i, c := range cases {
		if got[i] != c.want || math.IsNaN(c.want) {
			t.Errorf("%s = %v, want %v", c.js, got[i], c.want)
		}
	}
	for _, c := range []struct{ js, err string }{
		{`ind.SMA(this.data.close, { perod: 3 })`, "SMA: no parameter perod (it has period)"},
		{`ind.MACD(this.data.close, 1, 2, 3, 4, 5)`, "MACD: at most 4 parameters after the inputs"},
		{`ind.BollingerBands(this.data.close, { movav: 'Nope' })`, "BollingerBands: movav must be a moving average"},
		{`ind.BollingerBands(this.data.close, { movav: ind.CrossOver })`, "BollingerBands: movav must be a moving average"},
		{`ind.StdDev(this.data.close, { safepow: 1 })`, "StdDev: safepow must be true or false"},
		{`ind.ATR(this.data.close)`, "ATR: expected a data feed"},
		{`ind.CointN(this.data.close, this.data.open, { trend: 'x' })`, `CointN: trend must be one of c, ct, ctt, n, got "x"`},
	} {
		code := "class E extends Strategy { init() { " + c.js + "; } }"
		_, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.js, err, c.err)
		}
	}
}
