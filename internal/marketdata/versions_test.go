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

// TestVersionStorage: re-importing 10,000 bars with one changed grows the symbol's stored
// rows and bytes (its rows in bars, bar_history and bar_versions) by at most 20%; in fact
// by the one replaced row and one version row.
func TestVersionStorage(t *testing.T) {
	t.Parallel()
	tb := setup(t, false)
	svc := marketdata.NewService(tb.store, nil)
	v1 := engine.RandomWalk(10000, 13)
	size := func() (rows, bytes int64) {
		t.Helper()
		err := tb.store.Pool.QueryRow(tb.ctx, `
			SELECT (SELECT count(*) FROM bars WHERE symbol = 'STO') + (SELECT count(*) FROM bar_history WHERE symbol = 'STO')
			       + (SELECT count(*) FROM bar_versions WHERE symbol = 'STO'),
			       (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM bars b WHERE symbol = 'STO')
			       + (SELECT coalesce(sum(pg_column_size(h.*)), 0) FROM bar_history h WHERE symbol = 'STO')
			       + (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM bar_versions v WHERE symbol = 'STO')`).Scan(&rows, &bytes)
		if err != nil {
			t.Fatal(err)
		}
		return rows, bytes
	}
	if _, err := svc.Import(tb.ctx, "builtin", "STO", "", "1d", time.UTC, v1); err != nil {
		t.Fatal(err)
	}
	rows1, bytes1 := size()
	v2 := slices.Clone(v1)
	v2[7000].Volume += 100
	if res, err := svc.Import(tb.ctx, "builtin", "STO", "", "1d", time.UTC, v2); err != nil || res.Version != 2 || res.Updated != 1 {
		t.Fatalf("re-import: %+v %v", res, err)
	}
	rows2, bytes2 := size()
	t.Logf("version 1: %d rows, %d bytes; with version 2: %d rows, %d bytes", rows1, bytes1, rows2, bytes2)
	if rows2 > rows1*12/10 || bytes2 > bytes1*12/10 {
		t.Errorf("storage grew from %d rows, %d bytes to %d rows, %d bytes: more than 20%%", rows1, bytes1, rows2, bytes2)
	}
	if rows2 != rows1+2 { // the replaced bar in bar_history, the version's row
		t.Errorf("rows: %d, want %d", rows2, rows1+2)
	}
}

// TestVersionImports: each kind of import makes a version whose bars, counts and
// fingerprint are those of the whole series as it then stands, however the fingerprint was
// made (the import's bars when they are the series, the previous version's kept hash state
// resumed over appended bars, or the series read back). An import never removes bars: a
// re-import that lacks bars the previous version had keeps them, and removed is 0.
func TestVersionImports(t *testing.T) {
	t.Parallel()
	tb := setup(t, false)
	svc := marketdata.NewService(tb.store, nil)
	all := engine.RandomWalk(3000, 17) // the series grows into all[500:3000] and back to all[0:]
	bump := func(in []engine.Bar, i int) []engine.Bar {
		out := slices.Clone(in)
		out[i].Close *= 1.01
		out[i].High = max(out[i].High, out[i].Close)
		return out
	}
	series := []engine.Bar(nil) // the bars stored, as the steps change them
	steps := []struct {
		name    string
		input   func() []engine.Bar // the import, from the series before it
		want    func() []engine.Bar // the series after it
		changes marketdata.Changes
		first   func() time.Time
	}{
		{"first import", func() []engine.Bar { return all[500:2000] }, func() []engine.Bar { return slices.Clone(all[500:2000]) },
			marketdata.Changes{Added: 1500}, func() time.Time { return all[500].Time }},
		{"append", func() []engine.Bar { return all[2000:2100] }, func() []engine.Bar { return append(series, all[2000:2100]...) },
			marketdata.Changes{Added: 100}, func() time.Time { return all[2000].Time }},
		{"append again", func() []engine.Bar { return all[2100:2101] }, func() []engine.Bar { return append(series, all[2100]) },
			marketdata.Changes{Added: 1}, func() time.Time { return all[2100].Time }},
		{"lacking bars, one changed", func() []engine.Bar { return bump(series, 1000)[400:1200] }, func() []engine.Bar { return bump(series, 1000) },
			marketdata.Changes{Changed: 1}, func() time.Time { return series[1000].Time }},
		{"whole series, one changed, appended", func() []engine.Bar { return append(bump(series, 5), all[2101:2200]...) },
			func() []engine.Bar { return append(bump(series, 5), all[2101:2200]...) },
			marketdata.Changes{Changed: 1, Added: 99}, func() time.Time { return series[5].Time }},
		{"prepend", func() []engine.Bar { return all[0:500] }, func() []engine.Bar { return append(slices.Clone(all[0:500]), series...) },
			marketdata.Changes{Added: 500}, func() time.Time { return all[0].Time }},
		{"append after a version without a kept state", func() []engine.Bar { return all[2200:3000] },
			func() []engine.Bar { return append(series, all[2200:3000]...) },
			marketdata.Changes{Added: 800}, func() time.Time { return all[2200].Time }},
	}
	var versions [][]engine.Bar
	for i, s := range steps {
		if s.name == "append after a version without a kept state" { // as a version made before migration 00102
			if _, err := tb.store.Pool.Exec(tb.ctx, `UPDATE bar_versions SET sha256_state = NULL WHERE symbol = 'IMP'`); err != nil {
				t.Fatal(err)
			}
		}
		input, want, first := s.input(), s.want(), s.first()
		res, err := svc.Import(tb.ctx, "builtin", "IMP", "", "1d", time.UTC, input)
		if err != nil || res.Version != i+1 {
			t.Fatalf("%s: %+v %v, want version %d", s.name, res, err, i+1)
		}
		series = want
		versions = append(versions, want)
		list, err := svc.Versions(tb.ctx, "builtin", "IMP")
		if err != nil {
			t.Fatal(err)
		}
		v := list[0]
		if v.Version != i+1 || v.SHA256 != provenance.FingerprintOf(want).SHA256 || v.Bars != int64(len(want)) || v.Changes != s.changes ||
			!v.First.Equal(want[0].Time) || !v.Last.Equal(want[len(want)-1].Time) || v.FirstChanged == nil || !v.FirstChanged.Equal(first) {
			t.Errorf("%s: %+v, want %d bars, changes %+v, first changed %s, provenance's fingerprint", s.name, v, len(want), s.changes, first)
		}
	}
	// Every version still reads as it was made: the latest through the bars table, the
	// older ones with bar_history; the runs' reader agrees.
	feeds := marketdata.NewFeeds(tb.store, 0)
	for i, want := range versions {
		got, _, err := svc.BarsAt(tb.ctx, "builtin", "IMP", want[0].Time, want[len(want)-1].Time, "1d", i+1)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("bars of version %d: %d, %v; want %d", i+1, len(got), err, len(want))
		}
		got, feed, _, err := feeds.AtPrintVersion(tb.ctx, "builtin", "IMP", "1d", want[0].Time, want[len(want)-1].Time, i+1)
		if err != nil || !slices.Equal(got, want) || feed.Version != i+1 || feed.SHA256 != provenance.FingerprintOf(want).SHA256 {
			t.Errorf("feed of version %d: %d bars, version %d, %v; want %d", i+1, len(got), feed.Version, err, len(want))
		}
	}
}
