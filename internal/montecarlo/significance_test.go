package montecarlo

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// walk is a random walk of opens.
func walk(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	p := 100.0
	for i := range out {
		out[i] = p
		p *= 1 + 0.01*rng.NormFloat64()
	}
	return out
}

// enterTrades holds trades of held bars on opens, entered where enter says.
func enterTrades(opens []float64, held int, enter func(i int) bool) []SigTrade {
	var out []SigTrade
	for i := 0; i+held < len(opens); i++ {
		if enter(i) {
			out = append(out, SigTrade{Held: held, Long: true, Return: TradeReturn(true, opens[i], opens[i+held])})
			i += held
		}
	}
	return out
}

// TestRandomEntries: trades entered knowing the next opens beat random entries (p < 0.01);
// trades entered by a coin flip do not, for most coins (p > 0.05); the same seed gives the
// same answer.
func TestRandomEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opens := walk(3000, 7)
	future := enterTrades(opens, 3, func(i int) bool { return opens[i+3] > opens[i] })
	a, err := Test(ctx, SigInput{Trades: future, Opens: [][]float64{opens}}, SigOptions{Method: RandomEntries, Runs: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.PValue >= 0.01 || a.Observed <= a.Percentiles.P95 {
		t.Errorf("trades that read the future: p %v, observed %v, p95 %v", a.PValue, a.Observed, a.Percentiles.P95)
	}
	if a.PValue != 1.0/1001 {
		t.Errorf("no random run reached the future's trades: p %v, want 1/1001", a.PValue)
	}
	b, _ := Test(ctx, SigInput{Trades: future, Opens: [][]float64{opens}}, SigOptions{Method: RandomEntries, Runs: 1000, Seed: 1})
	if *a.Percentiles != *b.Percentiles || a.PValue != b.PValue {
		t.Error("the same seed gave another answer")
	}

	above := 0
	for coin := range uint64(20) {
		rng := rand.New(rand.NewPCG(coin, 99))
		flips := enterTrades(opens, 5, func(int) bool { return rng.IntN(2) == 0 })
		a, err := Test(ctx, SigInput{Trades: flips, Opens: [][]float64{opens}}, SigOptions{Method: RandomEntries, Runs: 1000, Seed: coin})
		if err != nil {
			t.Fatal(err)
		}
		if a.PValue > 0.05 {
			above++
		}
		if a.Trades != len(flips) || a.Runs != 1000 || a.Metric != MetricMeanTradeReturn {
			t.Errorf("answer: %+v", a)
		}
	}
	if above < 16 {
		t.Errorf("coin-flip entries: %d of 20 above p 0.05, want most (at least 16)", above)
	}
}

// TestTTest against a hand computation: returns 1, 2, 3, 4, 5 (%): mean 3, sample sd
// √2.5, t = 3 / (√2.5/√5) = 3√2 = 4.2426; with 4 degrees of freedom the one-sided p is
// 0.0066178, from the distribution's closed form for 4 degrees of freedom:
// F(t) = 1/2 + 3/8 · t/√(1 + t²/4) · (1 − t²/(12 (1 + t²/4))).
func TestTTest(t *testing.T) {
	t.Parallel()
	var ts []SigTrade
	for _, r := range []float64{1, 2, 3, 4, 5} {
		ts = append(ts, SigTrade{Return: r})
	}
	a, err := Test(context.Background(), SigInput{Trades: ts}, SigOptions{Method: TTest})
	if err != nil {
		t.Fatal(err)
	}
	if a.Observed != 3 || math.Abs(*a.TStatistic-3*math.Sqrt2) > 1e-12 || *a.DF != 4 || math.Abs(a.PValue-0.0066177998) > 1e-9 {
		t.Errorf("t test: %+v t=%v", a, *a.TStatistic)
	}
}

func TestSignificanceBadInput(t *testing.T) {
	t.Parallel()
	one := []SigTrade{{Return: 1, Held: 2}}
	opens := [][]float64{{1, 2, 3}}
	cases := []struct {
		name string
		in   SigInput
		opts SigOptions
	}{
		{"no trades", SigInput{Opens: opens}, SigOptions{Method: RandomEntries}},
		{"unknown method", SigInput{Trades: one, Opens: opens}, SigOptions{Method: "coin"}},
		{"too many runs", SigInput{Trades: one, Opens: opens}, SigOptions{Method: RandomEntries, Runs: MaxRuns + 1}},
		{"too much work", SigInput{Trades: make([]SigTrade, 5000), Opens: opens}, SigOptions{Method: RandomEntries, Runs: 5000}},
		{"held longer than the bars", SigInput{Trades: []SigTrade{{Held: 3}}, Opens: opens}, SigOptions{Method: RandomEntries}},
		{"t test of one trade", SigInput{Trades: one}, SigOptions{Method: TTest}},
		{"t test of equal returns", SigInput{Trades: []SigTrade{{Return: 1}, {Return: 1}}}, SigOptions{Method: TTest}},
	}
	for _, c := range cases {
		_, err := Test(context.Background(), c.in, c.opts)
		var bad *InvalidError
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v, want an InvalidError", c.name, err)
		}
	}
}
