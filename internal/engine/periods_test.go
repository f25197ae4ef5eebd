package engine

import (
	"math"
	"testing"
	"time"
)

func curve(values ...float64) []EquityPoint {
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	eq := make([]EquityPoint, len(values))
	for i, v := range values {
		eq[i] = EquityPoint{Time: t0.AddDate(0, 0, i), Value: v}
	}
	return eq
}

func TestDrawdownPeriods(t *testing.T) {
	day := func(i int) time.Time { return time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name   string
		values []float64
		n      int
		want   []DrawdownPeriod
	}{
		{"never below a peak", []float64{100, 101, 101, 105}, 0, nil},
		{"deepest first, the open one included", []float64{100, 90, 95, 100, 120, 114, 110, 60, 70}, 0, []DrawdownPeriod{
			{Peak: day(4), Trough: day(7), DepthPct: 50, Bars: 4, Days: 4, ToTrough: 3},
			{Peak: day(0), Trough: day(1), Recovered: timePtr(day(3)), DepthPct: 10, Bars: 3, Days: 3, ToTrough: 1},
		}},
		{"at most n", []float64{100, 90, 100, 70, 100, 95, 100}, 1, []DrawdownPeriod{
			{Peak: day(2), Trough: day(3), Recovered: timePtr(day(4)), DepthPct: 30, Bars: 2, Days: 2, ToTrough: 1},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := DrawdownPeriods(curve(c.values...), c.n)
			// MaxDrawdownDuration walks the falls without building them: the longest is the
			// table's longest row.
			longest := 0.0
			for _, p := range DrawdownPeriods(curve(c.values...), 0) {
				longest = math.Max(longest, p.Days)
			}
			if d := MaxDrawdownDuration(curve(c.values...)); d != int(math.Round(longest)) {
				t.Errorf("MaxDrawdownDuration %d, the longest fall of the table %v days", d, longest)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d periods %+v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if !g.Peak.Equal(w.Peak) || !g.Trough.Equal(w.Trough) || (g.Recovered == nil) != (w.Recovered == nil) ||
					(g.Recovered != nil && !g.Recovered.Equal(*w.Recovered)) || math.Abs(g.DepthPct-w.DepthPct) > 1e-9 ||
					g.Bars != w.Bars || g.Days != w.Days || g.ToTrough != w.ToTrough {
					t.Errorf("period %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestRollingSharpeMatchesTheStatistic(t *testing.T) {
	eq := curve(100, 101, 99, 103, 104, 102, 106, 107)
	const cash = 100.0
	got := RollingSharpe(cash, eq, 4)
	for i := 0; i < 3; i++ {
		if got[i] != nil {
			t.Fatalf("bar %d has a value before a whole window", i)
		}
	}
	// The last window's figure is the whole-run Sharpe ratio of those four bars' returns.
	rets := BarReturns(cash, eq)[4:]
	m, sd := meanPopSD(rets)
	want := m / sd * math.Sqrt(PeriodsPerYear(eq))
	if got[7] == nil || math.Abs(*got[7]-want) > 1e-12 {
		t.Fatalf("last window: %v, want %v", got[7], want)
	}
	if w := RollingWindow(curve(make([]float64, 2000)...)); w != 126 {
		t.Errorf("daily window over 2,000 bars: %d, want 126 (half a year)", w)
	}
	if w := RollingWindow(curve(make([]float64, 100)...)); w != 25 {
		t.Errorf("window over 100 bars: %d, want a quarter of the run", w)
	}
}

func TestReturnHistogram(t *testing.T) {
	eq := curve(100, 102, 100, 101, 99, 99, 103, 100, 101, 104, 98, 100)
	bins := ReturnHistogram(100, eq)
	total := 0
	for i, b := range bins {
		total += b.Count
		if b.From < 0 && b.To > 1e-12 {
			t.Errorf("bin %d [%v, %v) mixes losses and gains", i, b.From, b.To)
		}
		if i > 0 && math.Abs(b.From-bins[i-1].To) > 1e-12 {
			t.Errorf("bins %d and %d are not adjacent", i-1, i)
		}
	}
	if total != len(eq) {
		t.Fatalf("%d returns counted, want %d", total, len(eq))
	}
	rets := BarReturns(100, eq)
	for _, r := range rets {
		r *= 100
		if r < bins[0].From || r >= bins[len(bins)-1].To {
			t.Errorf("return %v%% outside the bins [%v, %v)", r, bins[0].From, bins[len(bins)-1].To)
		}
	}
	if flat := ReturnHistogram(100, curve(100, 100, 100)); len(flat) != 1 || flat[0].Count != 3 {
		t.Errorf("flat curve: %+v", flat)
	}
}

func timePtr(t time.Time) *time.Time { return &t }
