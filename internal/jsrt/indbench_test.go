package jsrt

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// benchBars is the number of bars of BenchmarkIndicators.
const benchBars = 1_000_000

// benchFeed is a random walk of benchBars daily bars as the registry's inputs (a fixed
// seed: every run computes the same values).
func benchFeed() IndIn {
	r := rand.New(rand.NewPCG(1, 2))
	o, h, l, c, v := make([]float64, benchBars), make([]float64, benchBars), make([]float64, benchBars), make([]float64, benchBars), make([]float64, benchBars)
	p := 100.0
	for i := range c {
		o[i] = p
		p *= math.Exp(0.01 * r.NormFloat64())
		c[i] = p
		h[i] = max(o[i], c[i]) * (1 + 0.005*r.Float64())
		l[i] = min(o[i], c[i]) * (1 - 0.005*r.Float64())
		v[i] = float64(1000 + r.IntN(100000))
	}
	return IndIn{Open: engine.Line(o), High: engine.Line(h), Low: engine.Line(l), Close: engine.Line(c), Volume: engine.Line(v)}
}

// BenchmarkIndicators computes every registry entry with its default parameters over
// 1,000,000 bars, once per iteration, SMA's first for comparison (each as ind computes it
// when a strategy creates it: the whole series at once):
//
//	go test ./internal/jsrt -run '^$' -bench 'BenchmarkIndicators' -benchtime 3x
func BenchmarkIndicators(b *testing.B) {
	feed := benchFeed()
	defs := registeredInds()
	sma := lookupInd("SMA")
	defs = append([]*IndDef{sma}, slices.DeleteFunc(defs, func(d *IndDef) bool { return d == sma })...)
	for _, d := range defs {
		if needsGiven(d) {
			continue // a function or line to give: its cases are the fixtures'
		}
		args, err := d.args(nil)
		if err != nil {
			b.Fatal(err)
		}
		in := feed
		switch d.Input {
		case InLine:
			in.Lines = []engine.Series{feed.Close}
		case InTwoLines:
			in.Lines = []engine.Series{feed.Close, feed.Open}
		}
		b.Run(d.Family+"/"+d.Name, func(b *testing.B) {
			for b.Loop() {
				out := d.Compute(in, args)
				if len(out[0].Vals) != benchBars {
					b.Fatalf("%d values", len(out[0].Vals))
				}
			}
		})
	}
}
