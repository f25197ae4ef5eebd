package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// EachBar runs ListBars (the latest bars, in time order) and hands every row to fn, as
// ListBars would return them but without building its slice: the generated loop allocates
// one row a bar and grows its slice, which was most of a run's read of 10,000 bars.
func (q *Queries) EachBar(ctx context.Context, db DBTX, arg ListBarsParams, fn func(ListBarsRow)) error {
	rows, err := db.Query(ctx, listBars, arg.Source, arg.Symbol, arg.Timeframe, arg.FromTs, arg.UntilTs)
	if err != nil {
		return err
	}
	return eachBar(rows, fn)
}

// EachBarAt is EachBar for ListBarsAt (a version's bars, unordered).
func (q *Queries) EachBarAt(ctx context.Context, db DBTX, arg ListBarsAtParams, fn func(ListBarsRow)) error {
	rows, err := db.Query(ctx, listBarsAt, arg.Source, arg.Symbol, arg.Timeframe, arg.FromTs, arg.UntilTs, arg.Version)
	if err != nil {
		return err
	}
	return eachBar(rows, fn)
}

// pgEpochMicros is PostgreSQL's epoch, 2000-01-01 UTC, in Unix microseconds: binary
// timestamptz values count microseconds from it.
const pgEpochMicros = 946_684_800_000_000

// eachBar reads rows of (ts timestamptz, open, high, low, close float8, volume int8). Values
// in the binary format (pgx asks for it for these types) are decoded in place; any other
// format goes through Scan.
func eachBar(rows pgx.Rows, fn func(ListBarsRow)) error {
	defer rows.Close()
	binaryRows := true
	for _, f := range rows.FieldDescriptions() {
		binaryRows = binaryRows && f.Format == pgx.BinaryFormatCode
	}
	var r ListBarsRow
	for rows.Next() {
		if !binaryRows {
			if err := rows.Scan(&r.Ts, &r.Open, &r.High, &r.Low, &r.Close, &r.Volume); err != nil {
				return err
			}
			r.Ts = r.Ts.UTC()
			fn(r)
			continue
		}
		v := rows.RawValues()
		if len(v) != 6 {
			return fmt.Errorf("bar row: %d columns, want 6", len(v))
		}
		for i, b := range v {
			if len(b) != 8 { // NULL or not an 8-byte value: the columns are NOT NULL
				return fmt.Errorf("bar row: column %d holds %d bytes, want 8", i, len(b))
			}
		}
		us := int64(binary.BigEndian.Uint64(v[0]))
		if us == math.MaxInt64 || us == math.MinInt64 { // 'infinity': not a bar's time
			return fmt.Errorf("bar row: an infinite time")
		}
		r.Ts = time.UnixMicro(us + pgEpochMicros).UTC()
		r.Open = math.Float64frombits(binary.BigEndian.Uint64(v[1]))
		r.High = math.Float64frombits(binary.BigEndian.Uint64(v[2]))
		r.Low = math.Float64frombits(binary.BigEndian.Uint64(v[3]))
		r.Close = math.Float64frombits(binary.BigEndian.Uint64(v[4]))
		r.Volume = int64(binary.BigEndian.Uint64(v[5]))
		fn(r)
	}
	return rows.Err()
}
