package marketdata_test

import (
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// A Feeds serves repeated reads from memory, and sees every change of the bars, whoever
// makes it (another Feeds stands for another process): import of new bars, an update of
// stored ones, a delete.
func TestFeedsSeeEveryChange(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, marketdata.BuiltinSource, "FEED", "", "1d", time.UTC, days(0, 10, 100)); err != nil {
		t.Fatal(err)
	}
	from, until := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := marketdata.NewFeeds(b.store, 0)
	read := func() []engine.Bar {
		t.Helper()
		bars, err := f.At(b.ctx, marketdata.BuiltinSource, "FEED", "1d", from, until)
		if err != nil {
			t.Fatal(err)
		}
		return bars
	}
	first := read()
	if len(first) != 10 {
		t.Fatalf("got %d bars, want 10", len(first))
	}
	if again := read(); &again[0] != &first[0] {
		t.Error("a second read of unchanged bars did not come from memory")
	}

	steps := []struct {
		name   string
		change func() error
		check  func([]engine.Bar) bool
	}{
		{"import of new bars", func() error {
			_, err := marketdata.NewService(b.store, nil).Import(b.ctx, marketdata.BuiltinSource, "FEED", "", "1d", time.UTC, days(10, 5, 100))
			return err
		}, func(bars []engine.Bar) bool { return len(bars) == 15 }},
		{"update of a stored bar", func() error {
			_, err := b.store.Pool.Exec(b.ctx, `UPDATE bars SET close = 123.5 WHERE symbol = 'FEED' AND ts = (SELECT min(ts) FROM bars WHERE symbol = 'FEED')`)
			return err
		}, func(bars []engine.Bar) bool { return len(bars) == 15 && bars[0].Close == 123.5 }},
		{"delete", func() error {
			_, err := b.store.Pool.Exec(b.ctx, `DELETE FROM bars WHERE symbol = 'FEED' AND ts > (SELECT min(ts) FROM bars WHERE symbol = 'FEED')`)
			return err
		}, func(bars []engine.Bar) bool { return len(bars) == 1 }},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if bars := read(); !s.check(bars) {
			t.Errorf("after %s: read %d bars %v", s.name, len(bars), bars[:min(len(bars), 2)])
		}
	}

	none, err := f.At(b.ctx, marketdata.BuiltinSource, "NOSUCH", "1d", from, until)
	if err != nil || len(none) != 0 {
		t.Errorf("unknown symbol: %d bars, %v; want none", len(none), err)
	}

	for _, c := range []struct {
		symbol      string
		from, until time.Time
		want        bool
	}{
		{"FEED", from, until, true},
		{"FEED", until, until.AddDate(1, 0, 0), false},
		{"NOSUCH", from, until, false},
	} {
		if got, err := f.AnyAt(b.ctx, marketdata.BuiltinSource, c.symbol, "1d", c.from, c.until); err != nil || got != c.want {
			t.Errorf("Any(%s, %s..%s) = %v, %v; want %v", c.symbol, c.from.Format(time.DateOnly), c.until.Format(time.DateOnly), got, err, c.want)
		}
	}
}

// The cache holds at most its number of bars: the least recently used entry goes first.
func TestFeedsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, marketdata.BuiltinSource, "FEED", "", "1d", time.UTC, days(0, 10, 100)); err != nil {
		t.Fatal(err)
	}
	f := marketdata.NewFeeds(b.store, 12)
	day := func(i int) time.Time { return days(i, 1, 1)[0].Time }
	read := func(from int) *engine.Bar {
		t.Helper()
		bars, err := f.At(b.ctx, marketdata.BuiltinSource, "FEED", "1d", day(from), day(9))
		if err != nil || len(bars) != 10-from {
			t.Fatalf("from day %d: %d bars, %v", from, len(bars), err)
		}
		return &bars[0]
	}
	a := read(2) // 8 bars
	if read(2) != a {
		t.Fatal("not kept")
	}
	read(6) // 4 more: 12 in all, both kept
	if read(2) != a {
		t.Error("the first entry went although the cache had room")
	}
	read(5) // 5 more: the least recently used (from day 6) goes, then the first
	if read(2) == a {
		t.Error("the cache kept more bars than its bound")
	}
}
