// Command arrowgen writes the Parquet bars fixtures that internal/tabular's tests read, with
// Apache Arrow's Go module: files written by another implementation than the one the
// service uses (parquet-go). Run from this folder: go run . (it writes ../*.parquet).
package main

import (
	"log"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func write(path string, schema *arrow.Schema, fill func(b *array.RecordBuilder)) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	fill(b)
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}

func main() {
	// Intraday bars: timestamps in milliseconds adjusted to UTC, float32 prices, int32 volume.
	intraday := arrow.NewSchema([]arrow.Field{
		{Name: "datetime", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "open", Type: arrow.PrimitiveTypes.Float32},
		{Name: "high", Type: arrow.PrimitiveTypes.Float32},
		{Name: "low", Type: arrow.PrimitiveTypes.Float32},
		{Name: "close", Type: arrow.PrimitiveTypes.Float32},
		{Name: "volume", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	start := time.Date(2024, 3, 1, 14, 30, 0, 0, time.UTC)
	write("../arrow_intraday.parquet", intraday, func(b *array.RecordBuilder) {
		for i := range 5 {
			p := float32(100 + i)
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(start.Add(time.Duration(i) * time.Minute).UnixMilli()))
			b.Field(1).(*array.Float32Builder).Append(p)
			b.Field(2).(*array.Float32Builder).Append(p + 0.5)
			b.Field(3).(*array.Float32Builder).Append(p - 0.5)
			b.Field(4).(*array.Float32Builder).Append(p + 0.25)
			b.Field(5).(*array.Int32Builder).Append(int32(1000 * (i + 1)))
		}
	})
	// Daily bars: a date32 date, double prices, int64 volume.
	daily := arrow.NewSchema([]arrow.Field{
		{Name: "date", Type: arrow.FixedWidthTypes.Date32},
		{Name: "open", Type: arrow.PrimitiveTypes.Float64},
		{Name: "high", Type: arrow.PrimitiveTypes.Float64},
		{Name: "low", Type: arrow.PrimitiveTypes.Float64},
		{Name: "close", Type: arrow.PrimitiveTypes.Float64},
		{Name: "volume", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	day := time.Date(2016, 7, 13, 0, 0, 0, 0, time.UTC)
	write("../arrow_daily.parquet", daily, func(b *array.RecordBuilder) {
		for i := range 3 {
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(day.AddDate(0, 0, i)))
			b.Field(1).(*array.Float64Builder).Append(50.5 + float64(i))
			b.Field(2).(*array.Float64Builder).Append(52 + float64(i))
			b.Field(3).(*array.Float64Builder).Append(49.75 + float64(i))
			b.Field(4).(*array.Float64Builder).Append(51.125 + float64(i))
			b.Field(5).(*array.Int64Builder).Append(int64(250000 + i))
		}
	})
}
