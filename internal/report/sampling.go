package report

import (
	"math"
	"sort"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// DefaultMaxPoints is how many points a line chart (equity, drawdown, underwater) carries
// at most unless the request asks otherwise: enough for any screen, small enough that a
// 50,000-bar intraday result draws at once.
const DefaultMaxPoints = 5000

// MinMaxPoints is the fewest points a sampled line chart may be asked for.
const MinMaxPoints = 100

// View is the part of a result a line chart shows: its points from From to To (zero times
// are the result's ends), at most MaxPoints of them (0: every point); and the periods of
// the candlestick chart's moving averages.
type View struct {
	From, To  time.Time
	MaxPoints int
	// MovingAverages are the candlestick chart's SMA periods (the strategy's own, say);
	// none: 5, 10 and 20.
	MovingAverages []int
}

// Sampling tells a client a line chart shows a sample of its points: Points of the Of in
// From…To (the whole run when the request named no range). Zooming in (asking for a range
// of at most MaxPoints points) or exporting gives every point.
type Sampling struct {
	Points int    `json:"points"`
	Of     int    `json:"of"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// pick returns the indices of eq a line chart shows under v (nil: all, unsampled) and the
// sampling to report (nil when every point in the range is shown). The same indices serve
// the equity, drawdown and underwater charts, so the page can overlay them.
func (v View) pick(eq []engine.EquityPoint) ([]int, *Sampling) {
	lo, hi := 0, len(eq)
	if !v.From.IsZero() {
		lo = sort.Search(len(eq), func(i int) bool { return !eq[i].Time.Before(v.From) })
	}
	if !v.To.IsZero() {
		hi = max(lo, sort.Search(len(eq), func(i int) bool { return eq[i].Time.After(v.To) }))
	}
	n := hi - lo
	if n == len(eq) && (v.MaxPoints <= 0 || n <= v.MaxPoints) {
		return nil, nil
	}
	values := make([]float64, n)
	for i := range values {
		values[i] = eq[lo+i].Value
	}
	var idx []int
	if v.MaxPoints > 0 && n > v.MaxPoints {
		idx = lttb(values, v.MaxPoints)
	} else {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
	}
	for i := range idx {
		idx[i] += lo
	}
	if len(idx) == n {
		return idx, nil
	}
	return idx, &Sampling{Points: len(idx), Of: n, From: results.FormatTime(eq[lo].Time), To: results.FormatTime(eq[hi-1].Time)}
}

// lttb picks n of the points (i, y[i]) that keep the line's shape: Steinarsson's
// largest-triangle-three-buckets. The first and last points are always kept.
func lttb(y []float64, n int) []int {
	if n >= len(y) {
		out := make([]int, len(y))
		for i := range out {
			out[i] = i
		}
		return out
	}
	if n < 3 {
		return []int{0, len(y) - 1}
	}
	out := make([]int, 0, n)
	out = append(out, 0)
	every := float64(len(y)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		// The next bucket's average is the third corner.
		s, e := int(float64(i+1)*every)+1, int(float64(i+2)*every)+1
		e = min(e, len(y))
		var ax, ay float64
		for j := s; j < e; j++ {
			ax += float64(j)
			ay += y[j]
		}
		if e > s {
			ax /= float64(e - s)
			ay /= float64(e - s)
		}
		// Of this bucket's points, the one making the largest triangle with a and it.
		bs, be := int(float64(i)*every)+1, int(float64(i+1)*every)+1
		best, area := bs, -1.0
		for j := bs; j < be; j++ {
			ar := math.Abs((float64(a)-ax)*(y[j]-y[a]) - (float64(a)-float64(j))*(ay-y[a]))
			if ar > area {
				best, area = j, ar
			}
		}
		out = append(out, best)
		a = best
	}
	return append(out, len(y)-1)
}

// pickOf returns xs at idx (xs itself when idx is nil).
func pickOf[T any](xs []T, idx []int) []T {
	if idx == nil {
		return xs
	}
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}
