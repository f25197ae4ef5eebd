package results_test

import (
	"fmt"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// benchResult stores a real 10,000-bar run: the chart and statistics targets' size.
func benchResult(b testing.TB) *testBundle {
	tb := setup(b)
	bars := engine.RandomWalk(10000, 11)
	tb.bars(b, "RW", bars)
	tb.completed(b, "task_1", "RW", bars, map[string]any{"fast": 10, "slow": 30, "size": 10})
	return tb
}

// BenchmarkChart10k measures a chart read as the endpoint does it (load the stored rows and
// the bars, build the option object, encode it as JSON with AppendJSON) on a 10,000-bar
// result.
// Target < 50 ms.
func BenchmarkChart10k(b *testing.B) {
	tb := benchResult(b)
	for _, kind := range results.ChartTypes {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				c, err := results.NewService(tb.store.Pool).Chart(tb.ctx, "task_1", kind)
				if err != nil {
					b.Fatal(err)
				}
				if out := c.AppendJSON(nil); len(out) == 0 {
					b.Fatal("empty chart")
				}
			}
		})
	}
}

// BenchmarkStatistics10k measures the statistics route's work (load equity and round trips,
// compute the record) on a 10,000-bar result. Target < 10 ms.
func BenchmarkStatistics10k(b *testing.B) {
	tb := benchResult(b)
	for b.Loop() {
		if _, err := results.NewService(tb.store.Pool).Statistics(tb.ctx, "task_1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSave10k measures storing a 10,000-bar result in one transaction (COPY of the
// equity rows), as a new result and as a replacement of an existing one.
func BenchmarkSave10k(b *testing.B) {
	tb := setup(b)
	bars := engine.RandomWalk(10000, 11)
	res := runSMA(b, bars, map[string]any{"fast": 10, "slow": 30, "size": 10}, 10000)
	save := func(id string) {
		tx, err := tb.store.Pool.Begin(tb.ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := results.Save(tb.ctx, tx, id, 1, res); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(tb.ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("new", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			id := fmt.Sprintf("task_new_%d", i)
			tb.task(b, id, "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
			b.StartTimer()
			save(id)
		}
	})
	b.Run("replace", func(b *testing.B) {
		tb.task(b, "task_r", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
		for b.Loop() {
			save("task_r")
		}
	})
}
