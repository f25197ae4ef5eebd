// Package montecarlo resamples a backtest's closed trades or returns per bar to show how much
// of its result was the luck of their order: the spread of final value, CAGR, max drawdown
// and longest drawdown over many simulated equity paths, the probability of losing a share of
// the capital, and percentile bands of the paths. It is pure computation: the same Input,
// Options and seed always give the same Answer.
package montecarlo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/backtestd/backtestd/internal/engine"
)

// Method is how a simulated path is drawn.
type Method string

const (
	// Shuffle puts the closed trades' net pnl in a random order: every path ends at the same
	// value, only the way there (drawdowns) changes.
	Shuffle Method = "shuffle"
	// Bootstrap draws as many trades as were closed, with replacement.
	Bootstrap Method = "bootstrap"
	// Block draws the returns per bar in blocks of consecutive bars (a circular block
	// bootstrap), which keeps the short-range dependence of the returns.
	Block Method = "block"
	// PricePaths reruns the strategy on price paths made by a block bootstrap of the bars'
	// returns (PricePath); Paths collects the reruns' equity. Run does not take it.
	PricePaths Method = "price_paths"
)

// compounds says whether m's paths are returns per bar (compounded) rather than trades'
// pnl (added).
func (m Method) compounds() bool { return m == Block || m == PricePaths }

// unit names what one step of m's paths is.
func (m Method) unit() string {
	if m.compounds() {
		return "bars"
	}
	return "trades"
}

// Methods lists the methods Run simulates, in the order the API documents them (PricePaths,
// which reruns the strategy, comes last).
var Methods = []Method{Shuffle, Bootstrap, Block}

// Bounds of a request. MaxWork bounds runs × steps, the simulation's cost in time (about
// 10 ns of CPU a step: 0.2 s at the bound); memory is FanPoints × runs floats.
const (
	DefaultRuns = 1000
	MaxRuns     = 10000
	MaxWork     = 20_000_000
	FanPoints   = 101 // points of the fan chart, the start included
	Bins        = 30  // bins of each histogram
	MaxLosses   = 10
)

// DefaultLosses are the shares of the capital whose loss probability is answered by default.
var DefaultLosses = []float64{0.1, 0.25, 0.5}

// Input is what a simulation resamples: the result's starting capital, its closed trades'
// net pnl (shuffle, bootstrap) and its returns per bar (block), and its calendar span in
// years, which turns a final value into a CAGR. Run, when given, is the result's own figures
// as its summary states them (engine.CurveFiguresOf: final value, CAGR, max drawdown of the
// curve bar by bar); Answer.Original then reads those, so "this run" is the same number
// wherever it is shown. Without it Original is the figures of the result's own path in the
// method's steps, which, trade by trade, misses the falls within a trade.
type Input struct {
	InitialCash float64
	PnL         []float64
	Returns     []float64
	Years       float64
	Run         *Figures
}

// Options choose the method, the number of runs, the seed, the block length (block only; 0
// means the cube root of the bars, rounded) and the loss shares to answer for.
type Options struct {
	Method Method
	Runs   int
	Seed   uint64
	Block  int
	Losses []float64
}

// Percentiles are the 5th, 25th, 50th, 75th and 95th percentiles of a figure over the runs
// (linear interpolation between ranks).
type Percentiles struct {
	P5  float64 `json:"p5"`
	P25 float64 `json:"p25"`
	P50 float64 `json:"p50"`
	P75 float64 `json:"p75"`
	P95 float64 `json:"p95"`
}

// Figures are one path's figures: final value, CAGR (nil without a calendar span), max
// drawdown in percent of the running peak (the starting capital the first peak), and the
// longest drawdown in steps (trades or bars: Answer.Unit) spent below a previous peak.
type Figures struct {
	FinalValue      float64  `json:"final_value"`
	CAGR            *float64 `json:"cagr"`
	MaxDrawdownPct  float64  `json:"max_drawdown_pct"`
	LongestDrawdown int      `json:"longest_drawdown"`
}

// LossProbability is the share of the runs whose equity fell to (1 − Loss) × the starting
// capital or below at any step.
type LossProbability struct {
	Loss        float64 `json:"loss"`
	Probability float64 `json:"probability"`
}

// Bin is one bin of a histogram: the runs whose figure lies in [From, To) (the last bin
// includes To).
type Bin struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Count int     `json:"count"`
}

