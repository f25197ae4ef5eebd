package store

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// registerFastArrays gives m encoders for []float64 as float8[] and []time.Time as
// timestamptz[] that write PostgreSQL's binary array format in one pass. pgx's generic
// array encoder plans and appends element by element: storing a result's equity curve
// (six arrays of 5,000) spent more time there than PostgreSQL spent storing it. Other
// values, and decoding, go to the registered codec as before.
func registerFastArrays(m *pgtype.Map) {
	for _, a := range []struct {
		name string
		elem uint32
	}{{"_float8", pgtype.Float8OID}, {"_timestamptz", pgtype.TimestamptzOID}} {
		t, ok := m.TypeForName(a.name)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: fastArrayCodec{Codec: t.Codec, elem: a.elem}})
	}
}

type fastArrayCodec struct {
	pgtype.Codec
	elem uint32
}

func (c fastArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		switch value.(type) {
		case []float64:
			if c.elem == pgtype.Float8OID {
				return float8ArrayPlan{}
			}
		case []time.Time:
			if c.elem == pgtype.TimestamptzOID {
				return timestamptzArrayPlan{}
			}
		}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

// arrayHeader appends the header of a one-dimensional array of n elements of type elem
// without NULLs (as pgx writes it, an empty one too). A nil slice is SQL NULL instead.
func arrayHeader(buf []byte, elem uint32, n int) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	buf = binary.BigEndian.AppendUint32(buf, 0) // no NULLs
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1) // lower bound
}

type float8ArrayPlan struct{}

func (float8ArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendArray(buf, pgtype.Float8OID, value.([]float64), math.Float64bits), nil
}

// PostgreSQL's timestamps count microseconds from 2000-01-01 UTC.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

type timestamptzArrayPlan struct{}

func (timestamptzArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendArray(buf, pgtype.TimestamptzOID, value.([]time.Time), func(t time.Time) uint64 {
		// As pgx writes a timestamptz: whole seconds, then the microseconds within.
		micros := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000
		return uint64(micros - pgEpoch)
	}), nil
}

// appendArray appends v as a one-dimensional array of 8-byte elements of type elem,
// each element's bytes given by bits; a nil v is SQL NULL (nothing appended, nil).
func appendArray[T any](buf []byte, elem uint32, v []T, bits func(T) uint64) []byte {
	if v == nil {
		return nil
	}
	buf = grow(buf, 20+12*len(v))
	buf = arrayHeader(buf, elem, len(v))
	for _, x := range v {
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, bits(x))
	}
	return buf
}

// grow makes room for n more bytes, at least doubling the buffer when it must move: pgx
// encodes all of a statement's parameters into one buffer, and growing it by exactly each
// array copied the arrays before it again for every one after (six equity arrays of 5,000
// allocated 1.2 MB to send 360 KB).
func grow(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	out := make([]byte, len(buf), max(len(buf)+n, 2*cap(buf)))
	copy(out, buf)
	return out
}
