package marketdata_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

type testBundle struct {
	ctx   context.Context
	store *store.Store
}

func setup(t testing.TB, sample bool) *testBundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := marketdata.EnsureBuiltin(ctx, st, sample); err != nil {
		t.Fatal(err)
	}
	return &testBundle{ctx: ctx, store: st}
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func bar(at string, o, h, l, c float64, v int64) engine.Bar {
	return engine.Bar{Time: ts(at), Open: o, High: h, Low: l, Close: c, Volume: v}
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	minute := []engine.Bar{
		bar("2024-03-01T14:30:00Z", 10, 11, 9, 10.5, 100),
		bar("2024-03-01T14:31:00Z", 10.5, 12, 10, 11, 200),
		bar("2024-03-01T14:34:00Z", 11, 11.5, 8, 9, 300),
		bar("2024-03-01T14:35:00Z", 9, 9.5, 8.5, 9.2, 400),
		bar("2024-03-01T15:59:00Z", 9.2, 9.3, 9.1, 9.25, 500),
		bar("2024-03-04T14:30:00Z", 20, 21, 19, 20.5, 600), // Monday of the next week
	}
	daily := []engine.Bar{
		bar("2024-01-30T00:00:00Z", 1, 2, 0.5, 1.5, 10), // Tuesday
		bar("2024-01-31T00:00:00Z", 1.5, 3, 1, 2.5, 20),
		bar("2024-02-01T00:00:00Z", 2.5, 2.6, 2, 2.1, 30), // Thursday, new month, same week
		bar("2024-02-05T00:00:00Z", 2.1, 4, 2, 3.9, 40),   // Monday
	}
	tests := []struct {
		name string
		in   []engine.Bar
		tf   string
		want []engine.Bar
	}{
		{"5m", minute, "5m", []engine.Bar{
			bar("2024-03-01T14:30:00Z", 10, 12, 8, 9, 600),
			bar("2024-03-01T14:35:00Z", 9, 9.5, 8.5, 9.2, 400),
			bar("2024-03-01T15:55:00Z", 9.2, 9.3, 9.1, 9.25, 500),
			bar("2024-03-04T14:30:00Z", 20, 21, 19, 20.5, 600),
		}},
		{"1h", minute, "1h", []engine.Bar{
			bar("2024-03-01T14:00:00Z", 10, 12, 8, 9.2, 1000),
			bar("2024-03-01T15:00:00Z", 9.2, 9.3, 9.1, 9.25, 500),
			bar("2024-03-04T14:00:00Z", 20, 21, 19, 20.5, 600),
		}},
		{"4h aligned to midnight", minute, "4h", []engine.Bar{
			bar("2024-03-01T12:00:00Z", 10, 12, 8, 9.25, 1500),
			bar("2024-03-04T12:00:00Z", 20, 21, 19, 20.5, 600),
		}},
		{"1d from minutes", minute, "1d", []engine.Bar{
			bar("2024-03-01T00:00:00Z", 10, 12, 8, 9.25, 1500),
			bar("2024-03-04T00:00:00Z", 20, 21, 19, 20.5, 600),
		}},
		{"1w from Monday, dated by its first day", daily, "1w", []engine.Bar{
			bar("2024-01-30T00:00:00Z", 1, 3, 0.5, 2.1, 60),
			bar("2024-02-05T00:00:00Z", 2.1, 4, 2, 3.9, 40),
		}},
		{"1M calendar month, dated by its first day", daily, "1M", []engine.Bar{
			bar("2024-01-30T00:00:00Z", 1, 3, 0.5, 2.5, 30),
			bar("2024-02-01T00:00:00Z", 2.5, 4, 2, 3.9, 70),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := marketdata.Aggregate(tc.in, tc.tf, time.UTC)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d bars, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if !got[i].Time.Equal(tc.want[i].Time) || got[i].Open != tc.want[i].Open || got[i].High != tc.want[i].High ||
					got[i].Low != tc.want[i].Low || got[i].Close != tc.want[i].Close || got[i].Volume != tc.want[i].Volume {
					t.Errorf("bar %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestInferTimeframe(t *testing.T) {
	t.Parallel()
	mk := func(step time.Duration, n int) []engine.Bar {
		out := make([]engine.Bar, n)
		for i := range out {
			out[i] = engine.Bar{Time: ts("2024-01-01T00:00:00Z").Add(time.Duration(i) * step)}
		}
		return out
	}
	for _, tc := range []struct {
		step time.Duration
		want string
	}{{time.Minute, "1m"}, {5 * time.Minute, "5m"}, {15 * time.Minute, "15m"}, {time.Hour, "1h"},
		{4 * time.Hour, "4h"}, {24 * time.Hour, "1d"}, {7 * 24 * time.Hour, "1w"}, {31 * 24 * time.Hour, "1M"}} {
		if got := marketdata.InferTimeframe(mk(tc.step, 5)); got != tc.want {
			t.Errorf("step %v: got %s, want %s", tc.step, got, tc.want)
		}
	}
}

func detail(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Detail
	}
	if err == nil {
		return ""
	}
	return "internal: " + err.Error()
}

func TestEnsureBuiltinSampleData(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	if err := marketdata.EnsureBuiltin(b.ctx, b.store, true); err != nil { // idempotent
		t.Fatal(err)
	}
	src, sym, err := marketdata.Default(b.ctx, b.store.Pool)
	if err != nil || src != marketdata.BuiltinSource || sym != marketdata.DefaultSymbol {
		t.Fatalf("defaults %q %q %v", src, sym, err)
	}
	syms, err := marketdata.NewService(b.store, nil).Symbols(b.ctx, src, "", 100)
	if err != nil || len(syms) != len(marketdata.Samples) {
		t.Fatalf("symbols %v %v", syms, err)
	}
	for _, s := range syms {
		if !strings.HasSuffix(s.Name, "(sample data)") {
			t.Errorf("%s: name %q is not marked as sample data", s.Symbol, s.Name)
		}
	}
	bars, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, src, sym, ts("2015-01-01T00:00:00Z"), ts("2024-12-31T00:00:00Z"), "1d")
	if err != nil || len(bars) != 2608 {
		t.Fatalf("daily bars: %d, %v", len(bars), err)
	}
	again := marketdata.Samples[0].Generate()
	if again[100] != bars[100] {
		t.Errorf("sample data is not deterministic: %+v vs %+v", again[100], bars[100])
	}
	hourly, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, src, "ACME5M", ts("2024-10-01T00:00:00Z"), ts("2024-10-01T00:00:00Z"), "1h")
	if err != nil || len(hourly) != 7 { // 14:30-21:00 touches hours 14..20
		t.Fatalf("hourly from 5m: %d, %v", len(hourly), err)
	}
	// No daily bars stored: daily ones are made from the five-minute bars, 78 a day.
	daily, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, src, "ACME5M", ts("2024-10-01T00:00:00Z"), ts("2024-10-02T00:00:00Z"), "1d")
	if err != nil || len(daily) != 2 {
		t.Fatalf("daily from 5m: %d %v", len(daily), err)
	}
}

func TestBarsErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	d := ts("2020-01-01T00:00:00Z")
	tests := []struct {
		name, source, symbol, tf string
		start, end               time.Time
		want                     string
	}{
		{"unknown source", "nope", "ACME", "1d", d, d, "Data source not found: nope"},
		{"unknown symbol", "builtin", "NOPE", "1d", d, d, "Data retrieval failed: unknown symbol 'NOPE' in data source 'builtin'"},
		{"bad timeframe", "builtin", "ACME", "2d", d, d, "Data retrieval failed: unsupported timeframe '2d' (use one of 1m, 5m, 15m, 1h, 4h, 1d, 1w, 1M)"},
		{"finer than stored", "builtin", "ACME", "1h", d, d, "Data retrieval failed: timeframe 1h is finer than the stored bars of ACME (finest stored: 1d)"},
		{"end before start", "builtin", "ACME", "1d", d, d.AddDate(0, 0, -1), "Data retrieval failed: end_date 2019-12-31 is before start_date 2020-01-01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, tc.source, tc.symbol, tc.start, tc.end, tc.tf)
			if got := detail(err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	for _, lim := range []int{0, 1001} {
		if _, err := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "", lim); err == nil {
			t.Errorf("limit %d accepted", lim)
		}
	}
	if got, err := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "acme", 1); err != nil || len(got) != 1 || got[0].Symbol != "ACME" {
		t.Errorf("search acme limit 1: %v %v", got, err)
	}
}

func TestImportValidationAndIdempotence(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	good := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10.5,12,10,11,200\n"
	bad := map[string]string{
		"non-numeric":  "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,x,12,10,11,200\n",
		"high < low":   "date,open,high,low,close,volume\n2024-01-02,10,8,9,10.5,100\n",
		"duplicate":    "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-02,10,11,9,10.5,100\n",
		"bad date":     "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-13-45,10,11,9,10.5,100\n",
		"wrong fields": "date,open,high,low,close,volume\n2024-01-02,10,11,9\n",
	}
	wantLine := map[string]string{"non-numeric": "line 3", "high < low": "line 2", "duplicate": "line 3", "bad date": "line 3", "wrong fields": "line 2"}
	for name, body := range bad {
		_, err := marketdata.ParseCSV(strings.NewReader(body), time.UTC)
		if d := detail(err); !strings.Contains(d, wantLine[name]) {
			t.Errorf("%s: %q lacks %q", name, d, wantLine[name])
		}
	}
	bars, err := marketdata.ParseCSV(strings.NewReader(good), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "MINE", "My data", "", time.UTC, bars)
	if err != nil || r1.Inserted != 2 || r1.Updated != 0 || r1.Timeframe != "1d" {
		t.Fatalf("first import: %+v %v", r1, err)
	}
	r2, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "MINE", "", "", time.UTC, bars)
	if err != nil || r2.Inserted != 0 || r2.Updated != 0 || r2.Unchanged != 2 {
		t.Fatalf("same import again: %+v %v", r2, err)
	}
	bars[1].Close = 11.5
	bars = append(bars, engine.Bar{Time: ts("2024-01-04T00:00:00Z"), Open: 1, High: 2, Low: 1, Close: 2})
	r3, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "MINE", "", "", time.UTC, bars)
	if err != nil || r3.Inserted != 1 || r3.Updated != 1 || r3.Unchanged != 1 {
		t.Fatalf("changed import: %+v %v", r3, err)
	}
	syms, _ := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "mine", 10)
	if len(syms) != 1 || syms[0].Name != "My data" {
		t.Errorf("symbol registration: %+v", syms)
	}
	// All or nothing: a failure inside the transaction leaves nothing behind.
	overflow := []engine.Bar{{Time: ts("2024-02-01T00:00:00Z"), Open: 1, High: 1, Low: 1, Close: 1, Volume: 1},
		{Time: ts("2024-02-02T00:00:00Z"), Open: 1, High: 1, Low: 1, Close: 1, Volume: 1}}
	overflow[1].Time = overflow[0].Time // duplicate inside one statement makes Postgres refuse the chunk
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "OTHER", "", "", time.UTC, overflow); err == nil {
		t.Fatal("import with a duplicate time succeeded")
	}
	if got, _ := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "other", 10); len(got) != 0 {
		t.Errorf("failed import left symbol %v", got)
	}
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "nope", "X", "", "", time.UTC, bars); detail(err) != "Data source not found: nope" {
		t.Errorf("unknown source: %v", err)
	}
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "bad symbol!", "", "", time.UTC, bars); !strings.HasPrefix(detail(err), "Invalid symbol") {
		t.Errorf("bad symbol: %v", err)
	}
}

func TestParseJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"ok array", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1.5,"volume":10}]`, ""},
		{"ok object", `{"bars":[{"date":"2024-01-02T10:00:00Z","open":1,"high":2,"low":0.5,"close":1.5}]}`, ""},
		{"missing close", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5}]`, "Invalid bar at index 0: missing close"},
		{"high below low", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1},{"datetime":"2024-01-03","open":1,"high":0.1,"low":0.5,"close":1}]`, "Invalid bar at index 1: high 0.1 is below low 0.5"},
		{"duplicate", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1},{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1}]`, "Invalid bar at index 1: duplicate datetime 2024-01-02"},
		{"string price", `[{"datetime":"2024-01-02","open":"x","high":2,"low":0.5,"close":1}]`, "Invalid JSON bars"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := marketdata.ParseJSON(strings.NewReader(tc.body), time.UTC)
			if got := detail(err); !strings.HasPrefix(got, tc.want) || (tc.want == "" && err != nil) {
				t.Errorf("got %q, want prefix %q", got, tc.want)
			}
		})
	}
}

func TestRefreshFromImportDir(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "feed.csv"), []byte("date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, skipped, err := marketdata.NewService(b.store, nil).Refresh(b.ctx, dir, "builtin", "FEED", false)
	if err != nil || skipped || res.Inserted != 1 {
		t.Fatalf("first refresh: %+v %v %v", res, skipped, err)
	}
	if _, skipped, err = marketdata.NewService(b.store, nil).Refresh(b.ctx, dir, "builtin", "FEED", false); err != nil || !skipped {
		t.Fatalf("refresh without new bars: skipped %v, %v", skipped, err)
	}
	if res, skipped, err = marketdata.NewService(b.store, nil).Refresh(b.ctx, dir, "builtin", "FEED", true); err != nil || skipped || res.Unchanged != 1 {
		t.Fatalf("forced refresh: %+v %v %v", res, skipped, err)
	}
	for _, tc := range []struct{ dir, symbol, want string }{
		{"", "FEED", "no import folder configured"},
		{dir, "MISSING", "no file MISSING.csv"},
	} {
		if _, _, err := marketdata.NewService(b.store, nil).Refresh(b.ctx, tc.dir, "builtin", tc.symbol, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("refresh %q %s: %v, want %q", tc.dir, tc.symbol, err, tc.want)
		}
	}
}

