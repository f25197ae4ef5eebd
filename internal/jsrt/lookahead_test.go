package jsrt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
)

// trader trades on this.sig: long while it is above the close, flat otherwise.
const trader = `
  next() {
    if (this.position.size === 0 && this.sig[0] > this.data.close[0]) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.sig[0] < this.data.close[0]) this.close();
  }`

// lookaheadCases are strategies of every kind the check must catch (want is what a
// finding names) and causal ones it must never flag (want "").
var lookaheadCases = []struct {
	name, code, want string
}{
	// Whole-series functions that read ahead.
	{"shifted", `class S extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => c[i + 1])); }` + trader + `}`, "this.sig"},
	{"centred", `class S extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => {
    if (i < 5 || i + 5 >= c.length) return NaN;
    let s = 0; for (let k = i - 5; k <= i + 5; k++) s += c[k]; return s / 11; })); }` + trader + `}`, "this.sig"},
	{"normalised over the history", `class S extends Strategy {
  init() {
    this.z = ind.Compute(this.data.close, c => {
      const m = c.reduce((a, b) => a + b, 0) / c.length;
      const sd = Math.sqrt(c.reduce((a, b) => a + (b - m) * (b - m), 0) / c.length);
      return c.map(x => (x - m) / sd); });
  }
  next() {
    if (this.position.size === 0 && this.z[0] < -1) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.z[0] > 0) this.close();
  }}`, "this.z"},
	{"min-max scaled", `class S extends Strategy {
  init() { this.r = ind.Compute(this.data.close, c => { const lo = Math.min(...c), hi = Math.max(...c); return c.map(x => (x - lo) / (hi - lo)); }); }
  next() { if (this.position.size === 0 && this.r[0] < 0.3) this.buy({ size: 1 }); else if (this.position.size > 0 && this.r[0] > 0.6) this.close(); }}`, "this.r"},
	{"reverse running maximum", `class S extends Strategy {
  init() { this.sig = ind.Compute(this.data.high, h => { const out = new Array(h.length); let m = -Infinity;
    for (let i = h.length - 1; i >= 0; i--) { m = Math.max(m, h[i]); out[i] = m; } return out; }); }` + trader + `}`, "this.sig"},
	{"bars remaining", `class S extends Strategy {
  init() { this.left = ind.Compute(this.data.close, c => c.map((_, i) => c.length - i)); }
  next() { if (this.position.size === 0 && this.left[0] % 7 === 0) this.buy({ size: 1 }); else if (this.position.size > 0) this.close(); }}`, "this.left"},
	// Several strategies: the second one's line reads ahead, or none does.
	{"second of several strategies", `class A extends Strategy {
  init() { this.sig = ind.SMA(this.data.close, 10); }` + trader + `}
class S extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => c[i + 1])); }` + trader + `}
const strategies = [A, S];`, "this.sig"},
	{"several causal strategies", `class A extends Strategy {
  init() { this.sig = ind.SMA(this.data.close, 10); }` + trader + `}
class B extends Strategy {
  init() { this.sig = ind.EMA(this.data.close, 30); this.n = 0; }
  next() { this.n++; if (this.n % 9 === 0) this.buy({ size: 1 }); else if (this.n % 9 === 4) this.sell({ size: 1 }); }}
const strategies = [A, { strategy: A, params: {} }, B];`, ""},
	// Values captured in a closure, read later.
	{"closure read in next", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.all = c.slice(); return c; }); }
  next() {
    const i = this.data.close.length - 1;
    if (this.position.size === 0 && this.all[i + 1] > this.all[i]) this.buy({ size: 1 });
    else if (this.position.size > 0 && !(this.all[i + 1] > this.all[i])) this.close();
  }}`, "orders"},
	{"closure read in Apply", `class S extends Strategy {
  init() {
    let all = [];
    ind.Compute(this.data.close, c => { all = c; return c; });
    this.sig = ind.Apply(this.data.close, (v, i) => all[i + 3]);
  }` + trader + `}`, "this.sig"},
	{"closure read into state only", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.all = c.slice(); return c; }); }
  next() { const i = this.data.close.length - 1; this.up = this.all[i + 1] > this.all[i]; }}`, "this.up"},
	{"unnamed future line", `class S extends Strategy {
  init() { this.x = ind.CrossOver(this.data.close, ind.Compute(this.data.close, c => c.map((_, i) => c[Math.min(i + 2, c.length - 1)]))); }
  next() { if (this.position.size === 0 && this.x[0] > 0) this.buy({ size: 1 }); else if (this.position.size > 0 && this.x[0] < 0) this.close(); }}`, "ind.Compute at code line 2"},
	// Lines of the registry that read ahead (IndDef.FutureLines), for charts.
	{"Ichimoku's chikou span", `class S extends Strategy {
  init() { this.ich = ind.Ichimoku(this.data); this.sig = this.ich.chikou_span; }` + trader + `}`, "this.sig"},
	{"the Fractal study", `class S extends Strategy {
  init() { this.f = ind.Fractal(this.data); }
  next() {
    if (this.position.size === 0 && this.f.fractal_bullish[0] > 0) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.f.fractal_bearish[0] > 0) this.close();
  }}`, "ind.Fractal.fractal_bullish at code line 4"},

	// Causal strategies: never flagged.
	{"Ichimoku without its chikou span, a Fractal not read", `class S extends Strategy {
  init() { this.ich = ind.Ichimoku(this.data); this.f = ind.Fractal(this.data); this.sig = this.ich.tenkan_sen; }` + trader + `}`, ""},
	{"EMA and RSI", `class S extends Strategy {
  init() { this.e = ind.EMA(this.data.close, 20); this.r = ind.RSI(this.data.close, 14); this.sig = this.e; }
  next() { if (this.position.size === 0 && this.r[0] < 35) this.buy({ size: 1 }); else if (this.position.size > 0 && this.r[0] > 60) this.close(); }}`, ""},
	{"past-only Compute", `class S extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => { const out = []; let s = 0;
    for (let i = 0; i < c.length; i++) { s += c[i]; if (i >= 10) s -= c[i - 10]; out.push(i >= 9 ? s / 10 : NaN); } return out; }); }` + trader + `}`, ""},
	{"reads of [-n]", `class S extends Strategy {
  next() {
    const c = this.data.close;
    if (this.position.size === 0 && c[0] > c[-1] && c[-1] > c[-2] && c[-5] < c[0]) this.buy({ size: 1 });
    else if (this.position.size > 0 && c[0] < c[-3]) this.close();
  }}`, ""},
	{"state kept in next", `class S extends Strategy {
  init() { this.seen = []; this.n = 0; this.mean = 0; }
  next() {
    this.seen.push(this.data.close[0]); this.n++;
    const w = this.seen.slice(-20); this.mean = w.reduce((a, b) => a + b, 0) / w.length;
    this.last = this.data.date(0);
    if (this.position.size === 0 && this.data.close[0] < this.mean * 0.98) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.data.close[0] > this.mean) this.close();
  }}`, ""},
	{"past read through Apply's closure", `class S extends Strategy {
  init() { const prev = []; this.sig = ind.Apply(this.data.close, v => { prev.push(v); const w = prev.slice(-8); return w.reduce((a, b) => a + b, 0) / w.length; }); }` + trader + `}`, ""},
	{"Compute's input kept and read up to the current bar", `class S extends Strategy {
  init() {
    ind.Compute(this.data.close, c => { this.all = c; this.copy = c.slice(); this.twice = c.map(x => 2 * x); this.tail = c.slice(100); return c; });
    this.first = this.all[0];
    this.diff = ind.Apply(this.data.close, (v, i) => i > 0 ? this.all[i] - this.copy[i - 1] : 0);
  }
  next() {
    const i = this.data.close.length - 1;
    const w = this.all.slice(Math.max(i - 9, 0), i + 1), mean = w.reduce((a, b) => a + b, 0) / w.length;
    const last = [...this.copy.slice(0, i + 1)].pop(), t = i >= 100 ? this.tail[i - 100] : this.twice[i] / 2;
    this.ok = last === this.data.close[0] && t === this.all.at(i) && this.first > 0;
    if (this.position.size === 0 && this.all[i] < mean * 0.98 && this.diff[0] < 0) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.all[i] > mean) this.close();
  }}`, ""},
	{"a reversed copy read at the current bar", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.r = c.slice().reverse(); return c; }); }
  next() {
    const i = this.data.close.length - 1, x = this.r[this.r.length - 1 - i];
    if (this.position.size === 0 && x < this.data.close[-1]) this.buy({ size: 1 });
    else if (this.position.size > 0 && x > this.data.close[-1]) this.close();
  }}`, ""},
	{"Math.random", `class S extends Strategy {
  next() { this.roll = Math.random(); if (this.position.size === 0 && this.roll < 0.1) this.buy({ size: 1 }); else if (this.position.size > 0 && this.roll > 0.8) this.close(); }}`, ""},
	{"every built-in indicator", `class S extends Strategy {
  init() {
    const d = this.data, c = d.close;
    this.a = [ind.SMA(c, 10), ind.EMA(c, 10), ind.WMA(c, 10), ind.SMMA(c, 10), ind.RSI(c), ind.Highest(c, 10), ind.Lowest(c, 10),
      ind.ROC(c), ind.Momentum(c), ind.StdDev(c), ind.Delay(c, 2), ind.DEMA(c, 10), ind.TEMA(c, 10), ind.HMA(c, 10), ind.ZLEMA(c, 10),
      ind.TRIX(c), ind.KAMA(c), ind.StochRSI(c), ind.ATR(d), ind.TrueRange(d), ind.CCI(d), ind.WilliamsR(d), ind.UltimateOscillator(d),
      ind.ADX(d), ind.ParabolicSAR(d), ind.OBV(d)];
    this.m = ind.MACD(c); this.bb = ind.BollingerBands(c); this.st = ind.Stochastic(d); this.ar = ind.Aroon(d); this.dmi = ind.DMI(d);
    this.ich = ind.Ichimoku(d); this.dc = ind.Donchian(d); this.kc = ind.Keltner(d);
    this.x = ind.CrossOver(ind.SMA(c, 5), ind.SMA(c, 20)).mul(2).sub(c.sub(ind.Delay(c, 1)).gt(0));
  }
  next() { if (this.position.size === 0 && this.m.histo[0] > 0 && this.st.k[0] < 50) this.buy({ size: 1 }); else if (this.position.size > 0 && this.m.histo[0] < 0) this.close(); }}`, ""},
}

func lookaheadFeeds(n int) []engine.Feed {
	return []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(n, 3)}}
}

func TestLookahead(t *testing.T) {
	t.Parallel()
	for _, tc := range lookaheadCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, err := Lookahead(context.Background(), RunConfig{Code: tc.code, Feeds: lookaheadFeeds(1500)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Cuts < 5 || len(rep.CutBars) != rep.Cuts || rep.Lines != len(rep.Warmup) && tc.want == "" && rep.Lines > 0 && len(rep.Warmup) == 0 {
				t.Errorf("cuts %d %v, lines %d, warm-up %d", rep.Cuts, rep.CutBars, rep.Lines, len(rep.Warmup))
			}
			if tc.want == "" {
				if rep.Lookahead || len(rep.Findings) > 0 {
					t.Fatalf("a causal strategy was flagged: %+v", rep.Findings)
				}
				return
			}
			if !rep.Lookahead {
				t.Fatalf("look-ahead not found (cuts %v)", rep.CutBars)
			}
			first := rep.Findings[0]
			var names []string
			for _, f := range rep.Findings {
				names = append(names, f.What)
			}
			if !strings.Contains(strings.Join(names, " | "), tc.want) {
				t.Errorf("findings name %q, want %q among them", names, tc.want)
			}
			if first.Time.IsZero() || first.Bar < 0 || first.Bar >= 1500 || first.CutAt == 0 || first.Detail == "" {
				t.Errorf("first finding is incomplete: %+v", first)
			}
		})
	}
}

// TestLookaheadExamples: the shipped examples are causal, multi-feed and resampled ones
// included (the last resampled bar of a cut run is partial, and is the cut run's own).
func TestLookaheadExamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.js"))
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(1200, 7)}, {Symbol: "RW2", Bars: engine.RandomWalk(1200, 11)}}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			code, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			run := feeds
			if strings.Contains(string(code), "static replay") {
				run = feeds[:1] // the replay examples replay this.datas[0] of a run of one feed, as their fixtures
			}
			rep, err := Lookahead(context.Background(), RunConfig{Code: string(code), Feeds: run, Commission: 0.001})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Lookahead {
				t.Fatalf("flagged: %+v", rep.Findings)
			}
		})
	}
}

// TestLookaheadWarmup: an SMA is exact once its period is full; an EMA converges later;
// a cumulative line never stops depending on where the data starts.
func TestLookaheadWarmup(t *testing.T) {
	t.Parallel()
	code := `class S extends Strategy {
  init() { this.sma = ind.SMA(this.data.close, 20); this.ema = ind.EMA(this.data.close, 20);
    this.cum = ind.Compute(this.data.close, c => { let s = 0; return c.map(x => s += x); }); }
}`
	rep, err := Lookahead(context.Background(), RunConfig{Code: code, Feeds: lookaheadFeeds(2000)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lookahead || rep.WarmupStart != 500 {
		t.Fatalf("lookahead %v, warm-up start %d", rep.Lookahead, rep.WarmupStart)
	}
	got := map[string]int{}
	conv := map[string]bool{}
	for _, w := range rep.Warmup {
		got[w.What], conv[w.What] = w.Bars, w.Converged
	}
	if got["this.sma"] != 19 || !conv["this.sma"] {
		t.Errorf("sma warm-up %d (converged %v), want 19", got["this.sma"], conv["this.sma"])
	}
	if got["this.ema"] <= 19 || got["this.ema"] > 1000 || !conv["this.ema"] {
		t.Errorf("ema warm-up %d (converged %v)", got["this.ema"], conv["this.ema"])
	}
	if conv["this.cum"] {
		t.Errorf("a cumulative sum converged: %+v", rep.Warmup)
	}
}

// BenchmarkLookahead measures a check of a 5,000-bar run beside a single run of the same
// strategy on the same bars (BenchmarkLookahead/single): the check must cost under 10.
func BenchmarkLookahead(b *testing.B) {
	code, err := os.ReadFile(filepath.Join(repoRoot(b), "examples", "sma_cross.js"))
	if err != nil {
		b.Fatal(err)
	}
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(5000, 42)}}
	cfg := RunConfig{Code: string(code), Compiled: Compile(string(code)), Feeds: feeds, Commission: 0.001, OnLog: func(engine.LogEntry) {}}
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			if _, err := Run(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, err := Lookahead(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// futureReads are strategies that let a series handed to ind.Compute out of its function
// and read a later bar of it at a bar: the red team's (a copy read five bars ahead in
// next(), on a signal so rare that the cuts see no order or state change) and its
// variants. Each must be found as a read, at the bar where it happened (bar), of the bar
// read (read: the first feed's bars before it, cut_at).
var futureReads = []struct {
	name, code string
	what       string // the finding's What
	bar, read  int
	where      string // in the finding's detail
}{
	{"copy in Compute, five ahead in next", `class S extends Strategy {
  init() { let all = []; ind.Compute(this.data.close, c => { all = c.slice(); return c; }); this.ahead = k => all[k]; }
  next() {
    const i = this.data.close.length - 1, f = this.ahead(i + 5);
    if (this.position.size === 0 && f > this.data.close[0] * 1.5) this.buy({ size: 1 });
  }}`, "ind.Compute input at code line 2", 0, 5, "a function at code line 2, called from next() at code line 4"},
	{"kept in init, read in next", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.all = c; return c; }); }
  next() { const i = this.data.close.length - 1; if (i > 40 && this.all[i + 5] > 1e9) this.buy({ size: 1 }); }}`,
		"ind.Compute input at code line 2", 41, 46, "next() at code line 3"},
	{"read in ind.Apply", `class S extends Strategy {
  init() {
    let all = [];
    ind.Compute(this.data.close, c => { all = c.map(x => x); return c; });
    this.sig = ind.Apply(this.data.close, (v, i) => all[i + 5]);
  }` + trader + `}`, "ind.Compute input at code line 4", 0, 5, "the ind.Apply function (a function at code line 5, called from init() at code line 5)"},
	{"a slice from the middle", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.tail = c.slice(100); return c; }); }
  next() { const i = this.data.close.length - 1; if (i >= 100 && this.tail[i - 100 + 2] > 1e9) this.buy({ size: 1 }); }}`,
		"ind.Compute input at code line 2", 100, 102, "next() at code line 3"},
	{"spread in next", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.all = c; return c; }); }
  next() { const xs = [...this.all]; if (xs[xs.length - 1] > 1e9) this.buy({ size: 1 }); }}`,
		"ind.Compute input at code line 2", 0, 1, "next() at code line 3"},
	{"Array.from, slice and JSON in next", `class S extends Strategy {
  init() { ind.Compute(this.data.close, c => { this.all = c; return c; }); }
  next() {
    const i = this.data.close.length - 1;
    if (i === 300) { const w = Array.from(this.all.slice(i - 3, i + 3)); this.log(JSON.stringify(w)); }
  }}`, "ind.Compute input at code line 2", 300, 301, "next() at code line 5"},
	{"captured in init, the whole history's maximum", `class S extends Strategy {
  init() { ind.Compute(this.data.high, h => { this.h = h; return h; }); this.top = Math.max(...this.h); }
  next() { if (this.position.size === 0 && this.data.high[0] > this.top * 0.99) this.buy({ size: 1 }); }}`,
		"ind.Compute input at code line 2", 0, 1, "init() at code line 2"},
	{"second input, in a notification", `class S extends Strategy {
  init() { ind.Compute([this.data.close, this.data.high], (c, h) => { this.h = h; return c; }); this.n = 0; }
  next() { this.n++; if (this.n === 10) this.buy({ size: 1 }); }
  notifyOrder(o) { const i = this.data.close.length - 1; if (o.status === 'Completed') this.seen = this.h[i + 3]; }}`,
		"ind.Compute input 2 at code line 2", 10, 13, "notifyOrder() at code line 4"},
	{"at() and a loop in next", `class S extends Strategy {
  init() { ind.Compute(this.data.low, l => { this.lows = l.filter(() => true); return l; }); }
  next() {
    const i = this.data.close.length - 1;
    if (i === 700) { let k = 0; for (const x of this.lows) { if (x > 1e9) k++; } this.k = k + this.lows.at(i); }
  }}`, "ind.Compute input at code line 2", 700, 701, "next() at code line 5 read bar 701"},
}

