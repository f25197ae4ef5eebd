package engine

import (
	"math"
	"slices"
	"time"
)

// DrawdownPeriod is one fall of the equity curve below its running peak and the way back.
type DrawdownPeriod struct {
	Peak      time.Time  `json:"peak"`      // the last bar at the previous high
	Trough    time.Time  `json:"trough"`    // the lowest bar of the fall
	Recovered *time.Time `json:"recovered"` // the first bar back at the peak; nil while still below it
	DepthPct  float64    `json:"depth_pct"` // (peak - trough) / peak, in percent
	Bars      int        `json:"bars"`      // bars from the peak to the recovery (or to the last bar)
	Days      float64    `json:"days"`      // calendar days from the peak to the recovery (or to the last bar)
	ToTrough  float64    `json:"to_trough_days"`
}

// DrawdownPeriods lists the falls of equity below a previous peak, deepest first, at most n
// (all when n <= 0). Peaks are the curve's own, as for the Max Drawdown statistic.
func DrawdownPeriods(equity []EquityPoint, n int) []DrawdownPeriod {
	var out []DrawdownPeriod
	peak := 0 // index of the running peak
	var cur *DrawdownPeriod
	trough := 0
	for i, p := range equity {
		if p.Value >= equity[peak].Value {
			if cur != nil {
				t := p.Time
				cur.Recovered, cur.Bars, cur.Days = &t, i-peak, days(equity[peak].Time, t)
				out = append(out, *cur)
				cur = nil
			}
			peak = i
			continue
		}
		if cur == nil {
			cur, trough = &DrawdownPeriod{Peak: equity[peak].Time}, i
		}
		if p.Value < equity[trough].Value {
			trough = i
		}
		cur.Trough = equity[trough].Time
		cur.ToTrough = days(equity[peak].Time, cur.Trough)
		if pv := equity[peak].Value; pv > 0 {
			cur.DepthPct = 100 * (pv - equity[trough].Value) / pv
		}
	}
	if cur != nil { // still under water at the end
		last := len(equity) - 1
		cur.Bars, cur.Days = last-peak, days(equity[peak].Time, equity[last].Time)
		out = append(out, *cur)
	}
	slices.SortStableFunc(out, func(a, b DrawdownPeriod) int {
		switch {
		case a.DepthPct > b.DepthPct:
			return -1
		case a.DepthPct < b.DepthPct:
			return 1
		}
		return 0
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// BarReturns are the curve's returns per bar, the first against the initial cash, as the
// statistics compute them.
func BarReturns(initialCash float64, equity []EquityPoint) []float64 {
	rets := make([]float64, len(equity))
	prev := initialCash
	for i, p := range equity {
		rets[i] = p.Value/prev - 1
		prev = p.Value
	}
	return rets
}

// RollingWindow is the window of RollingSharpe for a curve: half a year of its bars, or a
// quarter of the run when that is shorter, and at least 10 bars.
func RollingWindow(equity []EquityPoint) int {
	w := int(math.Round(PeriodsPerYear(equity) / 2))
	w = min(w, len(equity)/4)
	return max(w, 10)
}

// RollingSharpe is, for each bar, the annualised Sharpe ratio of the window returns ending
// there (the statistics' definition: mean over population standard deviation, times the
// square root of the bars per year), from the rolling SMA and StdDev indicators, so a chart
// of an intraday run with a window of tens of thousands of bars costs one pass; nil before a
// whole window and where the returns do not vary.
func RollingSharpe(initialCash float64, equity []EquityPoint, window int) []*float64 {
	rets := Series{Vals: BarReturns(initialCash, equity)}
	out := make([]*float64, len(rets.Vals))
	if window < 2 || window > len(rets.Vals) {
		return out
	}
	scale := math.Sqrt(PeriodsPerYear(equity))
	mean, sd := SMA(rets, window), StdDev(rets, window)
	for i := sd.First; i < len(out); i++ {
		// StdDev takes the mean of squares less the squared mean: returns that do not vary
		// can leave a rounding's worth of spread, which is no spread.
		if m, d := mean.Vals[i], sd.Vals[i]; d > 1e-9*math.Abs(m) && d > 0 {
			v := m / d * scale
			out[i] = &v
		}
	}
	return out
}

// HistogramBin is one bin of ReturnHistogram: the returns in [From, To), in percent.
type HistogramBin struct {
	From, To float64
	Count    int
}

// ReturnHistogram counts the curve's returns per bar (in percent) in bins of equal width,
// about the square root of their number and from 10 to 50 bins; bins are aligned so that 0
// is an edge, so no bin mixes gains and losses.
func ReturnHistogram(initialCash float64, equity []EquityPoint) []HistogramBin {
	rets := BarReturns(initialCash, equity)
	if len(rets) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range rets {
		rets[i] *= 100
		lo, hi = math.Min(lo, rets[i]), math.Max(hi, rets[i])
	}
	bins := min(max(int(math.Sqrt(float64(len(rets)))), 10), 50)
	width := (hi - lo) / float64(bins)
	if !(width > 0) {
		return []HistogramBin{{From: lo, To: hi, Count: len(rets)}}
	}
	// Edges on multiples of width: 0 is one of them.
	first := math.Floor(lo/width) * width
	n := int(math.Floor((hi-first)/width)) + 1 // the bin of hi is the last
	out := make([]HistogramBin, n)
	for i := range out {
		out[i] = HistogramBin{From: first + float64(i)*width, To: first + float64(i+1)*width}
	}
	for _, r := range rets {
		k := min(int(math.Floor((r-first)/width)), n-1)
		out[max(k, 0)].Count++
	}
	return out
}