func days(from, n int, price float64) []engine.Bar {
	out := make([]engine.Bar, n)
	for i := range out {
		p := price + float64(from+i)
		out[i] = engine.Bar{Time: time.Date(2024, 1, from+i, 0, 0, 0, 0, time.UTC), Open: p, High: p + 1, Low: p - 1, Close: p, Volume: int64(from + i)}
	}
	return out
}

// TestImportAroundStoredRange checks the split of an import into bars before, inside and
// after the stored range (COPY outside, upsert inside) by its counts and the stored values.
func TestImportAroundStoredRange(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	type step struct {
		name                         string
		bars                         []engine.Bar
		inserted, updated, unchanged int
	}
	changed := days(5, 20, 100) // days 5..24 over stored 10..19; day 12 differs
	changed[7].Close, changed[7].High = 500, 501
	steps := []step{
		{"first", days(10, 10, 100), 10, 0, 0},
		{"around", changed, 10, 1, 9},
		{"after a gap", days(30, 2, 100), 2, 0, 0},
		{"into the gap", days(25, 5, 100), 5, 0, 0},
		{"all again", days(5, 27, 100), 0, 1, 26}, // day 12 back to its first values
	}
	for _, s := range steps {
		r, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "SPLIT", "", "1d", time.UTC, s.bars)
		if err != nil || r.Inserted != s.inserted || r.Updated != s.updated || r.Unchanged != s.unchanged || r.Received != len(s.bars) {
			t.Fatalf("%s: %+v %v, want %d/%d/%d", s.name, r, err, s.inserted, s.updated, s.unchanged)
		}
	}
	got, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, "builtin", "SPLIT", ts("2024-01-01T00:00:00Z"), ts("2024-02-28T00:00:00Z"), "1d")
	if err != nil {
		t.Fatal(err)
	}
	want := days(5, 27, 100)
	if len(got) != len(want) {
		t.Fatalf("stored %d bars, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Open != want[i].Open || got[i].High != want[i].High ||
			got[i].Low != want[i].Low || got[i].Close != want[i].Close || got[i].Volume != want[i].Volume {
			t.Errorf("bar %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestImportAllOrNothing makes PostgreSQL refuse a bar (a trigger of this test's database
// refuses a close of 13.37; the bar itself passes the import's checks) in the COPY and in
// the upsert part of an import: nothing of either import may remain.
func TestImportAllOrNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	if _, err := b.store.Pool.Exec(b.ctx, `
		CREATE FUNCTION refuse_sentinel_bar() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.close = 13.37 THEN RAISE EXCEPTION 'sentinel bar refused'; END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_sentinel_bar BEFORE INSERT OR UPDATE ON bars
			FOR EACH ROW EXECUTE FUNCTION refuse_sentinel_bar();`); err != nil {
		t.Fatal(err)
	}
	refused := func(err error) bool {
		_, isApp := apperr.As(err)
		return err != nil && !isApp && strings.Contains(err.Error(), "sentinel bar refused")
	}
	far := engine.Bar{Time: time.Date(2199, 1, 1, 0, 0, 0, 0, time.UTC), Open: 13, High: 14, Low: 13, Close: 13.37}
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "NEW", "", "1d", time.UTC, append(days(1, 3, 10), far)); !refused(err) {
		t.Fatalf("import of a new symbol with a refused bar: %v", err)
	}
	if got, _ := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "NEW", 10); len(got) != 0 {
		t.Errorf("failed import left symbol %v", got)
	}
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "OLD", "", "1d", time.UTC, days(1, 5, 10)); err != nil {
		t.Fatal(err)
	}
	again := days(1, 5, 20) // every stored bar changes (upsert) and one bar is new (COPY)...
	again = append(again, days(6, 1, 20)...)
	again = append(again, far) // ...and the last one is refused
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "OLD", "", "1d", time.UTC, again); !refused(err) {
		t.Fatalf("import with a refused bar: %v", err)
	}
	got, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, "builtin", "OLD", ts("2024-01-01T00:00:00Z"), ts("2024-01-31T00:00:00Z"), "1d")
	if err != nil || len(got) != 5 || got[0].Close != 11 {
		t.Errorf("after the failed import: %v %+v", err, got)
	}
}

