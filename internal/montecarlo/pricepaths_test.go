package montecarlo

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// walkBars is a consistent, deterministic series of n daily bars: gains, losses, gaps.
func walkBars(n int, phase float64) []engine.Bar {
	out := make([]engine.Bar, n)
	c := 100.0
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		o := c * (1 + 0.004*math.Sin(float64(i)*1.3+phase))
		c = o * (1 + 0.02*math.Sin(float64(i)*0.7+phase))
		out[i] = engine.Bar{Time: t0.AddDate(0, 0, i), Open: o, Close: c,
			High: max(o, c) * (1 + 0.003*(1+math.Cos(float64(i)))), Low: min(o, c) * (1 - 0.003*(1+math.Sin(float64(i)))),
			Volume: int64(1000 + i)}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestRebuildBarsByHand works a path by hand. Bar 1 moves 100 → o 100 h 120 l 95 c 110
// (× 1, 1.2, 0.95, 1.1 of the close before) and bar 2 110 → o 110 h 121 l 88 c 99 (× 1,
// 1.1, 0.8, 0.9). Drawing bar 2 then bar 1: bar 1 of the path is 100 × (1, 1.1, 0.8, 0.9)
// = 100, 110, 80, 90, and bar 2 is 90 × (1, 1.2, 0.95, 1.1) = 90, 108, 85.5, 99; each keeps
// its own time and takes its drawn bar's volume.
func TestRebuildBarsByHand(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	bars := []engine.Bar{
		{Time: t0, Open: 100, High: 100, Low: 100, Close: 100, Volume: 5},
		{Time: t0.AddDate(0, 0, 1), Open: 100, High: 120, Low: 95, Close: 110, Volume: 7},
		{Time: t0.AddDate(0, 0, 2), Open: 110, High: 121, Low: 88, Close: 99, Volume: 9},
	}
	got := RebuildBars(bars, []int{2, 1})
	want := []engine.Bar{
		bars[0],
		{Time: t0.AddDate(0, 0, 1), Open: 100, High: 110, Low: 80, Close: 90, Volume: 9},
		{Time: t0.AddDate(0, 0, 2), Open: 90, High: 108, Low: 85.5, Close: 99, Volume: 7},
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) || g.Volume != w.Volume || !near(g.Open, w.Open) || !near(g.High, w.High) || !near(g.Low, w.Low) || !near(g.Close, w.Close) {
			t.Errorf("bar %d: %+v, want %+v", i, g, w)
		}
	}
	// The identity draw gives the bars back.
	same := RebuildBars(bars, []int{1, 2})
	for i := range bars {
		if !near(same[i].Close, bars[i].Close) || !near(same[i].High, bars[i].High) {
			t.Errorf("identity draw, bar %d: %+v, want %+v", i, same[i], bars[i])
		}
	}
}

// TestBlockIndices: n−1 sources, each a return (1..n−1); within a block they run on, wrapping
// from the last bar to bar 1; blocks start at multiples of the block length; the same
// source of randomness draws the same indices.
func TestBlockIndices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, block int }{{2, 1}, {7, 1}, {7, 3}, {7, 6}, {101, 5}, {101, 100}, {50, 7}} {
		m := tc.n - 1
		for seed := range uint64(20) {
			idx := BlockIndices(tc.n, tc.block, PathRand(seed, 0))
			if len(idx) != m {
				t.Fatalf("n %d: %d indices, want %d", tc.n, len(idx), m)
			}
			for k, s := range idx {
				if s < 1 || s > m {
					t.Fatalf("n %d block %d seed %d: index %d is %d, outside 1..%d", tc.n, tc.block, seed, k, s, m)
				}
				if k%tc.block != 0 && s != idx[k-1]%m+1 {
					t.Fatalf("n %d block %d seed %d: index %d is %d after %d, inside a block", tc.n, tc.block, seed, k, s, idx[k-1])
				}
			}
			if again := BlockIndices(tc.n, tc.block, PathRand(seed, 0)); !reflect.DeepEqual(idx, again) {
				t.Fatalf("n %d seed %d: drawn twice differently", tc.n, seed)
			}
		}
	}
	// With blocks of every return, a path is one rotation of the bars: it wraps once.
	idx := BlockIndices(6, 5, PathRand(3, 0))
	for k := 1; k < len(idx); k++ {
		if idx[k] != idx[k-1]%5+1 {
			t.Fatalf("block of all 5 returns %v is not a rotation", idx)
		}
	}
}

