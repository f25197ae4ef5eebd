package engine

import (
	"math"
	"slices"
	"testing"
)

// The values of these indicators against real backtrader are pinned by internal/jsrt's
// TestRegistryParity; these cases pin the edge semantics the fixtures show only implicitly.
func TestMAFamilySemantics(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x := Line([]float64{1, 3, 3, 2, 0, 0, 4})
	flat := Line([]float64{5, 5, 5, 5})
	up := Line([]float64{1, 2, 3, 4})
	maxOf := func(w []float64) float64 { return slices.Max(w) }
	minOf := func(w []float64) float64 { return slices.Min(w) }
	tests := []struct {
		name string
		got  Series
		want []float64
	}{
		{"SumN", SumN(x, 3), []float64{nan, nan, 7, 8, 5, 2, 4}},
		{"Accum from seed", Accum(x, 10), []float64{11, 14, 17, 19, 19, 19, 23}},
		// Python's bool of a float: 0 is false
		{"AnyN", AnyN(x, 2), []float64{nan, 1, 1, 1, 1, 0, 1}},
		{"AllN", AllN(x, 2), []float64{nan, 1, 1, 1, 0, 0, 0}},
		// ties: the most recent (first looking back) or the oldest (last looking back)
		{"FindFirstIndexHighest", FindIndex(x, 3, maxOf, true), []float64{nan, nan, 0, 1, 2, 2, 0}},
		{"FindLastIndexHighest", FindIndex(x, 3, maxOf, false), []float64{nan, nan, 1, 2, 2, 2, 0}},
		{"FindFirstIndexLowest", FindIndex(x, 3, minOf, true), []float64{nan, nan, 2, 0, 0, 0, 1}},
		{"FindLastIndexLowest", FindIndex(x, 3, minOf, false), []float64{nan, nan, 2, 0, 0, 1, 2}},
		{"UpDay", UpDay(x, 1), []float64{nan, 2, 0, 0, 0, 0, 4}},
		{"DownDay over 2 bars", DownDay(x, 2), []float64{nan, nan, 0, 1, 3, 2, 0}},
		{"UpDayBool", UpDayBool(x, 1), []float64{nan, 1, 0, 0, 0, 0, 1}},
		{"DownDayBool", DownDayBool(x, 1), []float64{nan, 0, 0, 1, 1, 0, 0}},
		// a zero difference keeps the previous one
		{"NonZeroDifference", NonZeroDifference(x, Line([]float64{0, 1, 3, 2, 1, 0, 4})), []float64{1, 2, 2, 2, -1, -1, -1}},
		{"PercentChange", PercentChange(up, 2), []float64{nan, nan, 2, 1}},
		{"MomentumOscillator", MomentumOscillator(up, 1), []float64{nan, 200, 150, 100 * 4.0 / 3}},
		// a flat series: no gain and no loss; safediv gives safelow (50), without it 0/0
		{"RSI safediv flat", RSIWith(flat, 2, RSIOpts{MovAv: SMA, Lookback: 1, SafeDiv: true, SafeHigh: 100, SafeLow: 50}), []float64{nan, nan, 50, 50}},
		{"RSI flat", RSIWith(flat, 2, RSIOpts{MovAv: SMA, Lookback: 1}), []float64{nan, nan, nan, nan}},
		// only gains: safediv gives safehigh; without it rs is +inf, so 100 as well
		{"RSI safediv rising", RSIWith(up, 2, RSIOpts{MovAv: SMA, Lookback: 1, SafeDiv: true, SafeHigh: 100, SafeLow: 50}), []float64{nan, nan, 100, 100}},
		{"RSI rising", RSIWith(up, 2, RSIOpts{MovAv: SMA, Lookback: 1}), []float64{nan, nan, 100 - 100/(1+inf), 100}},
		// the stages start from 0 at the minimum period: on a zero line they stay equal,
		// and the rsi of no change is 1; from bar 1 of up the first stage is (1-g)*2
		{"LaguerreRSI no change", LaguerreRSI(Line([]float64{0, 0, 0}), 2, 0.5), []float64{nan, 1, 1}},
		{"LaguerreRSI", LaguerreRSI(up, 2, 0.5), []float64{nan, 1.875 / 2.625, 0.8, 0.8260869565217391}},
		// gamma 0: the stages are the last four values
		{"LaguerreFilter gamma 0", LaguerreFilter(up, 1, 0), []float64{1.0 / 6, (2 + 2*1) / 6.0, (3 + 2*2 + 2*1) / 6.0, (4 + 2*3 + 2*2 + 1) / 6.0}},
		// ma(-period//2 + 1) in Python: period 4 looks 1 bar back
		{"DPO", DPO(Line([]float64{1, 2, 3, 4, 5, 6}), 4, SMA), []float64{nan, nan, nan, nan, 5 - 2.5, 6 - 3.5}},
		{"DPO period 2 (no shift)", DPO(up, 2, SMA), []float64{nan, 0.5, 0.5, 0.5}},
		{"ExpSmoothingDynamic", ExpSmoothingDynamic(up, 2, Line([]float64{0.5, 0.5, 0.5, 1})), []float64{nan, 1.5, 2.25, 4}},
	}
	for _, tc := range tests {
		sameVals(t, tc.name, tc.got, tc.want)
	}
}

// The envelope's bands are perc percent either side of its source.
func TestEnvelope(t *testing.T) {
	top, bot := Envelope(Line([]float64{100, 200}), 2.5)
	sameVals(t, "top", top, []float64{102.5, 205})
	sameVals(t, "bot", bot, []float64{97.5, 195})
}

// KST adds only as many averages as it has factors (Python's zip).
func TestKSTFactors(t *testing.T) {
	in := Line([]float64{1, 2, 4, 8, 16, 32})
	rp, rma := [4]int{1, 2, 3, 4}, [4]int{1, 1, 1, 1}
	one, _ := KST(in, rp, rma, []float64{1}, 1, SMA, SMA)
	sameVals(t, "one factor", one, ROC100(in, 1).Vals)
	all, _ := KST(in, rp, rma, []float64{1, 2, 3, 4}, 1, SMA, SMA)
	want := Add(Add(ROC100(in, 1), scale(2, ROC100(in, 2))), Add(scale(3, ROC100(in, 3)), scale(4, ROC100(in, 4))))
	sameVals(t, "four factors", all, want.Vals)
}
