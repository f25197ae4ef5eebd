package marketdata_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// BenchmarkImport measures an all-or-nothing import of n daily bars (one transaction): new
// bars of a new symbol (COPY), and the same file imported again (upsert; all unchanged).
// 1,000,000 bars is the target size; 2,520 is a 10-year daily file.
func BenchmarkImport(b *testing.B) {
	tb := setup(b, false)
	for _, n := range []int{2520, 1_000_000} {
		bars := engine.RandomWalk(n, 5)
		b.Run(fmt.Sprintf("bars=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", fmt.Sprintf("B%d_%d", n, i), "", "1d", time.UTC, bars); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
		})
		b.Run(fmt.Sprintf("bars=%d/reimport", n), func(b *testing.B) {
			sym := fmt.Sprintf("R%d", n)
			if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", sym, "", "1d", time.UTC, bars); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", sym, "", "1d", time.UTC, bars)
				if err != nil || res.Unchanged != n {
					b.Fatal(res, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
		})
	}
}

// BenchmarkBars10k measures reading 10,000 stored daily bars, and aggregating them to weeks.
func BenchmarkBars10k(b *testing.B) {
	tb := setup(b, false)
	bars := engine.RandomWalk(10000, 5)
	if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", "RW", "", "1d", time.UTC, bars); err != nil {
		b.Fatal(err)
	}
	for _, tf := range []string{"1d", "1w"} {
		b.Run(tf, func(b *testing.B) {
			for b.Loop() {
				got, _, err := marketdata.NewService(tb.store, nil).Bars(tb.ctx, "builtin", "RW", bars[0].Time, bars[len(bars)-1].Time, tf)
				if err != nil || len(got) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