// TestPricePathConsistent: every bar of every path keeps high ≥ max(open, close) ≥
// min(open, close) ≥ low > 0, its time, and starts from the bar before's close by its
// drawn bar's own moves; two symbols move by the same drawn bars.
func TestPricePathConsistent(t *testing.T) {
	t.Parallel()
	a, b := walkBars(300, 0), walkBars(300, 2)
	feeds := []engine.Feed{{Symbol: "A", Bars: a}, {Symbol: "B", Bars: b}}
	if err := CheckFeeds(feeds); err != nil {
		t.Fatal(err)
	}
	for run := range 30 {
		path, err := PricePath(feeds, 9, 42, run)
		if err != nil {
			t.Fatal(err)
		}
		idx := BlockIndices(300, 9, PathRand(42, run))
		for f, feed := range path {
			src := feeds[f].Bars
			for i, bar := range feed.Bars {
				if !(bar.High >= max(bar.Open, bar.Close) && min(bar.Open, bar.Close) >= bar.Low && bar.Low > 0) {
					t.Fatalf("run %d %s bar %d inconsistent: %+v", run, feed.Symbol, i, bar)
				}
				if !bar.Time.Equal(src[i].Time) {
					t.Fatalf("run %d bar %d at %v, want %v", run, i, bar.Time, src[i].Time)
				}
				if i == 0 {
					continue
				}
				s := idx[i-1]
				if got, want := bar.Close/feed.Bars[i-1].Close, src[s].Close/src[s-1].Close; math.Abs(got-want) > 1e-12 {
					t.Fatalf("run %d %s bar %d moves %v, its drawn bar %d %v", run, feed.Symbol, i, got, s, want)
				}
				if bar.Volume != src[s].Volume {
					t.Fatalf("run %d bar %d volume %d, drawn bar's %d", run, i, bar.Volume, src[s].Volume)
				}
			}
		}
	}
	p1, _ := PricePath(feeds, 9, 42, 5)
	p2, _ := PricePath(feeds, 9, 42, 5)
	p3, _ := PricePath(feeds, 9, 43, 5)
	if !reflect.DeepEqual(p1, p2) {
		t.Error("seed 42 run 5 drawn twice differently")
	}
	if reflect.DeepEqual(p1, p3) {
		t.Error("seeds 42 and 43 drew the same path")
	}
}

func TestCheckFeeds(t *testing.T) {
	t.Parallel()
	bad := walkBars(10, 0)
	bad[4].Low = 0
	shifted := walkBars(10, 1)
	shifted[3].Time = shifted[3].Time.Add(time.Hour)
	for _, tc := range []struct {
		name  string
		feeds []engine.Feed
		want  string
	}{
		{"zero low", []engine.Feed{{Symbol: "A", Bars: bad}}, "positive prices"},
		{"other length", []engine.Feed{{Symbol: "A", Bars: walkBars(10, 0)}, {Symbol: "B", Bars: walkBars(9, 0)}}, "B has 9 bars"},
		{"other dates", []engine.Feed{{Symbol: "A", Bars: walkBars(10, 0)}, {Symbol: "B", Bars: shifted}}, "bar 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckFeeds(tc.feeds)
			var ie *InvalidError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckFeeds: %v, want an InvalidError with %q", err, tc.want)
			}
		})
	}
	if err := CheckFeeds([]engine.Feed{{Symbol: "A", Bars: walkBars(10, 0)}, {Symbol: "B", Bars: walkBars(10, 3)}}); err != nil {
		t.Errorf("aligned feeds: %v", err)
	}
}

func TestCheckPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		bars      int
		opts      Options
		runs, blk int
		bad       string
	}{
		{"defaults", 1001, Options{}, DefaultPathRuns, 10, ""},
		{"defaults on a long result", 100_000, Options{}, 20, 46, ""},
		{"most runs", 2000, Options{Runs: 1000, Block: 1999}, 1000, 1999, ""},
		{"too many runs", 2000, Options{Runs: 1001}, 0, 0, "Invalid runs 1001: from 1 to 1000"},
		{"too much work", 100_000, Options{Runs: 21}, 0, 0, "from 1 to 20"},
		{"block past the returns", 50, Options{Block: 50}, 0, 0, "Invalid block 50: from 1 to the result's 49 returns"},
		{"negative block", 50, Options{Block: -1}, 0, 0, "Invalid block -1"},
		{"one bar", 1, Options{}, 0, 0, "at least 2 bars"},
		{"bad loss", 50, Options{Losses: []float64{1.5}}, 0, 0, "Invalid loss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			o.Method = PricePaths
			err := CheckPaths(tc.bars, &o)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("got %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || o.Runs != tc.runs || o.Block != tc.blk {
				t.Fatalf("got runs %d block %d err %v, want runs %d block %d", o.Runs, o.Block, err, tc.runs, tc.blk)
			}
		})
	}
}

