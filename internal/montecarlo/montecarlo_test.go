package montecarlo

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

var trades = []float64{120, -80, 45.5, -30.25, 200, -150, 10, -5, 60, -40}

func input() Input {
	rets := make([]float64, 250)
	for i := range rets {
		rets[i] = 0.01 * math.Sin(float64(i)*0.7) // gains and losses, deterministic
	}
	return Input{InitialCash: 1000, PnL: trades, Returns: rets, Years: 1}
}

func run(t *testing.T, in Input, opts Options) *Answer {
	t.Helper()
	a, err := Run(context.Background(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSameSeedSameAnswer: a seed decides the answer; another seed gives another one.
func TestSameSeedSameAnswer(t *testing.T) {
	t.Parallel()
	for _, m := range Methods {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			a := run(t, input(), Options{Method: m, Runs: 300, Seed: 7})
			b := run(t, input(), Options{Method: m, Runs: 300, Seed: 7})
			if !reflect.DeepEqual(a, b) {
				t.Errorf("seed 7 answered twice differently")
			}
			c := run(t, input(), Options{Method: m, Runs: 300, Seed: 8})
			if reflect.DeepEqual(a.MaxDrawdownPct, c.MaxDrawdownPct) {
				t.Errorf("seeds 7 and 8 drew the same drawdowns %+v", a.MaxDrawdownPct)
			}
		})
	}
}

// TestShuffleKeepsFinalValue: the trades in any order add up to the same value, to the
// last bit, and only the drawdowns spread.
func TestShuffleKeepsFinalValue(t *testing.T) {
	t.Parallel()
	a := run(t, input(), Options{Method: Shuffle, Runs: 500, Seed: 1})
	want := 1000 + 120 - 80 + 45.5 - 30.25 + 200 - 150 + 10 - 5 + 60 - 40 // 1130.25, exact in binary
	if a.Original.FinalValue != want {
		t.Fatalf("original final value %v, want %v", a.Original.FinalValue, want)
	}
	fv := a.FinalValue
	if fv.P5 != want || fv.P25 != want || fv.P50 != want || fv.P75 != want || fv.P95 != want {
		t.Errorf("final value percentiles %+v, want all %v", fv, want)
	}
	if h := a.FinalValueHist; len(h) != 1 || h[0].Count != 500 {
		t.Errorf("final value histogram %+v, want one bin of 500", h)
	}
	if last := len(a.Fan.P5) - 1; a.Fan.P5[last] != want || a.Fan.P95[last] != want || a.Fan.P50[0] != 1000 {
		t.Errorf("fan ends %v..%v, starts %v", a.Fan.P5[last], a.Fan.P95[last], a.Fan.P50[0])
	}
	if a.MaxDrawdownPct.P5 >= a.MaxDrawdownPct.P95 {
		t.Errorf("shuffled drawdowns do not spread: %+v", a.MaxDrawdownPct)
	}
	if c := *a.CAGR; math.Abs(c.P50-0.13025) > 1e-12 {
		t.Errorf("CAGR over one year %v, want 13.025%%", c.P50)
	}
}

// TestOriginalPath works the figures of the trades in their own order by hand: equity 1000,
// 1120, 1040, 1085.5, 1055.25, 1255.25, 1105.25, 1115.25, 1110.25, 1170.25, 1130.25.
func TestOriginalPath(t *testing.T) {
	t.Parallel()
	a := run(t, input(), Options{Method: Bootstrap, Runs: 10, Seed: 1})
	o := a.Original
	// The deepest fall: 1255.25 → 1105.25, 150/1255.25 of the peak; below it for 5 trades.
	if math.Abs(o.MaxDrawdownPct-100*150/1255.25) > 1e-9 || o.LongestDrawdown != 5 || o.FinalValue != 1130.25 {
		t.Errorf("original %+v, want max drawdown %.6f%%, 5 trades under water, 1130.25", o, 100*150/1255.25)
	}
	if a.Unit != "trades" || a.Steps != 10 || a.Fan.Steps[0] != 0 || a.Fan.Steps[len(a.Fan.Steps)-1] != 10 || len(a.Fan.Steps) != 11 {
		t.Errorf("unit %s steps %d fan steps %v", a.Unit, a.Steps, a.Fan.Steps)
	}
}

// TestOriginalIsTheRun: with the run's own figures given, "this run" reads them in every
// method (the same max drawdown whether trades or bars are resampled), and keeps the
// path's longest drawdown in the method's steps.
func TestOriginalIsTheRun(t *testing.T) {
	t.Parallel()
	cagr := 0.13
	own := Figures{FinalValue: 1130.25, CAGR: &cagr, MaxDrawdownPct: 14.5}
	for _, m := range Methods {
		in := input()
		in.Run = &own
		a := run(t, in, Options{Method: m, Runs: 10, Seed: 1})
		o := a.Original
		if o.FinalValue != own.FinalValue || o.CAGR == nil || *o.CAGR != cagr || o.MaxDrawdownPct != own.MaxDrawdownPct {
			t.Errorf("%s: original %+v, want the run's %+v", m, o, own)
		}
		if m != Block && o.LongestDrawdown != 5 {
			t.Errorf("%s: longest drawdown %d trades, want the path's 5", m, o.LongestDrawdown)
		}
		if a.CAGR == nil {
			t.Errorf("%s: no CAGR percentiles", m)
		}
	}
}

// TestKnownCases: paths whose spread is known without simulating.
func TestKnownCases(t *testing.T) {
	t.Parallel()
	t.Run("one trade, bootstrapped, is always that trade", func(t *testing.T) {
		t.Parallel()
		a := run(t, Input{InitialCash: 100, PnL: []float64{-60}, Years: 2}, Options{Method: Bootstrap, Runs: 50, Seed: 3, Losses: []float64{0.5, 0.7}})
		if a.FinalValue.P5 != 40 || a.FinalValue.P95 != 40 || a.MaxDrawdownPct.P50 != 60 || a.LongestDrawdown.P50 != 1 {
			t.Errorf("%+v %+v %+v", a.FinalValue, a.MaxDrawdownPct, a.LongestDrawdown)
		}
		if want := math.Sqrt(0.4) - 1; math.Abs(a.CAGR.P50-want) > 1e-12 {
			t.Errorf("CAGR %v, want %v", a.CAGR.P50, want)
		}
		// A 60% loss: every run lost half the capital, none lost 70%.
		if want := []LossProbability{{0.5, 1}, {0.7, 0}}; !reflect.DeepEqual(a.LossProbability, want) {
			t.Errorf("loss probabilities %+v, want %+v", a.LossProbability, want)
		}
	})
	t.Run("constant returns, block-bootstrapped, are the same path", func(t *testing.T) {
		t.Parallel()
		rets := []float64{0.01, 0.01, 0.01, 0.01}
		a := run(t, Input{InitialCash: 100, Returns: rets}, Options{Method: Block, Runs: 20, Seed: 5, Block: 3})
		want := 100 * math.Pow(1.01, 4)
		if math.Abs(a.FinalValue.P5-want) > 1e-9 || math.Abs(a.FinalValue.P95-want) > 1e-9 || a.MaxDrawdownPct.P95 != 0 || a.CAGR != nil {
			t.Errorf("final %+v drawdown %+v cagr %v", a.FinalValue, a.MaxDrawdownPct, a.CAGR)
		}
		if a.Block != 3 || a.Unit != "bars" {
			t.Errorf("block %d unit %s", a.Block, a.Unit)
		}
	})
	t.Run("a block as long as the run is a rotation of it", func(t *testing.T) {
		t.Parallel()
		// Rotations of +10%, −10% compound to the same 0.99 of the capital.
		a := run(t, Input{InitialCash: 100, Returns: []float64{0.1, -0.1}}, Options{Method: Block, Runs: 40, Seed: 9, Block: 2})
		if math.Abs(a.FinalValue.P5-99) > 1e-9 || math.Abs(a.FinalValue.P95-99) > 1e-9 {
			t.Errorf("final %+v, want 99", a.FinalValue)
		}
	})
	t.Run("the default block is the cube root of the bars", func(t *testing.T) {
		t.Parallel()
		if a := run(t, input(), Options{Method: Block, Runs: 5, Seed: 1}); a.Block != 6 { // ∛250 = 6.3
			t.Errorf("block %d", a.Block)
		}
	})
}

// TestPercentiles: linear interpolation between ranks, as numpy's default.
func TestPercentiles(t *testing.T) {
	t.Parallel()
	got := percentiles([]float64{5, 1, 4, 2, 3})
	if want := (Percentiles{P5: 1.2, P25: 2, P50: 3, P75: 4, P95: 4.8}); math.Abs(got.P5-want.P5) > 1e-12 || got.P25 != want.P25 ||
		got.P50 != want.P50 || got.P75 != want.P75 || math.Abs(got.P95-want.P95) > 1e-12 {
		t.Errorf("%+v, want %+v", got, want)
	}
	h := histogram([]float64{0, 1, 2, 3})
	n := 0
	for _, b := range h {
		n += b.Count
	}
	if len(h) != Bins || n != 4 || h[0].Count != 1 || h[Bins-1].Count != 1 || h[Bins-1].To != 3 {
		t.Errorf("histogram %+v", h)
	}
}

// TestInvalid: each refusal says what is wrong.
func TestInvalid(t *testing.T) {
	t.Parallel()
	in := input()
	for _, tc := range []struct {
		name string
		in   Input
		opts Options
		want string
	}{
		{"unknown method", in, Options{Method: "walk"}, "Unknown Monte Carlo method 'walk' (use shuffle, bootstrap, block or price_paths)"},
		{"no trades", Input{InitialCash: 100, Returns: in.Returns}, Options{Method: Shuffle}, "The shuffle method resamples closed trades, and the result has none (the block method resamples its returns per bar)"},
		{"one bar", Input{InitialCash: 100, Returns: []float64{0.1}}, Options{Method: Block}, "The block method needs at least 2 bars, the result has 1"},
		{"too many runs", in, Options{Method: Shuffle, Runs: MaxRuns + 1}, "Invalid runs 10001: from 1 to 10000 for this result (10 trades a run, at most 20000000 in all)"},
		{"runs bounded by the work", Input{InitialCash: 100, Returns: make([]float64, 100_000)}, Options{Method: Block, Runs: 201}, "Invalid runs 201: from 1 to 200 for this result (100000 bars a run, at most 20000000 in all)"},
		{"negative runs", in, Options{Method: Bootstrap, Runs: -1}, "Invalid runs -1: from 1 to 10000 for this result (10 trades a run, at most 20000000 in all)"},
		{"block too long", in, Options{Method: Block, Block: 251}, "Invalid block 251: from 1 to the result's 250 bars"},
		{"block for trades", in, Options{Method: Shuffle, Block: 5}, "block is the block method's length; the shuffle method takes none"},
		{"loss over 1", in, Options{Method: Shuffle, Losses: []float64{1.5}}, "Invalid loss 1.5: a share of the capital above 0 and at most 1"},
		{"loss 0", in, Options{Method: Shuffle, Losses: []float64{0}}, "Invalid loss 0: a share of the capital above 0 and at most 1"},
		{"no capital", Input{PnL: trades}, Options{Method: Shuffle}, "The result has no positive starting capital to simulate from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(context.Background(), tc.in, tc.opts)
			var ie *InvalidError
			if !errors.As(err, &ie) || err.Error() != tc.want {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}

// TestDefaults: runs default to DefaultRuns, fewer where the work bound says so; the
// default loss shares are answered.
func TestDefaults(t *testing.T) {
	t.Parallel()
	a := run(t, input(), Options{Method: Shuffle, Seed: 2})
	if a.Runs != DefaultRuns || len(a.LossProbability) != len(DefaultLosses) {
		t.Errorf("runs %d, loss probabilities %+v", a.Runs, a.LossProbability)
	}
	if MaxRunsFor(100_000) != 200 || MaxRunsFor(10) != MaxRuns || MaxRunsFor(MaxWork*2) != 1 {
		t.Errorf("MaxRunsFor: %d %d %d", MaxRunsFor(100_000), MaxRunsFor(10), MaxRunsFor(MaxWork*2))
	}
}

// TestCancelled: a simulation stops when its context ends.
func TestCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, input(), Options{Method: Block, Runs: 1000}); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
}

// BenchmarkBlock measures the cost of a step, the figure behind MaxWork: 1,000 runs of a
// 2,500-bar result.
func BenchmarkBlock(b *testing.B) {
	rets := make([]float64, 2500)
	for i := range rets {
		rets[i] = 0.01 * math.Sin(float64(i))
	}
	in := Input{InitialCash: 10000, Returns: rets, Years: 10}
	for b.Loop() {
		if _, err := Run(context.Background(), in, Options{Method: Block, Runs: 1000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2.5e6, "ns/step")
}
