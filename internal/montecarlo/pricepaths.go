package montecarlo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/backtestd/backtestd/internal/engine"
)

// Bounds of a price_paths request. Each run is a whole rerun of the strategy in a runner
// process, so the runs are far fewer than a simulation's: MaxPathWork bounds runs × bars
// (at some 2 µs a bar for a simple strategy, a few seconds of runner time), and the whole
// job is held to the run time limit besides.
const (
	DefaultPathRuns = 100
	MaxPathRuns     = 1000
	MaxPathWork     = 2_000_000
)

// MaxPathRunsFor is the most price paths a result of bars bars may be rerun on:
// MaxPathRuns, fewer where runs × bars would pass MaxPathWork (at least 1).
func MaxPathRunsFor(bars int) int {
	if bars <= 0 {
		return MaxPathRuns
	}
	return max(1, min(MaxPathRuns, MaxPathWork/bars))
}

// CheckPaths validates opts for price paths of a result of bars bars and fills the
// defaults: runs (DefaultPathRuns, fewer for long results), block (the cube root of the
// bars' returns, rounded) and the loss shares. A result needs at least 2 bars (one return
// to draw); block is from 1 to the number of returns, bars − 1.
func CheckPaths(bars int, opts *Options) error {
	if opts.Method != PricePaths {
		return invalid("CheckPaths checks the price_paths method, not %s", opts.Method)
	}
	if bars < 2 {
		return invalid("The price_paths method needs at least 2 bars, the result has %d", bars)
	}
	if opts.Runs == 0 {
		opts.Runs = min(DefaultPathRuns, MaxPathRunsFor(bars))
	}
	if hi := MaxPathRunsFor(bars); opts.Runs < 1 || opts.Runs > hi {
		return invalid("Invalid runs %d: from 1 to %d for this result (each run reruns the strategy on %d bars, at most %d bars in all)",
			opts.Runs, hi, bars, MaxPathWork)
	}
	rets := bars - 1
	if opts.Block == 0 {
		opts.Block = max(1, int(math.Round(math.Cbrt(float64(rets)))))
	}
	if opts.Block < 1 || opts.Block > rets {
		return invalid("Invalid block %d: from 1 to the result's %d returns (its bars less the first)", opts.Block, rets)
	}
	return checkLosses(opts)
}

// PathRand is the random source of price path run (from 0) under seed: each run has its
// own stream, so run i's path is the same whatever the number of runs asked for.
func PathRand(seed uint64, run int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x7072696365000000^uint64(run))) // "price"
}

// BlockIndices draws the source bar of each of the bars 1..n−1 of a path over n bars: a
// circular block bootstrap of the n−1 returns (bar i against bar i−1's close, i = 1..n−1).
// Each block starts at a random return and takes block consecutive ones, wrapping from bar
// n−1 to bar 1; the last block is cut at the path's end. out[i−1] is the source of bar i.
func BlockIndices(n, block int, rng *rand.Rand) []int {
	m := n - 1
	out := make([]int, 0, max(m, 0))
	for len(out) < m {
		start := rng.IntN(m)
		for j := 0; j < block && len(out) < m; j++ {
			out = append(out, 1+(start+j)%m)
		}
	}
	return out
}

// RebuildBars is the path of bars whose bar i (i ≥ 1) is bar idx[i−1] moved onto the path:
// its open, high, low and close relative to its previous bar's close, times the path's
// previous close. Bar 0 is the first bar as it is; every bar keeps its own time, and takes
// the drawn bar's volume with its prices (a bar without trading stays one). Multiplying by
// one positive number keeps a bar's order: high ≥ max(open, close) ≥ min(open, close) ≥ low
// > 0 holds on the path wherever it held on the bars.
func RebuildBars(bars []engine.Bar, idx []int) []engine.Bar {
	out := make([]engine.Bar, len(bars))
	out[0] = bars[0]
	prev := bars[0].Close
	for i := 1; i < len(bars); i++ {
		src := bars[idx[i-1]]
		base := bars[idx[i-1]-1].Close
		out[i] = engine.Bar{Time: bars[i].Time, Volume: src.Volume,
			Open: prev * (src.Open / base), High: prev * (src.High / base),
			Low: prev * (src.Low / base), Close: prev * (src.Close / base)}
		prev = out[i].Close
	}
	return out
}

