package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// EachBar decodes the binary rows itself: every value must arrive as stored, times before
// PostgreSQL's epoch (2000) and after it, fractions of a second, the extremes of float8
// and int8; and a connection that reads text (the simple protocol) gets the same rows.
func TestEachBarDecodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	want := []store.ListBarsRow{
		{Ts: time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC), Open: 0.1, High: math.MaxFloat64, Low: math.SmallestNonzeroFloat64, Close: 1e-300, Volume: 0},
		{Ts: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC), Open: 1.5, High: 2, Low: 1, Close: 1.25, Volume: math.MaxInt64},
		{Ts: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), Open: 3, High: 4, Low: 2, Close: 3.5, Volume: 7},
		{Ts: time.Date(2024, 3, 1, 14, 30, 0, 1000, time.UTC), Open: 101.01, High: 102.02, Low: 100.5, Close: 101.75, Volume: 123456789},
	}
	_, err = st.Pool.Exec(ctx, "INSERT INTO data_sources (name, description) VALUES ('builtin', '')")
	if err == nil {
		_, err = st.Pool.Exec(ctx, "INSERT INTO symbols (source, symbol) VALUES ('builtin', 'EB')")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range want {
		if _, err := st.Pool.Exec(ctx, `INSERT INTO bars (source, symbol, timeframe, ts, open, high, low, close, volume)
			VALUES ('builtin', 'EB', '1m', $1, $2, $3, $4, $5, $6)`, r.Ts, r.Open, r.High, r.Low, r.Close, r.Volume); err != nil {
			t.Fatal(err)
		}
	}
	text, err := pgx.Connect(ctx, url+"&default_query_exec_mode=simple_protocol")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { text.Close(ctx) })
	q := store.New()
	p := store.ListBarsParams{Source: "builtin", Symbol: "EB", Timeframe: "1m", FromTs: want[0].Ts, UntilTs: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		name string
		db   store.DBTX
	}{{"binary", st.Pool}, {"text", text}} {
		var got []store.ListBarsRow
		if err := q.EachBar(ctx, tc.db, p, func(r store.ListBarsRow) { got = append(got, r) }); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var at []store.ListBarsRow
		if err := q.EachBarAt(ctx, tc.db, store.ListBarsAtParams{Source: p.Source, Symbol: p.Symbol, Timeframe: p.Timeframe, FromTs: p.FromTs, UntilTs: p.UntilTs, Version: 1},
			func(r store.ListBarsRow) { at = append(at, r) }); err != nil {
			t.Fatalf("%s at: %v", tc.name, err)
		}
		for _, rows := range [][]store.ListBarsRow{got, at} {
			if len(rows) != len(want) {
				t.Fatalf("%s: %d rows, want %d", tc.name, len(rows), len(want))
			}
			for i := range want {
				if rows[i] != want[i] || rows[i].Ts.Location() != time.UTC {
					t.Errorf("%s: row %d = %+v, want %+v", tc.name, i, rows[i], want[i])
				}
			}
		}
	}
}
