package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// Through a real connection, the arrays arrive as they were sent; other values of these
// types still go through pgx's encoder.
func TestFastArraysRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	floats := make([]float64, 5000)
	times := make([]time.Time, len(floats))
	for i := range floats {
		floats[i] = float64(i) * 1.25
		times[i] = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i)
	}
	var gotF []float64
	var gotT []time.Time
	var n int
	if err := st.Pool.QueryRow(ctx, "SELECT $1::float8[], $2::timestamptz[], cardinality($3::float8[])", floats, times, []float32{1, 2}).
		Scan(&gotF, &gotT, &n); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotF, floats) || n != 2 {
		t.Errorf("floats differ after the round trip (or float32s: %d)", n)
	}
	if !slices.EqualFunc(gotT, times, time.Time.Equal) {
		t.Errorf("times differ after the round trip: %v…", gotT[:2])
	}
}
