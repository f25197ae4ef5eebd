package marketdata_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
)

// TestVersions imports a symbol three times: the first import is version 1, a re-import that
// changes one bar and adds one is version 2, an unchanged re-import makes none. Each
// version reads back exactly its own bars, its fingerprint is provenance's of them, and the
// storage grows by the changed bar only.
func TestVersions(t *testing.T) {
	t.Parallel()
	tb := setup(t, false)
	svc := marketdata.NewService(tb.store, nil)
	v1 := engine.RandomWalk(10000, 7)
	res, err := svc.Import(tb.ctx, "builtin", "VER", "", "1d", time.UTC, v1)
	if err != nil || res.Version != 1 {
		t.Fatalf("first import: %+v %v", res, err)
	}
	v2 := slices.Clone(v1)
	v2[5000].Close *= 1.01
	v2[5000].High = max(v2[5000].High, v2[5000].Close)
	extra := v2[len(v2)-1]
	extra.Time = extra.Time.AddDate(0, 0, 1)
	v2 = append(v2, extra)
	if res, err = svc.Import(tb.ctx, "builtin", "VER", "", "1d", time.UTC, v2); err != nil || res.Version != 2 || res.Updated != 1 || res.Inserted != 1 {
		t.Fatalf("changing import: %+v %v", res, err)
	}
	if res, err = svc.Import(tb.ctx, "builtin", "VER", "", "1d", time.UTC, v2); err != nil || res.Version != 2 || res.Updated != 0 || res.Inserted != 0 {
		t.Fatalf("unchanged import: %+v %v", res, err)
	}

	list, err := svc.Versions(tb.ctx, "builtin", "VER")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Version != 2 || list[1].Version != 1 {
		t.Fatalf("versions: %+v", list)
	}
	want := []struct {
		bars    []engine.Bar
		changes marketdata.Changes
		first   time.Time
	}{
		{v2, marketdata.Changes{Changed: 1, Added: 1}, v2[5000].Time},
		{v1, marketdata.Changes{Added: 10000}, v1[0].Time},
	}
	for i, w := range want {
		v := list[i]
		if v.SHA256 != provenance.FingerprintOf(w.bars).SHA256 || v.Bars != int64(len(w.bars)) || v.Changes != w.changes ||
			v.FirstChanged == nil || !v.FirstChanged.Equal(w.first) || !v.First.Equal(w.bars[0].Time) || !v.Last.Equal(w.bars[len(w.bars)-1].Time) {
			t.Errorf("version %d: %+v, want %d bars, changes %+v, first changed %s", v.Version, v, len(w.bars), w.changes, w.first)
		}
		got, _, err := svc.BarsAt(tb.ctx, "builtin", "VER", w.bars[0].Time, w.bars[len(w.bars)-1].Time, "1d", v.Version)
		if err != nil || !slices.Equal(got, w.bars) {
			t.Errorf("bars of version %d: %d bars, %v; want %d", v.Version, len(got), err, len(w.bars))
		}
	}
	latest, _, err := svc.Bars(tb.ctx, "builtin", "VER", v2[0].Time, v2[len(v2)-1].Time, "1d")
	if err != nil || !slices.Equal(latest, v2) {
		t.Errorf("latest bars: %d, %v", len(latest), err)
	}

	// A run's read names the version it read, stored or aggregated.
	for _, tf := range []string{"1d", "1w"} {
		_, feed, _, err := marketdata.NewFeeds(tb.store, 0).AtPrint(tb.ctx, "builtin", "VER", tf, v2[0].Time, v2[len(v2)-1].Time)
		if err != nil || feed.Version != 2 {
			t.Errorf("feed at %s: version %d, %v; want 2", tf, feed.Version, err)
		}
	}

	// Storage: the second version kept one replaced row, beside the 10,001 latest ones.
	var history, current int
	if err := tb.store.Pool.QueryRow(tb.ctx, `SELECT (SELECT count(*) FROM bar_history WHERE symbol = 'VER'), (SELECT count(*) FROM bars WHERE symbol = 'VER')`).Scan(&history, &current); err != nil {
		t.Fatal(err)
	}
	if history != 1 || current != 10001 {
		t.Errorf("stored rows: %d history, %d current; want 1 and 10001", history, current)
	}
	// A version's bars never change: history rows refuse updates.
	if _, err := tb.store.Pool.Exec(tb.ctx, `UPDATE bar_history SET close = close + 1 WHERE symbol = 'VER'`); err == nil {
		t.Error("bar_history accepted an update")
	}

	for _, bad := range []int{3, -1} {
		_, _, err := svc.BarsAt(tb.ctx, "builtin", "VER", v1[0].Time, v1[9].Time, "1d", bad)
		if !isKind(err, apperr.KindInvalid) {
			t.Errorf("version %d: %v, want a 400", bad, err)
		}
	}
	if _, err := svc.Versions(tb.ctx, "builtin", "NOPE"); !isKind(err, apperr.KindNotFound) {
		t.Errorf("versions of an unknown symbol: %v, want a 404", err)
	}
}

// TestVersionAt: the version current at a time is the newest made at or before it; a time
// before the first is a 400.
func TestVersionAt(t *testing.T) {
	t.Parallel()
	tb := setup(t, false)
	svc := marketdata.NewService(tb.store, nil)
	bars := engine.RandomWalk(100, 3)
	before := time.Now().Add(-time.Second)
	if _, err := svc.Import(tb.ctx, "builtin", "AT", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.store.Pool.Exec(tb.ctx, `UPDATE bar_versions SET created_at = now() - interval '1 hour' WHERE symbol = 'AT'`); err != nil {
		t.Fatal(err)
	}
	mid := time.Now()
	bars[50].Open *= 1.02
	bars[50].High = max(bars[50].High, bars[50].Open)
	if _, err := svc.Import(tb.ctx, "builtin", "AT", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want int
	}{{mid, 1}, {time.Now().Add(time.Minute), 2}} {
		if got, err := marketdata.VersionAt(tb.ctx, tb.store.Pool, "builtin", "AT", c.at); err != nil || got != c.want {
			t.Errorf("version at %s: %d %v, want %d", c.at, got, err, c.want)
		}
	}
	if _, err := marketdata.VersionAt(tb.ctx, tb.store.Pool, "builtin", "AT", before.Add(-2*time.Hour)); !isKind(err, apperr.KindInvalid) {
		t.Errorf("before the first version: %v, want a 400", err)
	}
}

func isKind(err error, k apperr.Kind) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Kind == k
}