func TestImportRejectsBadBars(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	nan := days(1, 3, 10)
	nan[1].Low = math.NaN()
	highLow := days(1, 3, 10)
	highLow[2].High = 0
	unsorted := days(1, 3, 10)
	unsorted[0], unsorted[1] = unsorted[1], unsorted[0]
	dup := days(1, 3, 10)
	dup[2].Time = dup[1].Time
	negVol := days(1, 3, 10)
	negVol[0].Volume = -1
	subMicro := days(1, 3, 10) // distinct in Go, one time in PostgreSQL
	subMicro[1].Time = subMicro[0].Time.Add(time.Nanosecond)
	for _, c := range []struct {
		name string
		bars []engine.Bar
		want string
	}{
		{"nan", nan, "Invalid bar at index 1 (2024-01-02T00:00:00Z): prices must be finite numbers"},
		{"high below low", highLow, "Invalid bar at index 2 (2024-01-03T00:00:00Z): high 0 is below low 12"},
		{"unsorted", unsorted, "Invalid bar at index 1 (2024-01-01T00:00:00Z): not after the previous bar's time"},
		{"duplicate", dup, "Invalid bar at index 2 (2024-01-02T00:00:00Z): not after the previous bar's time"},
		{"negative volume", negVol, "Invalid bar at index 0 (2024-01-01T00:00:00Z): volume -1 is negative"},
		{"same microsecond", subMicro, "Invalid bar at index 1 (2024-01-01T00:00:00Z): not after the previous bar's time"},
	} {
		_, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "BAD", "", "1d", time.UTC, c.bars)
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || !strings.HasPrefix(e.Detail, c.want) {
			t.Errorf("%s: %v, want a 400 starting %q", c.name, err, c.want)
		}
	}
	if got, _ := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", "BAD", 10); len(got) != 0 {
		t.Errorf("rejected imports left symbol %v", got)
	}
}

