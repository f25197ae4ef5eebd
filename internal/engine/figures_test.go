package engine

import (
	"math"
	"testing"
	"time"
)

// TestCurveFigures holds the shared figures to their definitions on each bar frequency: the
// Sharpe ratio annualised with the bars a year, computed here from the values alone; the
// summary's and the statistics record's values are the same numbers; on daily bars the
// summary's Sharpe ratio is backtrader's sharpe.daily_annualized to the bit; the recovery
// factor keeps its sign; the max drawdown duration is the drawdown table's longest row.
func TestCurveFigures(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC) // a Monday
	values := []float64{101, 99, 102, 102, 98, 103, 105, 104, 100, 97, 99, 98}
	tests := []struct {
		name    string
		at      func(i int) time.Time
		perYear float64
	}{
		{"daily", func(i int) time.Time { return t0.AddDate(0, 0, i+2*(i/5)) }, 252}, // weekdays
		{"weekly", func(i int) time.Time { return t0.AddDate(0, 0, 7*i) }, 52},
		{"monthly", func(i int) time.Time { return t0.AddDate(0, i, 0) }, 12},
		// 78 five-minute bars a session: 12 bars are all in one day, so N = 252 × 12.
		{"5 minutes", func(i int) time.Time { return t0.Add(14*time.Hour + 30*time.Minute + time.Duration(i)*5*time.Minute) }, 252 * 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eq := make([]EquityPoint, len(values))
			for i, v := range values {
				eq[i] = EquityPoint{Time: tc.at(i), Value: v}
			}
			// Independently: returns per bar from 100, population moments.
			var rets []float64
			prev := 100.0
			for _, v := range values {
				rets = append(rets, v/prev-1)
				prev = v
			}
			var mean, ss float64
			for _, r := range rets {
				mean += r
			}
			mean /= float64(len(rets))
			for _, r := range rets {
				ss += (r - mean) * (r - mean)
			}
			wantSharpe := mean / math.Sqrt(ss/float64(len(rets))) * math.Sqrt(tc.perYear)

			r := &Result{InitialCash: 100, FinalValue: values[len(values)-1], Equity: eq}
			analyze(r, 0, true)
			s := r.Summary
			if s.SharpeRatio == nil || math.Abs(*s.SharpeRatio-wantSharpe) > 1e-12*math.Abs(wantSharpe) {
				t.Fatalf("sharpe_ratio %v, want %v (N = %v)", s.SharpeRatio, wantSharpe, tc.perYear)
			}
			if tc.perYear == 252 && *s.SharpeRatio != *r.Analyzers.Sharpe.DailyAnnualized {
				t.Errorf("daily bars: sharpe_ratio %v, backtrader's daily_annualized %v", *s.SharpeRatio, *r.Analyzers.Sharpe.DailyAnnualized)
			}
			if tc.perYear < 252 && r.Analyzers.Returns.Annualiser != tc.perYear {
				t.Errorf("Returns annualised with %v, want %v", r.Analyzers.Returns.Annualiser, tc.perYear)
			}
			st := ComputeStatistics(100, eq, nil, s.SQN, nil)
			for _, c := range []struct {
				key  string
				want *float64
			}{
				{"sharpe_ratio", s.SharpeRatio}, {"cagr", s.AnnualReturn}, {"total_return", &s.TotalReturn},
				{"max_drawdown", &s.MaxDrawdownPct}, {"max_drawdown_duration", ptr(float64(s.MaxDrawdownDuration))},
			} {
				if m := st.Get(c.key); m == nil || m.Value == nil || *m.Value != *c.want {
					t.Errorf("statistics %s = %v, summary %v", c.key, m, *c.want)
				}
			}
			// Lost 2%: the recovery factor is negative; Calmar is the CAGR over the drawdown.
			dd := s.MaxDrawdownPct / 100
			if rf := st.Get("recovery_factor").Value; rf == nil || *rf >= 0 || math.Abs(*rf-(-0.02/dd)) > 1e-12 {
				t.Errorf("recovery_factor %v, want %v", rf, -0.02/dd)
			}
			if c := st.Get("calmar_ratio").Value; c == nil || math.Abs(*c-*s.AnnualReturn/dd) > 1e-12*math.Abs(*c) {
				t.Errorf("calmar_ratio %v, want %v", c, *s.AnnualReturn/dd)
			}
			// The longest fall: 105 (bar 6) never recovered, to the last bar.
			wantDays := int(math.Round(eq[len(eq)-1].Time.Sub(eq[6].Time).Hours() / 24))
			if s.MaxDrawdownDuration != wantDays {
				t.Errorf("max_drawdown_duration %d, want %d", s.MaxDrawdownDuration, wantDays)
			}
		})
	}
}

// TestWinRateOverClosedTrades: an open trade is neither won nor lost.
func TestWinRateOverClosedTrades(t *testing.T) {
	t.Parallel()
	tests := []struct {
		won, closed int
		want        float64
	}{{20, 43, 20.0 / 43 * 100}, {0, 0, 0}, {3, 3, 100}}
	for _, tc := range tests {
		if got := WinRate(tc.won, tc.closed); got != tc.want {
			t.Errorf("WinRate(%d, %d) = %v, want %v", tc.won, tc.closed, got, tc.want)
		}
	}
}
