package marketdata_test

import (
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// BenchmarkReadVersion10k is BenchmarkRead10k reading version 1, the bars before the
// re-import (the latest rows it shares and the one replaced row from bar_history).
func BenchmarkReadVersion10k(b *testing.B) {
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
		got, _, err := svc.BarsAt(tb.ctx, "builtin", "RV", bars[0].Time, bars[len(bars)-1].Time, "1d", 1)
		if err != nil || len(got) != len(bars) || got[5000] != bars[5000] {
			b.Fatal(len(got), err)
		}
	}
}