// TestBarsNeedTheirSymbol checks the triggers that replaced the bars → symbols foreign key.
func TestBarsNeedTheirSymbol(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "HAS", "", "1d", time.UTC, days(1, 2, 10)); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) error {
		_, err := b.store.Pool.Exec(b.ctx, sql, args...)
		return err
	}
	fk := func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "23503"
	}
	if err := exec(`INSERT INTO bars (source, symbol, timeframe, ts, open, high, low, close) VALUES ('builtin', 'NOPE', '1d', now(), 1, 1, 1, 1)`); !fk(err) {
		t.Errorf("bar of an unregistered symbol: %v", err)
	}
	if err := exec(`UPDATE bars SET symbol = 'NOPE' WHERE symbol = 'HAS'`); !fk(err) {
		t.Errorf("bar moved to an unregistered symbol: %v", err)
	}
	if err := exec(`DELETE FROM symbols WHERE symbol = 'HAS'`); !fk(err) {
		t.Errorf("delete of a symbol with bars: %v", err)
	}
	if err := exec(`UPDATE symbols SET symbol = 'HAS2' WHERE symbol = 'HAS'`); !fk(err) {
		t.Errorf("rename of a symbol with bars: %v", err)
	}
	if err := exec(`UPDATE symbols SET name = 'renamed' WHERE symbol = 'HAS'`); err != nil {
		t.Errorf("name change: %v", err)
	}
	if err := exec(`DELETE FROM bars WHERE symbol = 'HAS'`); err != nil {
		t.Fatal(err)
	}
	if err := exec(`DELETE FROM symbols WHERE symbol = 'HAS'`); err != nil {
		t.Errorf("delete of a symbol without bars: %v", err)
	}
}