// Fan is the percentile bands of the equity paths at Steps (step 0 is the start).
type Fan struct {
	Steps []int     `json:"steps"`
	P5    []float64 `json:"p5"`
	P25   []float64 `json:"p25"`
	P50   []float64 `json:"p50"`
	P75   []float64 `json:"p75"`
	P95   []float64 `json:"p95"`
}

// Answer is a simulation's outcome. Original is "this run", for comparison with the spread:
// its final value, CAGR and max drawdown are Input.Run's when given (the summary's), and its
// longest drawdown is in the method's steps, of its own trades in their order or its returns.
type Answer struct {
	Method          Method            `json:"method"`
	Runs            int               `json:"runs"`
	Seed            uint64            `json:"seed"`
	Block           int               `json:"block,omitempty"`
	Steps           int               `json:"steps"`
	Unit            string            `json:"unit"`
	InitialCash     float64           `json:"initial_cash"`
	Original        Figures           `json:"original"`
	FinalValue      Percentiles       `json:"final_value"`
	CAGR            *Percentiles      `json:"cagr"`
	MaxDrawdownPct  Percentiles       `json:"max_drawdown_pct"`
	LongestDrawdown Percentiles       `json:"longest_drawdown"`
	LossProbability []LossProbability `json:"loss_probability"`
	Fan             Fan               `json:"fan"`
	FinalValueHist  []Bin             `json:"final_value_histogram"`
	MaxDrawdownHist []Bin             `json:"max_drawdown_histogram"`
}

// InvalidError is an Options or Input that cannot be simulated; its text says why, for the
// person who asked.
type InvalidError struct{ msg string }

func (e *InvalidError) Error() string { return e.msg }

func invalid(format string, a ...any) error { return &InvalidError{msg: fmt.Sprintf(format, a...)} }

// ParseMethod returns the Method named s, or an InvalidError.
func ParseMethod(s string) (Method, error) {
	if m := Method(s); slices.Contains(Methods, m) || m == PricePaths {
		return m, nil
	}
	return "", invalid("Unknown Monte Carlo method '%s' (use shuffle, bootstrap, block or price_paths)", s)
}

// Steps is the length of in's paths under m: trades for shuffle and bootstrap, bars for
// block and price_paths.
func (in Input) Steps(m Method) int {
	if m.compounds() {
		return len(in.Returns)
	}
	return len(in.PnL)
}

// MaxRunsFor is the most runs a simulation of steps steps may take: MaxRuns, fewer where
// runs × steps would pass MaxWork (at least 1).
func MaxRunsFor(steps int) int {
	if steps <= 0 {
		return MaxRuns
	}
	return max(1, min(MaxRuns, MaxWork/steps))
}

// Run simulates opts.Runs paths of in. It fails with an InvalidError when the options or
// the input do not allow a simulation, and with ctx's error when ctx ends first.
func Run(ctx context.Context, in Input, opts Options) (*Answer, error) {
	if err := check(in, &opts); err != nil {
		return nil, err
	}
	steps := in.Steps(opts.Method)
	a := &Answer{Method: opts.Method, Runs: opts.Runs, Seed: opts.Seed, Block: opts.Block, Steps: steps, Unit: opts.Method.unit(), InitialCash: in.InitialCash}
	fanSteps := fanSteps(steps)
	a.Fan.Steps = fanSteps

	rng := rand.New(rand.NewPCG(opts.Seed, 0x6d6f6e746563726c)) // "montecrl": any fixed second word
	p := newPath(in, opts, fanSteps)
	a.Original = p.walk(in.PnL, in.Returns, nil)
	if in.Run != nil {
		a.Original.FinalValue, a.Original.CAGR, a.Original.MaxDrawdownPct = in.Run.FinalValue, in.Run.CAGR, in.Run.MaxDrawdownPct
	}
	t := newTally(opts.Runs, len(fanSteps), len(opts.Losses))
	for run := range opts.Runs {
		if run%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t.add(p, p.draw(rng))
	}
	t.answer(a, in, opts)
	return a, nil
}

