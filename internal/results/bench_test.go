package results_test

import (
	"fmt"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// BenchmarkStatistics10k measures the statistics route's work (load equity and round trips,
// compute the record) on a 10,000-bar result. Target < 10 ms.
func BenchmarkStatistics10k(b *testing.B) {
	tb := resultstest.BenchResult(b)
	for b.Loop() {
		if _, err := tb.Results().Statistics(tb.Ctx, "task_1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSave10k measures storing a 10,000-bar result in one transaction (COPY of the
// equity rows), as a new result and as a replacement of an existing one.
func BenchmarkSave10k(b *testing.B) {
	tb := resultstest.Setup(b)
	bars := engine.RandomWalk(10000, 11)
	res := resultstest.RunSMA(b, bars, map[string]any{"fast": 10, "slow": 30, "size": 10}, 10000)
	save := func(id string) {
		tx, err := tb.Store.Pool.Begin(tb.Ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := results.Save(tb.Ctx, tx, id, 1, res, nil); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(tb.Ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("new", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			id := fmt.Sprintf("task_new_%d", i)
			tb.Task(b, id, "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
			b.StartTimer()
			save(id)
		}
	})
	b.Run("replace", func(b *testing.B) {
		tb.Task(b, "task_r", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
		for b.Loop() {
			save("task_r")
		}
	})
}