// CheckFeeds says whether feeds can make price paths: every price a positive finite
// number, and, with several symbols, the same bars' times in each (the paths draw the
// same blocks for all, which keeps the symbols' co-movement).
func CheckFeeds(feeds []engine.Feed) error {
	for i, f := range feeds {
		if i > 0 && len(f.Bars) != len(feeds[0].Bars) {
			return invalid("Price paths of several symbols draw the same bars for all, and %s has %d bars, %s %d",
				f.Symbol, len(f.Bars), feeds[0].Symbol, len(feeds[0].Bars))
		}
		for j, b := range f.Bars {
			if !positive(b.Open) || !positive(b.High) || !positive(b.Low) || !positive(b.Close) {
				return invalid("Price paths need positive prices: %s's bar at %s has open %v, high %v, low %v, close %v",
					f.Symbol, b.Time.Format("2006-01-02 15:04"), b.Open, b.High, b.Low, b.Close)
			}
			if i > 0 && !b.Time.Equal(feeds[0].Bars[j].Time) {
				return invalid("Price paths of several symbols draw the same bars for all, and %s's bar %d is at %s, %s's at %s",
					f.Symbol, j+1, b.Time.Format("2006-01-02 15:04"), feeds[0].Symbol, feeds[0].Bars[j].Time.Format("2006-01-02 15:04"))
			}
		}
	}
	return nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// PricePath is price path run (from 0) of feeds under seed with blocks of block bars:
// the same block indices (BlockIndices with PathRand(seed, run)) rebuild every feed
// (RebuildBars). feeds must pass CheckFeeds. A path whose prices leave the range of a
// float (a very long, very trending path) is an InvalidError.
func PricePath(feeds []engine.Feed, block int, seed uint64, run int) ([]engine.Feed, error) {
	if len(feeds) == 0 {
		return nil, invalid("Price paths need at least one symbol")
	}
	idx := BlockIndices(len(feeds[0].Bars), block, PathRand(seed, run))
	out := make([]engine.Feed, len(feeds))
	for i, f := range feeds {
		out[i] = engine.Feed{Symbol: f.Symbol, Bars: RebuildBars(f.Bars, idx)}
		for _, b := range out[i].Bars {
			if !positive(b.Low) || !positive(b.High) {
				return nil, invalid("Price path %d of %s leaves the range of a number; use shorter data", run+1, f.Symbol)
			}
		}
	}
	return out, nil
}

// Paths collects the reruns of a price_paths request: Add each run's equity returns per
// bar in run order, then Answer. Its figures and percentiles are those of every method.
type Paths struct {
	in   Input
	opts Options
	p    *path
	t    *tally
	a    *Answer
}

// NewPaths starts collecting opts.Runs reruns of the result in (its starting capital,
// returns per bar, calendar span and summary figures). opts must have passed CheckPaths.
func NewPaths(in Input, opts Options) (*Paths, error) {
	if err := CheckPaths(len(in.Returns), &opts); err != nil {
		return nil, err
	}
	if !(in.InitialCash > 0) {
		return nil, invalid("The result has no positive starting capital to simulate from")
	}
	steps := len(in.Returns)
	a := &Answer{Method: PricePaths, Runs: opts.Runs, Seed: opts.Seed, Block: opts.Block, Steps: steps, Unit: PricePaths.unit(),
		InitialCash: in.InitialCash}
	a.Fan.Steps = fanSteps(steps)
	p := newPath(in, opts, a.Fan.Steps)
	a.Original = p.walk(nil, in.Returns, nil)
	if in.Run != nil {
		a.Original.FinalValue, a.Original.CAGR, a.Original.MaxDrawdownPct = in.Run.FinalValue, in.Run.CAGR, in.Run.MaxDrawdownPct
	}
	return &Paths{in: in, opts: opts, p: p, t: newTally(opts.Runs, len(a.Fan.Steps), len(opts.Losses)), a: a}, nil
}

// Add records one rerun: its returns per bar (engine.BarReturns of its equity), as many as
// the result's.
func (ps *Paths) Add(returns []float64) error {
	if len(returns) != len(ps.in.Returns) {
		return fmt.Errorf("montecarlo: a rerun has %d returns, the result %d", len(returns), len(ps.in.Returns))
	}
	if ps.t.n == ps.opts.Runs {
		return fmt.Errorf("montecarlo: all %d runs were added", ps.opts.Runs)
	}
	ps.t.add(ps.p, ps.p.walk(nil, returns, ps.p.fan))
	return nil
}

// Answer is the answer once every run was added.
func (ps *Paths) Answer() (*Answer, error) {
	if ps.t.n != ps.opts.Runs {
		return nil, fmt.Errorf("montecarlo: %d of %d runs added", ps.t.n, ps.opts.Runs)
	}
	ps.t.answer(ps.a, ps.in, ps.opts)
	return ps.a, nil
}
