package montecarlo

import (
	"context"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// A significance test asks whether a strategy's trades did better than chance: Entries
// against trades entered at random times, TTest against a mean trade return of zero. The
// metric is the mean return of a closed trade, in percent, before commission: the signed
// change from its entry price to its exit price.
const (
	// RandomEntries compares the run with runs of random trades: as many as it closed, each
	// on the same symbol, on the same side and held the same bars, entered at a bar drawn
	// uniformly among those that leave room for it, and filled at the open of its entry bar
	// and of its exit bar (as a market order placed on the bar before fills). The p-value is
	// the share of runs whose mean trade return is at least the run's, (k + 1) / (runs + 1).
	RandomEntries = "random_entries"
	// TTest is the one-sided p-value of Student's t test that the mean trade return is above
	// zero, on the closed trades' returns (n − 1 degrees of freedom).
	TTest = "ttest"
	// MetricMeanTradeReturn names the metric in an answer.
	MetricMeanTradeReturn = "mean_trade_return_pct"
)

// SigTrade is one closed trade as a significance test sees it: its symbol's bars (index
// into SigInput.Opens), how many bars it was held, its side and its return in percent.
type SigTrade struct {
	Feed   int
	Held   int
	Long   bool
	Return float64
}

// SigInput is a run's closed trades and the opens of the bars of each symbol they were on.
type SigInput struct {
	Trades []SigTrade
	Opens  [][]float64
}

// SigOptions choose the test, and for RandomEntries the number of runs and the seed.
type SigOptions struct {
	Method string
	Runs   int
	Seed   uint64
}

// Significance is a test's answer. Runs, Seed and Percentiles (of the random runs' metric)
// are RandomEntries'; TStatistic and DF are TTest's.
type Significance struct {
	Method      string       `json:"method"`
	Runs        int          `json:"runs"`
	Seed        uint64       `json:"seed"`
	Metric      string       `json:"metric"`
	Trades      int          `json:"trades"`
	Observed    float64      `json:"observed"`
	PValue      float64      `json:"p_value"`
	Percentiles *Percentiles `json:"percentiles"`
	TStatistic  *float64     `json:"t_statistic,omitempty"`
	DF          *int         `json:"df,omitempty"`
}

// TradeReturn is a trade's return in percent from its entry price to its exit price, signed
// by its side.
func TradeReturn(long bool, entry, exit float64) float64 {
	r := 100 * (exit/entry - 1)
	if !long {
		r = -r
	}
	return r
}

// Test runs a significance test of in. It fails with an InvalidError when the options or the
// trades cannot be tested (too few trades, a trade longer than its bars, too much work).
func Test(ctx context.Context, in SigInput, opts SigOptions) (*Significance, error) {
	n := len(in.Trades)
	if n == 0 {
		return nil, invalid("The result has no closed trade to test")
	}
	var sum float64
	for _, t := range in.Trades {
		sum += t.Return
	}
	observed := sum / float64(n)
	switch opts.Method {
	case TTest:
		return tTest(in.Trades, observed)
	case RandomEntries:
	default:
		return nil, invalid("Unsupported method '%s': %s or %s", opts.Method, RandomEntries, TTest)
	}
	if opts.Runs == 0 {
		opts.Runs = DefaultRuns
	}
	if opts.Runs < 1 || opts.Runs > MaxRuns {
		return nil, invalid("Invalid runs '%d': expected an integer from 1 to %d", opts.Runs, MaxRuns)
	}
	if opts.Runs*n > MaxWork {
		return nil, invalid("Invalid runs '%d': %d closed trades allow at most %d runs (runs × trades at most %d)", opts.Runs, n, max(1, MaxWork/n), MaxWork)
	}
	for i, t := range in.Trades {
		if t.Feed < 0 || t.Feed >= len(in.Opens) || t.Held < 0 || t.Held >= len(in.Opens[t.Feed]) {
			return nil, invalid("Trade %d was held %d bars, more than its symbol's bars allow", i+1, t.Held)
		}
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x7369676e69666963)) // "signific": any fixed second word
	metric := make([]float64, opts.Runs)
	atLeast := 0
	for run := range metric {
		if run%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var s float64
		for _, t := range in.Trades {
			opens := in.Opens[t.Feed]
			i := rng.IntN(len(opens) - t.Held)
			s += TradeReturn(t.Long, opens[i], opens[i+t.Held])
		}
		metric[run] = s / float64(n)
		if metric[run] >= observed {
			atLeast++
		}
	}
	p := percentiles(metric)
	return &Significance{Method: RandomEntries, Runs: opts.Runs, Seed: opts.Seed, Metric: MetricMeanTradeReturn, Trades: n,
		Observed: observed, PValue: float64(atLeast+1) / float64(opts.Runs+1), Percentiles: &p}, nil
}

func tTest(trades []SigTrade, mean float64) (*Significance, error) {
	n := len(trades)
	if n < 2 {
		return nil, invalid("The t test needs at least 2 closed trades; the result has %d", n)
	}
	var ss float64
	for _, t := range trades {
		ss += (t.Return - mean) * (t.Return - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	if sd == 0 {
		return nil, invalid("The t test needs trade returns that vary; every closed trade returned %g%%", mean)
	}
	ts := mean / (sd / math.Sqrt(float64(n)))
	df := n - 1
	p := 1 - distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.CDF(ts)
	return &Significance{Method: TTest, Metric: MetricMeanTradeReturn, Trades: n, Observed: mean, PValue: p, TStatistic: &ts, DF: &df}, nil
}
