package store

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// The fast encoders write exactly the bytes pgx's own array encoder writes.
func TestFastArraysEncodeAsPgx(t *testing.T) {
	t.Parallel()
	plain, fast := pgtype.NewMap(), pgtype.NewMap()
	registerFastArrays(fast)
	times := []time.Time{
		time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999_999_500, time.UTC), // before 1970, below a microsecond
		time.Date(1900, 1, 1, 12, 30, 0, 0, time.FixedZone("x", 3600)),
	}
	tests := []struct {
		name  string
		oid   uint32
		value any
	}{
		{"floats", pgtype.Float8ArrayOID, []float64{0, -1.5, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(-1), math.NaN()}},
		{"empty floats", pgtype.Float8ArrayOID, []float64{}},
		{"nil floats", pgtype.Float8ArrayOID, []float64(nil)},
		{"times", pgtype.TimestamptzArrayOID, times},
		{"empty times", pgtype.TimestamptzArrayOID, []time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := plain.Encode(tt.oid, pgtype.BinaryFormatCode, tt.value, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fast.Encode(tt.oid, pgtype.BinaryFormatCode, tt.value, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("encoded\n%x\nwant\n%x", got, want)
			}
		})
	}
}
