package engine

import (
	"math"
	"math/rand/v2"
	"time"
)

// RandomWalk returns n deterministic daily bars following a geometric
// random walk (for benchmarks and tests), starting 1970-01-01 at 100.
func RandomWalk(n int, seed uint64) []Bar {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bars := make([]Bar, n)
	t := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	p := 100.0
	for i := range bars {
		open := p
		p *= math.Exp(r.NormFloat64() * 0.015)
		hi := math.Max(open, p) * (1 + math.Abs(r.NormFloat64())*0.005)
		lo := math.Min(open, p) * (1 - math.Abs(r.NormFloat64())*0.005)
		bars[i] = Bar{Time: t.AddDate(0, 0, i), Open: open, High: hi, Low: lo, Close: p, Volume: 1000 + int64(r.IntN(100000))}
	}
	return bars
}