func TestLookaheadFutureReads(t *testing.T) {
	t.Parallel()
	feeds := lookaheadFeeds(1500)
	for _, tc := range futureReads {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, err := Lookahead(context.Background(), RunConfig{Code: tc.code, Feeds: feeds})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Lookahead {
				t.Fatalf("look-ahead not found: %+v", rep.Findings)
			}
			var got *bias.Finding
			for i, f := range rep.Findings {
				if f.Kind == "read" {
					got = &rep.Findings[i]
				}
			}
			if got == nil {
				t.Fatalf("no read found: %+v", rep.Findings)
			}
			if got.What != tc.what || got.Call != "ind.Compute" || got.Bar != tc.bar || got.CutAt != tc.read ||
				!got.Time.Equal(feeds[0].Bars[tc.bar].Time) || got.Cut != "undefined" || got.Full == "" {
				t.Errorf("read %+v, want %q at bar %d of bar %d", *got, tc.what, tc.bar, tc.read)
			}
			if !strings.Contains(got.Detail, tc.where) || !strings.Contains(got.Detail, feeds[0].Bars[tc.read].Time.Format(time.DateOnly)) {
				t.Errorf("detail %q, want %q and the date of bar %d", got.Detail, tc.where, tc.read)
			}
		})
	}
}

