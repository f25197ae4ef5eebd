package tabular

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

func sample() Table {
	times := []time.Time{time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2020, 1, 3, 14, 30, 0, 0, time.UTC)}
	return Table{Rows: 2, Columns: []Column{
		{Name: "time", Kind: Time, Cell: func(i int) any { return times[i] }},
		{Name: "symbol", Kind: String, Cell: func(i int) any { return []string{"ACME", "=cmd"}[i] }},
		{Name: "price", Kind: Float, Cell: func(i int) any { return []float64{10.5, math.NaN()}[i] }},
		{Name: "count", Kind: Int, Cell: func(i int) any { return int64(i + 1) }},
		{Name: "open", Kind: Bool, Cell: func(i int) any { return i == 1 }},
		{Name: "exit", Kind: Float, Nullable: true, Cell: func(i int) any {
			if i == 0 {
				return 3.25
			}
			return nil
		}},
	}}
}

func TestWriteCSV(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	want := "time,symbol,price,count,open,exit\n" +
		"2020-01-02T00:00:00Z,ACME,10.5,1,false,3.25\n" +
		"2020-01-03T14:30:00Z,'=cmd,,2,true,\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
	// A column of midnights is written as dates.
	tb := Table{Rows: 1, Columns: []Column{{Name: "date", Kind: Time, Cell: func(int) any { return time.Date(2021, 5, 6, 0, 0, 0, 0, time.UTC) }}}}
	b.Reset()
	if err := WriteCSV(&b, tb); err != nil {
		t.Fatal(err)
	}
	if b.String() != "date\n2021-05-06\n" {
		t.Fatalf("dates: %q", b.String())
	}
}

func TestWriteParquetTypesAndValues(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteParquet(&b, sample()); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	cols := f.Schema().Fields()
	var names []string
	for _, c := range cols {
		names = append(names, c.Name())
	}
	if got := strings.Join(names, ","); got != "time,symbol,price,count,open,exit" {
		t.Fatalf("columns %s: not in the table's order", got)
	}
	if got := cols[0].Type().LogicalType().String(); got != "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)" {
		t.Fatalf("time column's logical type %s: want a UTC timestamp in microseconds", got)
	}
	if got := cols[1].Type().LogicalType().String(); got != "STRING" {
		t.Fatalf("symbol column's logical type %s: want a string", got)
	}
	for i, want := range []parquet.Kind{parquet.Int64, parquet.ByteArray, parquet.Double, parquet.Int64, parquet.Boolean, parquet.Double} {
		if k := cols[i].Type().Kind(); k != want {
			t.Errorf("column %s: kind %v, want %v", names[i], k, want)
		}
	}
	if !cols[5].Optional() || cols[2].Optional() {
		t.Errorf("exit optional %v, price optional %v: want only the nullable column optional", cols[5].Optional(), cols[2].Optional())
	}
	if f.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", f.NumRows())
	}
	rows := make([]parquet.Row, 2)
	r := parquet.NewReader(bytes.NewReader(b.Bytes()))
	defer r.Close()
	n, err := r.ReadRows(rows)
	if n != 2 {
		t.Fatalf("read %d rows: %v", n, err)
	}
	if got := time.UnixMicro(rows[1][0].Int64()).UTC(); !got.Equal(time.Date(2020, 1, 3, 14, 30, 0, 0, time.UTC)) {
		t.Errorf("time of row 2: %v", got)
	}
	if got := string(rows[1][1].ByteArray()); got != "=cmd" {
		t.Errorf("symbol of row 2: %q (Parquet keeps text as it is)", got)
	}
	if got := rows[0][2].Double(); got != 10.5 {
		t.Errorf("price of row 1: %v", got)
	}
	if !math.IsNaN(rows[1][2].Double()) {
		t.Errorf("price of row 2: %v, want NaN", rows[1][2].Double())
	}
	if rows[1][3].Int64() != 2 || !rows[1][4].Boolean() || rows[0][5].Double() != 3.25 || !rows[1][5].IsNull() {
		t.Errorf("row values %v / %v", rows[0], rows[1])
	}
}

func TestWriteParquetRefusesMistypedCells(t *testing.T) {
	t.Parallel()
	for name, col := range map[string]Column{
		"null in required": {Name: "a", Kind: Float, Cell: func(int) any { return nil }},
		"wrong type":       {Name: "a", Kind: Int, Cell: func(int) any { return 1.5 }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := WriteParquet(&bytes.Buffer{}, Table{Rows: 1, Columns: []Column{col}}); err == nil || !strings.Contains(err.Error(), "column a") {
				t.Fatalf("err %v, want one naming column a", err)
			}
		})
	}
}
