package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDayNumber checks that two times have the same day number exactly when they have the
// same date in their locations, before and after 1970, in UTC and elsewhere.
func TestDayNumber(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	locs := []*time.Location{time.UTC, ny, time.FixedZone("east", 11*3600)}
	r := rand.New(rand.NewPCG(3, 4))
	at := func() time.Time {
		sec := r.Int64N(400*365*86400) - 300*365*86400 // 1670 to 2070
		if r.IntN(4) == 0 {
			sec -= sec % 86400 // midnights UTC, as daily bars are
			sec -= int64(r.IntN(2))
		}
		return time.Unix(sec, 0).In(locs[r.IntN(len(locs))])
	}
	for range 200_000 {
		a := at()
		b := a.Add(time.Duration(r.Int64N(3*86400)-86400) * time.Second)
		if r.IntN(3) == 0 {
			b = b.In(locs[r.IntN(len(locs))])
		}
		ay, am, ad := a.Date()
		by, bm, bd := b.Date()
		same := ay == by && am == bm && ad == bd
		if got := dayNumber(a) == dayNumber(b); got != same {
			t.Fatalf("%v and %v: same day number %v, same date %v", a, b, got, same)
		}
	}
	if d := dayNumber(time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)); d != -1 {
		t.Errorf("1969-12-31: %d, want -1", d)
	}
}

func TestYearOf(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var c yearOf
	at := time.Date(1690, 12, 31, 23, 0, 0, 0, time.UTC)
	for range 200_000 {
		at = at.Add(time.Duration(r.Int64N(3*86400)) * time.Second)
		tt := at
		if r.IntN(10) == 0 {
			tt = at.In(ny)
		}
		if got, want := c.of(tt), tt.Year(); got != want {
			t.Fatalf("%v: year %d, want %d", tt, got, want)
		}
	}
}
