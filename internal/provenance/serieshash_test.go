package provenance

import (
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestSeriesHash: the sum equals FingerprintOf's for every split of a series into a first
// part hashed and kept as a state, and a resumed rest; a state that is not one is refused.
func TestSeriesHash(t *testing.T) {
	bars := engine.RandomWalk(3000, 9)
	want := FingerprintOf(bars).SHA256
	for _, cut := range []int{0, 1, 63, 64, 65, 1500, 2999, 3000} {
		h := NewSeriesHash()
		h.Write(bars[:cut])
		st, err := h.State()
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Sum(); got != FingerprintOf(bars[:cut]).SHA256 {
			t.Errorf("cut %d: sum of the first part %s, want FingerprintOf's", cut, got)
		}
		r, err := ResumeSeriesHash(st)
		if err != nil {
			t.Fatal(err)
		}
		r.Write(bars[cut:])
		if got := r.Sum(); got != want {
			t.Errorf("cut %d: resumed sum %s, want %s", cut, got, want)
		}
	}
	if _, err := ResumeSeriesHash([]byte("not a state")); err == nil {
		t.Error("a bad state was accepted")
	}
}