// TestImportBounds checks the bounds every import applies, whatever parsed the bars: prices
// greater than 0 and dates from 1900-01-01 to 2200-01-01 (both included, by UTC day).
// Bars at the edges are stored.
func TestImportBounds(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	one := func(at time.Time, o, h, l, c float64) []engine.Bar {
		return []engine.Bar{{Time: at, Open: o, High: h, Low: l, Close: c, Volume: 1}}
	}
	day := at("2024-01-02T00:00:00Z")
	const dates = "dates must be from 1900-01-01 to 2200-01-01"
	cases := []struct {
		name string
		bars []engine.Bar
		want string // "" when the import is accepted
	}{
		{"positive prices", one(day, 1, 2, 0.5, 1.5), ""},
		{"tiny prices", one(day, 1e-9, 1e-9, 1e-9, 1e-9), ""},
		{"first day", one(at("1900-01-01T00:00:00Z"), 1, 1, 1, 1), ""},
		{"last day", one(at("2200-01-01T00:00:00Z"), 1, 1, 1, 1), ""},
		{"last day, late", one(at("2200-01-01T23:59:59.999999Z"), 1, 1, 1, 1), ""},
		{"last day in another zone", one(at("2200-01-01T20:00:00-03:00"), 1, 1, 1, 1), ""},
		{"zero open", one(day, 0, 2, 0.5, 1), "Invalid bar at index 0 (2024-01-02T00:00:00Z): open 0 is not positive (prices must be greater than 0)"},
		{"negative close", one(day, 1, 2, 0.5, -1), "Invalid bar at index 0 (2024-01-02T00:00:00Z): close -1 is not positive (prices must be greater than 0)"},
		{"zero low", one(day, 1, 2, 0, 1), "Invalid bar at index 0 (2024-01-02T00:00:00Z): low 0 is not positive (prices must be greater than 0)"},
		{"all negative", one(day, -3, -1, -2, -3), "Invalid bar at index 0 (2024-01-02T00:00:00Z): open -3 is not positive (prices must be greater than 0)"},
		{"negative zero", one(day, 1, 1, math.Copysign(0, -1), 1), "Invalid bar at index 0 (2024-01-02T00:00:00Z): low -0 is not positive (prices must be greater than 0)"},
		{"before 1900", one(at("1899-12-31T23:59:59Z"), 1, 1, 1, 1), "Invalid bar at index 0 (1899-12-31T23:59:59Z): the date is out of range (" + dates + ")"},
		{"milliseconds read as seconds", one(time.Unix(1700000000000, 0).UTC(), 1, 1, 1, 1), "Invalid bar at index 0 (55840-11-08T22:13:20Z): the date is out of range (" + dates + ")"},
		{"after 2200", one(at("2200-01-02T00:00:00Z"), 1, 1, 1, 1), "Invalid bar at index 0 (2200-01-02T00:00:00Z): the date is out of range (" + dates + ")"},
		{"second bar bad", append(one(day, 1, 1, 1, 1), one(day.AddDate(0, 0, 1), 1, 1, 0, 1)...), "Invalid bar at index 1 (2024-01-03T00:00:00Z): low 0 is not positive (prices must be greater than 0)"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			symbol := fmt.Sprintf("B%d", i)
			_, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", symbol, "", "1d", time.UTC, c.bars)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				got, _, err := marketdata.NewService(b.store, nil).Bars(b.ctx, "builtin", symbol, c.bars[0].Time.UTC().Truncate(24*time.Hour), c.bars[0].Time.UTC(), "1d")
				if err != nil || len(got) != 1 || !got[0].Time.Equal(c.bars[0].Time) {
					t.Errorf("stored %+v %v", got, err)
				}
				return
			}
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Detail != c.want {
				t.Errorf("got %v, want a 400 %q", err, c.want)
			}
			if got, _ := marketdata.NewService(b.store, nil).Symbols(b.ctx, "builtin", symbol, 10); len(got) != 0 {
				t.Errorf("refused import left symbol %v", got)
			}
		})
	}
}