// fanSteps are FanPoints steps evenly spread over 0..steps (all of them when fewer).
func fanSteps(steps int) []int {
	out := make([]int, 0, FanPoints)
	for i := range FanPoints {
		s := int(math.Round(float64(i) * float64(steps) / float64(FanPoints-1)))
		if len(out) == 0 || s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

// tally collects the runs' figures and fan points; answer turns them into an Answer's
// percentiles, loss probabilities, fan and histograms. Every method's figures go through it.
type tally struct {
	n                           int
	finals, cagrs, dds, longest []float64
	fan                         [][]float64 // fan[k][run]
	losses                      []int
}

func newTally(runs, fanPoints, losses int) *tally {
	t := &tally{finals: make([]float64, runs), cagrs: make([]float64, runs), dds: make([]float64, runs),
		longest: make([]float64, runs), fan: make([][]float64, fanPoints), losses: make([]int, losses)}
	for k := range t.fan {
		t.fan[k] = make([]float64, runs)
	}
	return t
}

// add records f, the figures of the path p walked last.
func (t *tally) add(p *path, f Figures) {
	run := t.n
	t.n++
	t.finals[run], t.dds[run], t.longest[run] = f.FinalValue, f.MaxDrawdownPct, float64(f.LongestDrawdown)
	if f.CAGR != nil {
		t.cagrs[run] = *f.CAGR
	}
	for k := range t.fan {
		t.fan[k][run] = p.fan[k]
	}
	for i, l := range p.opts.Losses {
		if p.low <= (1-l)*p.in.InitialCash {
			t.losses[i]++
		}
	}
}

func (t *tally) answer(a *Answer, in Input, opts Options) {
	// percentiles sorts its slice, which histogram needs.
	a.FinalValue, a.MaxDrawdownPct, a.LongestDrawdown = percentiles(t.finals), percentiles(t.dds), percentiles(t.longest)
	if in.Years > 0 { // the paths have a CAGR
		c := percentiles(t.cagrs)
		a.CAGR = &c
	}
	for i, l := range opts.Losses {
		a.LossProbability = append(a.LossProbability, LossProbability{Loss: l, Probability: float64(t.losses[i]) / float64(t.n)})
	}
	n := len(t.fan)
	a.Fan.P5, a.Fan.P25, a.Fan.P50, a.Fan.P75, a.Fan.P95 = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for k, col := range t.fan {
		q := percentiles(col)
		a.Fan.P5[k], a.Fan.P25[k], a.Fan.P50[k], a.Fan.P75[k], a.Fan.P95[k] = q.P5, q.P25, q.P50, q.P75, q.P95
	}
	a.FinalValueHist, a.MaxDrawdownHist = histogram(t.finals), histogram(t.dds)
}

// check validates opts against in, filling the defaults.
func check(in Input, opts *Options) error {
	if _, err := ParseMethod(string(opts.Method)); err != nil {
		return err
	}
	if opts.Method == PricePaths {
		return invalid("The price_paths method reruns the strategy; it is not simulated from a result alone")
	}
	if !(in.InitialCash > 0) {
		return invalid("The result has no positive starting capital to simulate from")
	}
	steps := in.Steps(opts.Method)
	switch {
	case opts.Method == Block && steps < 2:
		return invalid("The block method needs at least 2 bars, the result has %d", steps)
	case opts.Method != Block && steps == 0:
		return invalid("The %s method resamples closed trades, and the result has none (the block method resamples its returns per bar)", opts.Method)
	}
	if opts.Runs == 0 {
		opts.Runs = min(DefaultRuns, MaxRunsFor(steps))
	}
	if hi := MaxRunsFor(steps); opts.Runs < 1 || opts.Runs > hi {
		return invalid("Invalid runs %d: from 1 to %d for this result (%d %s a run, at most %d in all)", opts.Runs, hi, steps, opts.Method.unit(), MaxWork)
	}
	if opts.Method == Block {
		if opts.Block == 0 {
			opts.Block = max(1, int(math.Round(math.Cbrt(float64(steps)))))
		}
		if opts.Block < 1 || opts.Block > steps {
			return invalid("Invalid block %d: from 1 to the result's %d bars", opts.Block, steps)
		}
	} else if opts.Block != 0 {
		return invalid("block is the block method's length; the %s method takes none", opts.Method)
	}
	return checkLosses(opts)
}

// checkLosses validates opts.Losses, filling the default.
func checkLosses(opts *Options) error {
	if opts.Losses == nil {
		opts.Losses = DefaultLosses
	}
	if len(opts.Losses) > MaxLosses {
		return invalid("At most %d loss shares, got %d", MaxLosses, len(opts.Losses))
	}
	for _, l := range opts.Losses {
		if !(l > 0 && l <= 1) {
			return invalid("Invalid loss %v: a share of the capital above 0 and at most 1", l)
		}
	}
	return nil
}

// path simulates one path at a time into reused buffers.
type path struct {
	in      Input
	opts    Options
	fanAt   []int     // the fan's steps
	fan     []float64 // the last path's equity at fanAt
	low     float64   // the last path's lowest equity, the start included
	pnl     []float64 // the drawn trades (shuffle, bootstrap)
	rets    []float64 // the drawn returns (block)
	scratch []float64 // the final value's exact sum
}

func newPath(in Input, opts Options, fanAt []int) *path {
	p := &path{in: in, opts: opts, fanAt: fanAt, fan: make([]float64, len(fanAt))}
	if opts.Method.compounds() {
		p.rets = make([]float64, len(in.Returns))
	} else {
		p.pnl = make([]float64, len(in.PnL))
		p.scratch = make([]float64, len(in.PnL)+1)
	}
	return p
}

// draw simulates one path with rng and returns its figures.
func (p *path) draw(rng *rand.Rand) Figures {
	switch p.opts.Method {
	case Shuffle:
		copy(p.pnl, p.in.PnL)
		rng.Shuffle(len(p.pnl), func(i, j int) { p.pnl[i], p.pnl[j] = p.pnl[j], p.pnl[i] })
	case Bootstrap:
		for i := range p.pnl {
			p.pnl[i] = p.in.PnL[rng.IntN(len(p.in.PnL))]
		}
	case Block:
		n, l := len(p.rets), p.opts.Block
		for i := 0; i < n; {
			// A block from a random bar, wrapping past the last bar to the first.
			start, take := rng.IntN(n), min(l, n-i)
			i += copy(p.rets[i:i+take], p.in.Returns[start:min(start+take, n)])
			if end := start + take; end > n {
				i += copy(p.rets[i:], p.in.Returns[:end-n])
			}
		}
	}
	return p.walk(p.pnl, p.rets, p.fan)
}

// walk follows the path of pnl (added to the capital) or, for block, of rets (compounded),
// recording its equity at the fan's steps into fan when it is not nil.
func (p *path) walk(pnl, rets []float64, fan []float64) Figures {
	block := p.opts.Method.compounds()
	steps := len(pnl)
	if block {
		steps = len(rets)
	}
	v := p.in.InitialCash
	peak, low, maxDD := v, v, 0.0
	run, longest := 0, 0
	k, next := 0, -1 // the next fan point and its step
	if fan != nil {
		next = p.fanAt[0]
	}
	for i := 0; ; i++ {
		for i == next { // step i's equity (step 0: the start)
			fan[k] = v
			k++
			next = -1
			if k < len(p.fanAt) {
				next = p.fanAt[k]
			}
		}
		if i == steps {
			break
		}
		if block {
			v *= 1 + rets[i]
		} else {
			v += pnl[i]
		}
		if v >= peak {
			peak, run = v, 0
			continue
		}
		run++
		if run > longest {
			longest = run
		}
		if dd := (peak - v) / peak; dd > maxDD {
			maxDD = dd
		}
		if v < low {
			low = v
		}
	}
	if !block {
		// The exact sum: the same trades in any order end at the same value to the last bit.
		p.scratch = append(p.scratch[:0], p.in.InitialCash)
		p.scratch = append(p.scratch, pnl...)
		v = engine.Fsum(p.scratch)
		if fan != nil {
			fan[len(fan)-1] = v
		}
	}
	p.low = low
	f := Figures{FinalValue: v, MaxDrawdownPct: 100 * maxDD, LongestDrawdown: longest}
	if p.in.Years > 0 {
		c := -1.0 // all lost, or more
		if v > 0 {
			c = math.Pow(v/p.in.InitialCash, 1/p.in.Years) - 1
		}
		f.CAGR = &c
	}
	return f
}

// percentiles sorts x and returns its percentiles.
func percentiles(x []float64) Percentiles {
	slices.Sort(x)
	return Percentiles{P5: quantile(x, 0.05), P25: quantile(x, 0.25), P50: quantile(x, 0.5), P75: quantile(x, 0.75), P95: quantile(x, 0.95)}
}

// quantile is the q quantile of sorted x, linearly interpolated between ranks.
func quantile(sorted []float64, q float64) float64 {
	h := float64(len(sorted)-1) * q
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// histogram counts sorted x in Bins bins of equal width from its least to its greatest
// value (one bin when they are equal).
func histogram(sorted []float64) []Bin {
	lo, hi := sorted[0], sorted[len(sorted)-1]
	if !(hi > lo) {
		return []Bin{{From: lo, To: hi, Count: len(sorted)}}
	}
	width := (hi - lo) / Bins
	out := make([]Bin, Bins)
	for i := range out {
		out[i] = Bin{From: lo + float64(i)*width, To: lo + float64(i+1)*width}
	}
	out[Bins-1].To = hi
	for _, v := range sorted {
		out[min(int((v-lo)/width), Bins-1)].Count++
	}
	return out
}