// TestLinesHideTheFuture: a line (a data column or an indicator) shows nothing after the
// current bar, however a strategy reads or copies it: positive indexes, spread,
// Array.from, slice, map, iteration, JSON and length. In an ordinary run, where
// ind.Compute hands plain arrays, the whole series taken from it tells what the future is.
func TestLinesHideTheFuture(t *testing.T) {
	t.Parallel()
	code := `class S extends Strategy {
  init() { this.sma = ind.SMA(this.data.close, 5); ind.Compute(this.data.close, c => { this.all = c; return c; }); }
  next() {
    const i = this.data.close.length - 1;
    const past = new Set(this.all.slice(0, i + 1));
    for (const [name, c] of [['close', this.data.close], ['sma', this.sma]]) {
      if (c.length !== i + 1) throw new Error(name + '.length is ' + c.length + ' at bar ' + i);
      const iter = []; for (const x of c) iter.push(x);
      const views = { index: [1, 2, 3, 5, 50].map(k => c[k]), spread: [...c], from: Array.from(c), slice: c.slice(), map: c.map(x => x),
        iter, json: JSON.parse(JSON.stringify(c)), at: [c.at(1), c.at(-1)] };
      for (const [how, xs] of Object.entries(views))
        for (const x of xs)
          if (name === 'close' && typeof x === 'number' && !Number.isNaN(x) && !past.has(x))
            throw new Error(name + ' read by ' + how + ' at bar ' + i + ' shows ' + x + ', not a value of a bar so far');
      if (c[1] === c[1] || c[5] === c[5]) throw new Error(name + ' has a value at a positive index at bar ' + i);
    }
  }}`
	if _, err := Run(context.Background(), RunConfig{Code: code, Feeds: lookaheadFeeds(400), OnLog: func(engine.LogEntry) {}}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkComputeApply is a single run of a strategy whose indicators are its own
// (ind.Compute and ind.Apply, which a run of the check watches): an ordinary run hands
// plain arrays and must not pay for the watching (single); and a check of it (check).
func BenchmarkComputeApply(b *testing.B) {
	code := `class S extends Strategy {
  init() {
    this.m = ind.Compute(this.data.close, c => { const out = []; let s = 0;
      for (let i = 0; i < c.length; i++) { s += c[i]; if (i >= 20) s -= c[i - 20]; out.push(i >= 19 ? s / 20 : NaN); } return out; });
    this.d = ind.Apply([this.data.close, this.m], (c, m) => c - m);
  }
  next() { if (this.position.size === 0 && this.d[0] < 0) this.buy({ size: 1 }); else if (this.position.size > 0 && this.d[0] > 0) this.close(); }}`
	cfg := RunConfig{Code: code, Compiled: Compile(code), Feeds: lookaheadFeeds(5000), OnLog: func(engine.LogEntry) {}}
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			if _, err := Run(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) { // watched arrays: the Compute function reads them
		for b.Loop() {
			if _, err := Lookahead(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestWatchedArraysBehaveAsArrays: the arrays a run of the check hands ind.Compute behave
// as the plain arrays of an ordinary run (else the check would judge another program).
func TestWatchedArraysBehaveAsArrays(t *testing.T) {
	t.Parallel()
	code := `class S extends Strategy {
  init() {
    ind.Compute(this.data.close, c => {
      const checks = {
        isArray: Array.isArray(c), instance: c instanceof Array, ctor: c.constructor === Array,
        tag: Object.prototype.toString.call(c) === '[object Array]', keys: Object.keys(c).length === c.length,
        forIn: (() => { let k = 0; for (const _ in c) k++; return k === c.length; })(), number: typeof c[0] === 'number',
        json: JSON.stringify(c.slice(0, 2)) === '[' + c[0] + ',' + c[1] + ']', copies: Array.isArray(c.slice()) && Array.isArray(c.map(x => x)),
        spread: [...c].length === c.length && Math.max(...c) === c.reduce((a, b) => Math.max(a, b), -Infinity),
        outside: c[c.length] === undefined && c[-1] === undefined, concat: c.concat([1]).length === c.length + 1,
      };
      for (const [k, ok] of Object.entries(checks)) if (!ok) throw new Error('the input array differs from a plain one: ' + k);
      c.push(1); c.pop(); c[0] = c[0];
      return c;
    });
  }}`
	cfg := RunConfig{Code: code, Feeds: lookaheadFeeds(300), OnLog: func(engine.LogEntry) {}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("ordinary run: %v", err)
	}
	rep, err := Lookahead(context.Background(), cfg)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if rep.Lookahead {
		t.Fatalf("flagged: %+v", rep.Findings)
	}
}