// TestParseBounds checks that ParseJSON names the bar index of a price or date out of
// bounds, and that a CSV bar out of bounds is refused by its line in the file.
func TestParseBounds(t *testing.T) {
	t.Parallel()
	const dates = "dates must be from 1900-01-01 to 2200-01-01"
	jsonCases := []struct{ name, body, want string }{
		{"edges", `[{"datetime":"1900-01-01","open":1,"high":1,"low":1,"close":1},{"datetime":"2200-01-01T23:59:59Z","open":1,"high":1,"low":1,"close":1}]`, ""},
		{"zero open", `[{"datetime":"2024-01-02","open":0,"high":2,"low":0.5,"close":1}]`, "Invalid bar at index 0: open 0 is not positive (prices must be greater than 0)"},
		{"negative high and low", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":1},{"datetime":"2024-01-03","open":1,"high":-1,"low":-2,"close":1}]`, "Invalid bar at index 1: high -1 is not positive (prices must be greater than 0)"},
		{"zero close", `[{"datetime":"2024-01-02","open":1,"high":2,"low":0.5,"close":0}]`, "Invalid bar at index 0: close 0 is not positive (prices must be greater than 0)"},
		{"before 1900", `[{"datetime":"1899-12-31","open":1,"high":1,"low":1,"close":1}]`, "Invalid bar at index 0: datetime 1899-12-31 is out of range (" + dates + ")"},
		{"after 2200", `{"bars":[{"ts":"2200-01-02T00:00:00Z","open":1,"high":1,"low":1,"close":1}]}`, "Invalid bar at index 0: datetime 2200-01-02T00:00:00Z is out of range (" + dates + ")"},
	}
	for _, tc := range jsonCases {
		t.Run("json "+tc.name, func(t *testing.T) {
			_, err := marketdata.ParseJSON(strings.NewReader(tc.body), time.UTC)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Detail != tc.want {
				t.Errorf("got %v, want a 400 %q", err, tc.want)
			}
		})
	}

	b := setup(t, false)
	csvCases := []struct{ name, body, want string }{
		{"edges", "date,open,high,low,close,volume\n1900-01-01,1,1,1,1,0\n2200-01-01,1,1,1,1,0\n", ""},
		// Refused by the parser, each by its line in the file (a blank line counted).
		{"zero price", "date,open,high,low,close,volume\n2024-01-02,1,1,1,1,0\n\n2024-01-03,0,1,0,1,0\n", "Invalid CSV at line 4: open 0 is not positive (prices must be greater than 0)"},
		{"year 1899", "date,open,high,low,close,volume\n\n1899-06-30,1,1,1,1,0\n", "Invalid CSV at line 3: the date is out of range (" + dates + ")"},
		{"year 2201", "date,open,high,low,close,volume\n2024-01-02,1,1,1,1,0\n2201-06-30,1,1,1,1,0\n2202-06-30,1,1,1,1,0\n", "Invalid CSV at line 3: the date is out of range (" + dates + ") (2 bad lines in all)"},
	}
	for i, tc := range csvCases {
		t.Run("csv "+tc.name, func(t *testing.T) {
			bars, err := marketdata.ParseCSV(strings.NewReader(tc.body), time.UTC)
			if tc.want != "" && strings.HasPrefix(tc.want, "Invalid CSV") {
				if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Detail != tc.want {
					t.Errorf("got %v, want a 400 %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", fmt.Sprintf("CSV%d", i), "", "", time.UTC, bars)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Detail != tc.want {
				t.Errorf("got %v, want a 400 %q", err, tc.want)
			}
		})
	}
}

func TestParseCSVListsEveryBadLine(t *testing.T) {
	tests := []struct {
		name  string
		csv   string
		lines []int
	}{
		{"one", "date,open,high,low,close,volume\n2024-01-02,1,2,1,2,10\n2024-01-03,x,2,1,2,10\n2024-01-04,1,2,1,2,10\n", []int{3}},
		{"several, each after the one before", "date,open,high,low,close,volume\n" +
			"2024-01-02,1,2,1,2,10\n" + // 2
			"2024-01-03,x,2,1,2,10\n" + // 3: not a number
			"2024-01-04,1,2,1,2,10\n" + // 4
			"2024-01-05,1,0.5,1,2,10\n" + // 5: high below low
			"2024-01-04,1,2,1,2,10\n" + // 6: before the previous row's
			"2024-01-08,1,2,1\n" + // 7: short
			"2024-01-09,1,2,1,2,10\n", []int{3, 5, 6, 7}},
		{"a negative open among them", "date,open,high,low,close,volume\n" +
			"2024-01-02,1,2,1,2,10\n" + // 2
			"2024-01-03,x,2,1,2,10\n" + // 3: not a number
			"2024-01-04,-1,2,1,2,10\n" + // 4: negative open
			"2024-01-05,1,0.5,1,2,10\n", []int{3, 4, 5}},
		// Alone, it is line 3 of the file, not "index 1" of the bars.
		{"a negative open alone", "date,open,high,low,close,volume\n2024-01-02,1,2,1,2,10\n2024-01-03,-1,2,1,2,10\n", []int{3}},
		{"the last line", "date,open,high,low,close,volume\n2024-01-02,1,2,1,2,10\n2024-01-03,1,2,1,2,-1", []int{3}},
		{"a bad header stops there", "day,open,high,low,close\n2024-01-02,1,2,1,2\nnonsense\n", []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := marketdata.ParseCSV(strings.NewReader(tt.csv), time.UTC)
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid {
				t.Fatalf("err = %v, want a 400", err)
			}
			var got []int
			for _, l := range e.Lines {
				got = append(got, l.Line)
				if l.Message == "" {
					t.Errorf("line %d has no reason", l.Line)
				}
			}
			if !slices.Equal(got, tt.lines) {
				t.Errorf("bad lines %v, want %v (%s)", got, tt.lines, e.Detail)
			}
			if !strings.HasPrefix(e.Detail, fmt.Sprintf("Invalid CSV at line %d: ", tt.lines[0])) {
				t.Errorf("detail %q does not name the first bad line", e.Detail)
			}
		})
	}
	// capped
	var b strings.Builder
	b.WriteString("date,open,high,low,close,volume\n")
	for i := range 200 {
		fmt.Fprintf(&b, "2024-01-%02d,x,2,1,2,10\n", i%28+1)
	}
	_, err := marketdata.ParseCSV(strings.NewReader(b.String()), time.UTC)
	if e, _ := apperr.As(err); e == nil || len(e.Lines) != marketdata.MaxReportedLines || !strings.Contains(e.Detail, "and more") {
		t.Errorf("200 bad lines: %v", err)
	}
}

// TestSymbolRangesFollowEveryWrite: a symbol's listed ranges stay exact through imports
// (COPY and upsert), a second timeframe, and a delete from SQL.
func TestSymbolRangesFollowEveryWrite(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	svc := marketdata.NewService(b.store, nil)
	ranges := func() string {
		t.Helper()
		syms, err := svc.Symbols(b.ctx, "builtin", "RNG", 10)
		if err != nil || len(syms) != 1 {
			t.Fatalf("symbols: %v %v", syms, err)
		}
		var out []string
		for _, r := range syms[0].Ranges {
			out = append(out, fmt.Sprintf("%s %s..%s %d", r.Timeframe, r.First.Format("01-02"), r.Last.Format("01-02"), r.Bars))
		}
		return strings.Join(out, "; ")
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"first import", func() error {
			_, err := svc.Import(b.ctx, "builtin", "RNG", "", "1d", time.UTC, days(10, 10, 100))
			return err
		}, "1d 01-10..01-19 10"},
		{"around the stored range", func() error {
			_, err := svc.Import(b.ctx, "builtin", "RNG", "", "1d", time.UTC, days(5, 20, 100))
			return err
		}, "1d 01-05..01-24 20"},
		{"another timeframe", func() error {
			_, err := svc.Import(b.ctx, "builtin", "RNG", "", "1w", time.UTC, days(1, 1, 100))
			return err
		}, "1d 01-05..01-24 20; 1w 01-01..01-01 1"},
		{"a delete from SQL", func() error {
			_, err := b.store.Pool.Exec(b.ctx, `DELETE FROM bars WHERE symbol = 'RNG' AND timeframe = '1d' AND ts > '2024-01-20'`)
			return err
		}, "1d 01-05..01-20 16; 1w 01-01..01-01 1"},
		{"the last bar of a timeframe deleted", func() error {
			_, err := b.store.Pool.Exec(b.ctx, `DELETE FROM bars WHERE symbol = 'RNG' AND timeframe = '1w'`)
			return err
		}, "1d 01-05..01-20 16"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := ranges(); got != s.want {
			t.Errorf("after %s: ranges %q, want %q", s.name, got, s.want)
		}
	}
}

// TestDefaultSymbolOf pins the one rule of the symbol a request without one takes: the
// symbol marked default, else the first by name, else none.
func TestDefaultSymbolOf(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	for _, sql := range []string{
		`INSERT INTO data_sources (name, description) VALUES ('none', ''), ('named', ''), ('marked', '')`,
		`INSERT INTO symbols (source, symbol, name) VALUES ('named', 'ZZZ', ''), ('named', 'BBB', ''), ('marked', 'AAA', '')`,
		`INSERT INTO symbols (source, symbol, name, is_default) VALUES ('marked', 'MMM', '', true)`,
	} {
		if _, err := b.store.Pool.Exec(b.ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	for source, want := range map[string]string{"none": "", "named": "BBB", "marked": "MMM"} {
		if got, err := marketdata.DefaultSymbolOf(b.ctx, b.store.Pool, source); err != nil || got != want {
			t.Errorf("DefaultSymbolOf(%s) = %q, %v; want %q", source, got, err, want)
		}
	}
}
