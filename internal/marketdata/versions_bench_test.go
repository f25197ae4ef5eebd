package marketdata_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// This file only uses what the build before bar versions had (Import, Bars), so that
// scripts/bench-versions.sh runs it on both builds in one go; the version read is in
// versions_read_bench_test.go.

// intraday is n one-minute bars from 2020-01-02 on, a random walk.
func intraday(n int) []engine.Bar {
	bars := engine.RandomWalk(n, 11)
	at := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)
	for i := range bars {
		bars[i].Time = at.Add(time.Duration(i) * time.Minute)
	}
	return bars
}

// BenchmarkImportIntraday measures a 1,000,000-bar one-minute import of a new symbol (one
// transaction, COPY), and a re-import of the same bars with one bar changed (upsert).
func BenchmarkImportIntraday(b *testing.B) {
	tb := setup(b, false)
	const n = 1_000_000
	bars := intraday(n)
	b.Run("new", func(b *testing.B) {
		checkpoint(b, tb)
		i := 0
		for b.Loop() {
			i++
			if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", fmt.Sprintf("I%d", i), "", "1m", time.UTC, bars); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
	})
	b.Run("one-changed", func(b *testing.B) {
		if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", "IC", "", "1m", time.UTC, bars); err != nil {
			b.Fatal(err)
		}
		changed := append([]engine.Bar(nil), bars...)
		checkpoint(b, tb)
		for b.Loop() {
			changed[n/2].Volume++
			res, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", "IC", "", "1m", time.UTC, changed)
			if err != nil || res.Updated != 1 {
				b.Fatal(res, err)
			}
		}
	})
}

// checkpoint writes the database's dirty pages out before a timed import, so that neither
// build's import pays for a checkpoint started by the writes before it (the other build's
// import, or this one's first import of the same bars). Needs a superuser, as the test
// databases' owner is; without one the import is timed as it comes.
func checkpoint(b *testing.B, tb *testBundle) {
	if _, err := tb.store.Pool.Exec(tb.ctx, "CHECKPOINT"); err != nil {
		b.Logf("no checkpoint before the import: %v", err)
	}
}

// BenchmarkRead10k measures a run's read of 10,000 stored daily bars, the latest ones, of a
// symbol re-imported with one bar changed.
func BenchmarkRead10k(b *testing.B) {
	tb := setup(b, false)
	bars := engine.RandomWalk(10000, 5)
	svc := marketdata.NewService(tb.store, nil)
	if _, err := svc.Import(tb.ctx, "builtin", "RV", "", "1d", time.UTC, bars); err != nil {
		b.Fatal(err)
	}
	changed := append([]engine.Bar(nil), bars...)
	changed[5000].Volume++
	if _, err := svc.Import(tb.ctx, "builtin", "RV", "", "1d", time.UTC, changed); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, _, err := svc.Bars(tb.ctx, "builtin", "RV", bars[0].Time, bars[len(bars)-1].Time, "1d")
		if err != nil || len(got) != len(bars) {
			b.Fatal(len(got), err)
		}
	}
}
