package marketdata_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
)

// TestAtPrint: the fingerprint AtPrint gives is that of exactly the bars it returns, stays
// the same while the bars do, and follows a re-import of one bar; SavePrints stores the
// per-bar prints once and Prints reads them back.
func TestAtPrint(t *testing.T) {
	t.Parallel()
	tb := setup(t, false)
	feeds := marketdata.NewFeeds(tb.store, 0)
	md := marketdata.NewService(tb.store, nil)
	bars := engine.RandomWalk(600, 9)
	if _, err := md.Import(tb.ctx, "builtin", "FP", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	from, to := bars[0].Time, bars[len(bars)-1].Time
	got, feed, prints, err := feeds.AtPrint(tb.ctx, "builtin", "FP", "1d", from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := provenance.FingerprintOf(got)
	if len(got) != len(bars) || feed.SHA256 != want.SHA256 || feed.SHA256 != provenance.FingerprintOf(bars).SHA256 ||
		feed.Bars != len(bars) || !feed.First.Equal(from) || !feed.Last.Equal(to) || feed.Timezone != "UTC" || len(prints) != len(bars) {
		t.Fatalf("feed %+v, want sha256 %s", feed, want.SHA256)
	}
	if _, again, _, err := feeds.AtPrint(tb.ctx, "builtin", "FP", "1d", from, to); err != nil || again.SHA256 != feed.SHA256 {
		t.Fatalf("second read: %+v %v", again, err)
	}
	// Weekly bars are aggregated: their fingerprint is of the weeks.
	weeks, wfeed, _, err := feeds.AtPrint(tb.ctx, "builtin", "FP", "1w", from, to)
	if err != nil || wfeed.SHA256 != provenance.FingerprintOf(weeks).SHA256 || wfeed.Bars != len(weeks) {
		t.Fatalf("weeks: %+v %v", wfeed, err)
	}

	if err := feeds.SavePrints(tb.ctx, feed.SHA256, prints); err != nil {
		t.Fatal(err)
	}
	back, found, err := marketdata.Prints(tb.ctx, tb.store, feed.SHA256)
	if err != nil || !found || len(back) != len(prints) || back[100] != prints[100] {
		t.Fatalf("prints read back: %d found %v %v", len(back), found, err)
	}

	b := bars[250]
	b.Close *= 1.01
	b.High = max(b.High, b.Close)
	if _, err := md.Import(tb.ctx, "builtin", "FP", "", "1d", time.UTC, []engine.Bar{b}); err != nil {
		t.Fatal(err)
	}
	_, after, afterPrints, err := feeds.AtPrint(tb.ctx, "builtin", "FP", "1d", from, to)
	if err != nil || after.SHA256 == feed.SHA256 {
		t.Fatalf("after re-import: %+v %v", after, err)
	}
	c := provenance.ComparePrints(prints, afterPrints)
	if c.Changed != 1 || c.Count() != 1 || !c.First.Equal(b.Time) {
		t.Fatalf("change %+v, want bar %v", c, b.Time)
	}
}

// BenchmarkRunProvenance5k measures what provenance adds to a 5,000-bar run: the run as the
// worker does it (the bars from the cached feed, then the engine) without and with
// provenance (the fingerprint kept with the cached series, the record built and encoded),
// and the fingerprint of 5,000 bars made afresh (once per series and bars_version).
//
//	go test -run x -bench RunProvenance5k -benchtime 20x ./internal/marketdata/
func BenchmarkRunProvenance5k(b *testing.B) {
	tb := setup(b, false)
	bars := engine.RandomWalk(5000, 5)
	if _, err := marketdata.NewService(tb.store, nil).Import(tb.ctx, "builtin", "RUN", "", "1d", time.UTC, bars); err != nil {
		b.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join("..", "..", "examples", "sma_cross.js"))
	if err != nil {
		b.Fatal(err)
	}
	feeds := marketdata.NewFeeds(tb.store, 0)
	from, to := bars[0].Time, bars[len(bars)-1].Time
	run := func(b *testing.B, got []engine.Bar) {
		if _, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: string(code), Feeds: []engine.Feed{{Symbol: "RUN", Bars: got}}, Commission: 0.001}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("without", func(b *testing.B) {
		for b.Loop() {
			got, err := feeds.At(tb.ctx, "builtin", "RUN", "1d", from, to)
			if err != nil {
				b.Fatal(err)
			}
			run(b, got)
		}
	})
	b.Run("with", func(b *testing.B) {
		for b.Loop() {
			got, feed, _, err := feeds.AtPrint(tb.ctx, "builtin", "RUN", "1d", from, to)
			if err != nil {
				b.Fatal(err)
			}
			p := provenance.Provenance{CodeSHA256: provenance.CodeSHA256(string(code)), EngineVersion: provenance.Engine(),
				Data: []provenance.Feed{feed}, Parameters: map[string]any{"fast": 10, "slow": 30}}
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
			run(b, got)
		}
	})
	// The part of a run provenance changes, alone: the read of the cached series.
	b.Run("read-without", func(b *testing.B) {
		for b.Loop() {
			if _, err := feeds.At(tb.ctx, "builtin", "RUN", "1d", from, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-with", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := feeds.AtPrint(tb.ctx, "builtin", "RUN", "1d", from, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fingerprint-uncached", func(b *testing.B) {
		for b.Loop() {
			provenance.FingerprintOf(bars)
		}
	})
}
