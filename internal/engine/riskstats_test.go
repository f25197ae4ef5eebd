package engine

import (
	"math"
	"testing"
)

// TestRiskGroup holds the tearsheet metrics to quantstats' definitions: the expected
// figures of the first two cases come from testdata/riskstats.py (quantstats' formulas
// transcribed), the others are worked by hand in the comments. The Calmar ratio and the
// recovery factor are the project's (the run's own CAGR and total return over its own max
// drawdown, signed), worked by hand.
func TestRiskGroup(t *testing.T) {
	t.Parallel()
	none := (*float64)(nil)
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		values []float64
		want   map[string]*float64
	}{
		// Max drawdown 102 → 98, 4/102; total return 0.04, so recovery 0.04 × 102/4 = 1.02;
		// CAGR over 7 days 1.04^(365.25/7) − 1 = 6.740…, over 4/102: 171.88….
		{"mixed", []float64{101, 99, 102, 102, 98, 103, 105, 104}, map[string]*float64{
			"sortino_ratio": f(5.268802842550903), "calmar_ratio": f((math.Pow(1.04, 365.25/7) - 1) / (4.0 / 102)), "omega_ratio": f(1.6156774067772588),
			"value_at_risk": f(-0.03242088914773829), "expected_shortfall": f(-0.039215686274509776), "tail_ratio": f(1.3500347172075133),
			"ulcer_index": f(0.01699029730501394), "kelly_criterion": f(0.21775117949896453), "skew": f(0.05690105270981968),
			"kurtosis": f(-0.3127281186058193), "probabilistic_sharpe_ratio": f(0.6880314781915572),
			"max_consecutive_wins": f(2), "max_consecutive_losses": f(1), "recovery_factor": f(0.04 / (4.0 / 102)),
		}},
		// The first bar loses 5% of the initial cash: for the ulcer index the starting capital
		// is the first peak, so the drawdowns per bar are −5%, −3%, −4%, −1%, 0:
		// ulcer √((.0025+.0009+.0016+.0001)/4) = 0.0357071…. The run's max drawdown counts
		// its own peaks (97 → 96, 1/97), so recovery 0.01 × 97 = 0.97 and Calmar
		// (1.01^(365.25/4) − 1) × 97.
		{"first bar a loss", []float64{95, 97, 96, 99, 101}, map[string]*float64{
			"sortino_ratio": f(1.695898023882269), "calmar_ratio": f((math.Pow(1.01, 365.25/4) - 1) * 97), "omega_ratio": f(1.2022138842314274),
			"value_at_risk": f(-0.04206185567010312), "expected_shortfall": f(-0.050000000000000044), "tail_ratio": f(0.6944659442724457),
			"ulcer_index": f(0.03570714214271428), "kelly_criterion": f(0.10092075306252299), "skew": f(-1.2578584944571338),
			"kurtosis": f(0.7599537873467703), "probabilistic_sharpe_ratio": f(0.5559347770761273),
			"max_consecutive_wins": f(2), "max_consecutive_losses": f(1), "recovery_factor": f(0.01 * 97),
		}},
		// Returns 10%, 0, 10%: no losing bar, so no downside, no drawdown, no payoff ratio;
		// quantiles 0.05 → 0 + 0.1×(0.1−0) = 0.01, 0.95 → 0.1; skew: deviations ⅓, −⅔, ⅓ of
		// 0.1, so m2 = 0.1²×⅔, m3 = −0.1³×2/9 and 3√2/1 × m3/m2^1.5 = −√3; too few bars for
		// kurtosis.
		{"only gains", []float64{110, 110, 121}, map[string]*float64{
			"sortino_ratio": none, "calmar_ratio": none, "omega_ratio": none, "recovery_factor": none, "kelly_criterion": none,
			"value_at_risk": f(0.01), "expected_shortfall": f(0), "tail_ratio": f(10), "ulcer_index": f(0),
			"skew": f(-1.7320508075688772), "kurtosis": none, "probabilistic_sharpe_ratio": none,
			"max_consecutive_wins": f(1), "max_consecutive_losses": f(0),
		}},
		// A flat curve: every return is 0, so no ratio is defined; pandas gives 0 for the
		// skew and kurtosis of values that do not vary.
		{"flat", []float64{100, 100, 100, 100, 100}, map[string]*float64{
			"sortino_ratio": none, "calmar_ratio": none, "omega_ratio": none, "value_at_risk": f(0), "expected_shortfall": f(0),
			"tail_ratio": none, "ulcer_index": f(0), "kelly_criterion": none, "skew": f(0), "kurtosis": f(0),
			"probabilistic_sharpe_ratio": none, "max_consecutive_wins": f(0), "max_consecutive_losses": f(0), "recovery_factor": none,
		}},
		{"no bars", nil, map[string]*float64{
			"sortino_ratio": none, "value_at_risk": none, "skew": none, "max_consecutive_wins": none, "recovery_factor": none,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := RiskGroup(100, curve(tc.values...))
			st := Statistics{Groups: []StatGroup{g}}
			if g.Name != "Risk" || len(g.Metrics) != 14 {
				t.Fatalf("group %q with %d metrics, want Risk with 14", g.Name, len(g.Metrics))
			}
			for key, want := range tc.want {
				m := st.Get(key)
				if m == nil {
					t.Fatalf("no metric %s", key)
				}
				if m.Explanation == "" || m.Label == "" {
					t.Errorf("%s has no label or explanation", key)
				}
				switch {
				case want == nil && m.Value != nil:
					t.Errorf("%s = %v, want undefined", key, *m.Value)
				case want != nil && m.Value == nil:
					t.Errorf("%s undefined, want %v", key, *want)
				case want != nil && math.Abs(*m.Value-*want) > 1e-12*math.Max(1, math.Abs(*want)):
					t.Errorf("%s = %.17g, want %.17g", key, *m.Value, *want)
				}
			}
		})
	}
}

// TestStatisticsHaveRiskGroup: the record carries the Risk group before any Benchmark.
func TestStatisticsHaveRiskGroup(t *testing.T) {
	t.Parallel()
	st := ComputeStatistics(100, curve(101, 99, 102), nil, 0, nil)
	if n := len(st.Groups); n != 4 || st.Groups[3].Name != RiskGroupName {
		t.Fatalf("groups %v, want Curve, Trade, Time, Risk", st.Groups)
	}
	if st.Get("max_consecutive_wins").Display != "1" {
		t.Errorf("max_consecutive_wins displays %q", st.Get("max_consecutive_wins").Display)
	}
}
