package report

import (
	"math"
	"slices"
	"testing"
)

func TestLTTBKeepsEndsAndExtremes(t *testing.T) {
	t.Parallel()
	y := make([]float64, 10000)
	for i := range y {
		y[i] = math.Sin(float64(i) / 300)
	}
	y[4321] = 50  // a spike
	y[7777] = -50 // a crash
	for _, n := range []int{100, 1000, 9999} {
		idx := lttb(y, n)
		if len(idx) != n || idx[0] != 0 || idx[n-1] != len(y)-1 {
			t.Fatalf("n=%d: %d points from %d to %d", n, len(idx), idx[0], idx[len(idx)-1])
		}
		for i := 1; i < n; i++ {
			if idx[i] <= idx[i-1] {
				t.Fatalf("n=%d: index %d after %d", n, idx[i], idx[i-1])
			}
		}
		if !slices.Contains(idx, 4321) || !slices.Contains(idx, 7777) {
			t.Errorf("n=%d: the spike or the crash was dropped", n)
		}
	}
	if got := lttb(y[:50], 100); len(got) != 50 {
		t.Errorf("fewer points than asked: %d kept, want all 50", len(got))
	}
}