// TestPathsByHand: reruns with returns +10%, −50%, +100% on 100 go 110, 55, 110 (a 50%
// drawdown, 1 bar below the peak, 45% lost at worst), and +0%, +0%, +20% go 100, 100, 120;
// the percentiles over the two runs interpolate between them, as every method's do.
func TestPathsByHand(t *testing.T) {
	t.Parallel()
	in := Input{InitialCash: 100, Returns: []float64{0.1, -0.5, 1}, Years: 1}
	ps, err := NewPaths(in, Options{Method: PricePaths, Runs: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a := ps.a.Original; !near(a.FinalValue, 110) || !near(a.MaxDrawdownPct, 50) || a.LongestDrawdown != 1 {
		t.Fatalf("original %+v", a)
	}
	if _, err := ps.Answer(); err == nil {
		t.Fatal("an answer before the runs were added")
	}
	if err := ps.Add([]float64{0.1, -0.5, 1}); err != nil {
		t.Fatal(err)
	}
	if err := ps.Add([]float64{0, 0}); err == nil {
		t.Fatal("a rerun of 2 returns was taken for 3")
	}
	if err := ps.Add([]float64{0, 0, 0.2}); err != nil {
		t.Fatal(err)
	}
	a, err := ps.Answer()
	if err != nil {
		t.Fatal(err)
	}
	// Two values x ≤ y: the q quantile is x + q (y − x).
	if fv := a.FinalValue; !near(fv.P5, 110.5) || !near(fv.P50, 115) || !near(fv.P95, 119.5) {
		t.Errorf("final value %+v, want 110.5, 115, 119.5", fv)
	}
	if dd := a.MaxDrawdownPct; !near(dd.P5, 2.5) || !near(dd.P50, 25) {
		t.Errorf("max drawdown %+v, want p5 2.5, p50 25", dd)
	}
	if lp := a.LossProbability; len(lp) != 3 || lp[0].Probability != 0.5 || lp[1].Probability != 0.5 || lp[2].Probability != 0 {
		t.Errorf("loss probabilities %+v: one run of two fell to 55, none to 50", lp)
	}
	if a.Method != PricePaths || a.Unit != "bars" || a.Steps != 3 || !reflect.DeepEqual(a.Fan.Steps, []int{0, 1, 2, 3}) {
		t.Errorf("answer %s %s %d %v", a.Method, a.Unit, a.Steps, a.Fan.Steps)
	}
	if f := a.Fan; !near(f.P50[0], 100) || !near(f.P50[2], 77.5) || !near(f.P50[3], 115) {
		t.Errorf("fan medians %v", f.P50)
	}
	if _, err := Run(t.Context(), in, Options{Method: PricePaths}); err == nil {
		t.Error("Run simulated price_paths from the result alone")
	}
}

// FuzzPricePaths: any bars, runs and block either fail CheckPaths with an InvalidError or
// lie within the bounds, and then every path of a consistent series is consistent, as long
// as the series, and draws only its returns.
func FuzzPricePaths(f *testing.F) {
	f.Add(50, 0, 0, uint64(1))
	f.Add(2, 1, 1, uint64(0))
	f.Add(300, 1000, 299, uint64(7))
	f.Add(1, 5, 3, uint64(2))
	f.Add(400, -3, -1, uint64(9))
	f.Fuzz(func(t *testing.T, bars, runs, block int, seed uint64) {
		bars = bars % 5000
		opts := Options{Method: PricePaths, Runs: runs, Block: block, Seed: seed}
		err := CheckPaths(bars, &opts)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("bars %d runs %d block %d: %v is not an InvalidError", bars, runs, block, err)
			}
			return
		}
		if opts.Runs < 1 || opts.Runs > MaxPathRuns || opts.Runs*bars > max(MaxPathWork, bars) || opts.Block < 1 || opts.Block > bars-1 {
			t.Fatalf("bars %d: accepted runs %d block %d", bars, opts.Runs, opts.Block)
		}
		feed := []engine.Feed{{Symbol: "A", Bars: walkBars(bars, float64(seed%7))}}
		path, err := PricePath(feed, opts.Block, seed, opts.Runs-1)
		if err != nil {
			t.Fatal(err)
		}
		if len(path[0].Bars) != bars {
			t.Fatalf("a path of %d bars from %d", len(path[0].Bars), bars)
		}
		for i, b := range path[0].Bars {
			if !(b.High >= max(b.Open, b.Close) && min(b.Open, b.Close) >= b.Low && b.Low > 0) {
				t.Fatalf("bar %d inconsistent: %+v", i, b)
			}
		}
	})
}
