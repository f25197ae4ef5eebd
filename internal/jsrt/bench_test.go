package jsrt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

func TestExamplesRun(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.js"))
	if len(files) < 6 {
		t.Fatalf("want at least 6 examples, got %d", len(files))
	}
	bars := engine.RandomWalk(3000, 7)
	// A second feed for the strategies that trade two (pairs.js); the others use the first.
	other := engine.RandomWalk(3000, 11)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			code, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			info, err := Inspect(context.Background(), string(code))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range info.Params {
				if p.Description == "" {
					t.Errorf("param %s has no description in the doc comment", p.Name)
				}
			}
			feeds := []engine.Feed{{Symbol: "RW", Bars: bars}, {Symbol: "RW2", Bars: other}}
			if strings.Contains(string(code), "static replay") {
				feeds = feeds[:1] // the replay examples replay this.datas[0] of a run of one feed, as their fixtures
			}
			res, err := Run(context.Background(), RunConfig{Code: string(code), Feeds: feeds, Commission: 0.001})
			if err != nil {
				t.Fatal(err)
			}
			steps := len(bars)
			if strings.Contains(string(code), "static resample") {
				steps++ // the last resampled bar comes in a step of its own
			}
			if len(res.Equity) != steps || res.Summary.TotalTrades == 0 {
				t.Errorf("equity %d, trades %d", len(res.Equity), res.Summary.TotalTrades)
			}
		})
	}
}

func BenchmarkSmaCross(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	code, err := os.ReadFile(filepath.Join(repoRoot(b), "examples", "sma_cross.js"))
	if err != nil {
		b.Fatal(err)
	}
	bars := engine.RandomWalk(n, 42)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), RunConfig{Code: string(code), Feeds: []engine.Feed{{Symbol: "RW", Bars: bars}}, Commission: 0.001}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}
