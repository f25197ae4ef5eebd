package tabular

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// rowGroupRows is how many rows a Parquet row group holds: a reader reads a group at a
// time, and a writer buffers one.
const rowGroupRows = 64 << 10

// nodeOf is the Parquet node of kind k.
func nodeOf(k Kind) parquet.Node {
	switch k {
	case Time:
		return parquet.Timestamp(parquet.Microsecond)
	case Float:
		return parquet.Leaf(parquet.DoubleType)
	case Int:
		return parquet.Int(64)
	case String:
		return parquet.String()
	case Bool:
		return parquet.Leaf(parquet.BooleanType)
	case Date:
		return parquet.Date()
	}
	panic(fmt.Sprintf("tabular: kind %d", k))
}

// schemaOf is t's Parquet schema, its columns in t's order (parquet.Group sorts them by
// name, which would shuffle a notebook's columns).
func schemaOf(t Table) *parquet.Schema {
	g := make(orderedGroup, len(t.Columns))
	for i, c := range t.Columns {
		n := nodeOf(c.Kind)
		if c.Nullable {
			n = parquet.Optional(n)
		}
		g[i] = &field{Node: n, name: c.Name}
	}
	return parquet.NewSchema("table", g)
}

// WriteParquet writes t as one Parquet file (Snappy-compressed, which every reader
// reads), a row group per rowGroupRows rows.
func WriteParquet(w io.Writer, t Table) error {
	seen := make(map[string]bool, len(t.Columns))
	for _, c := range t.Columns {
		if seen[c.Name] {
			return fmt.Errorf("tabular: column %q twice", c.Name)
		}
		seen[c.Name] = true
	}
	pw := parquet.NewWriter(w, schemaOf(t), parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(rowGroupRows))
	const batch = 1024
	rows := make([]parquet.Row, 0, batch)
	for i := range t.Rows {
		row := make(parquet.Row, len(t.Columns))
		for c, col := range t.Columns {
			v, err := valueOf(col, col.Cell(i))
			if err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
			def := 0
			if col.Nullable && !v.IsNull() {
				def = 1
			}
			row[c] = v.Level(0, def, c)
		}
		if rows = append(rows, row); len(rows) == batch {
			if _, err := pw.WriteRows(rows); err != nil {
				return fmt.Errorf("write parquet rows: %w", err)
			}
			rows = rows[:0]
		}
	}
	if len(rows) > 0 {
		if _, err := pw.WriteRows(rows); err != nil {
			return fmt.Errorf("write parquet rows: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("close parquet: %w", err)
	}
	return nil
}

func valueOf(col Column, v any) (parquet.Value, error) {
	if v == nil {
		if !col.Nullable {
			return parquet.Value{}, fmt.Errorf("column %s: null in a column that is never null", col.Name)
		}
		return parquet.NullValue(), nil
	}
	bad := func() (parquet.Value, error) {
		return parquet.Value{}, fmt.Errorf("column %s: a %T in a column of kind %d", col.Name, v, col.Kind)
	}
	switch col.Kind {
	case Time:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		return parquet.Int64Value(t.UnixMicro()), nil
	case Date:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		return parquet.Int32Value(int32(t.UTC().Truncate(24*time.Hour).Unix() / 86400)), nil
	case Float:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if math.IsInf(f, 0) {
			f = math.NaN()
		}
		return parquet.DoubleValue(f), nil
	case Int:
		n, ok := v.(int64)
		if !ok {
			return bad()
		}
		return parquet.Int64Value(n), nil
	case String:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return parquet.ByteArrayValue([]byte(s)), nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return parquet.BooleanValue(b), nil
	}
	return bad()
}

// orderedGroup is a Parquet group whose fields keep the order they are given in.
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int { return 0 }
func (g orderedGroup) String() string {
	names := make([]string, len(g))
	for i, f := range g {
		names[i] = f.Name()
	}
	return "group(" + strings.Join(names, ", ") + ")"
}
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// field is a named column of an orderedGroup. Rows are written as parquet.Row, never
// from Go values, so Value is never asked for a struct's field.
type field struct {
	parquet.Node
	name string
}

func (f *field) Name() string { return f.name }
func (f *field) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Map {
		return base.MapIndex(reflect.ValueOf(f.name))
	}
	return reflect.Value{}
}
