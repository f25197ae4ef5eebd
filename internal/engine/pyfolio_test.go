package engine

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"math"
	"testing"
)

// TestRowsJSON checks that Rows writes what encoding/json writes of the same rows, and
// reads it back.
func TestRowsJSON(t *testing.T) {
	cases := [][][]float64{
		{},
		{{0, 10000}, {-23.148149999999998, 10023.30999667}},
		{{1e-7, 1.5e21, -2.5e-10}, {123456789.125, 0.000001, -0}},
	}
	for _, rows := range cases {
		r := Rows{Width: 0}
		for _, row := range rows {
			r.Width = len(row)
			r.Flat = append(r.Flat, row...)
		}
		got, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rows)
		if string(got) != string(want) {
			t.Errorf("Rows %s, encoding/json %s", got, want)
		}
		var back Rows
		if err := json.Unmarshal(got, &back); err != nil || back.Len() != len(rows) {
			t.Errorf("read back %d rows (%v), want %d", back.Len(), err, len(rows))
		}
	}
	var bad Rows
	if err := json.Unmarshal([]byte(`[[1,2],[3]]`), &bad); err == nil {
		t.Error("rows of different widths were accepted")
	}
}

// Rows cross the runner's pipe packed (GobEncode): every number comes back to the bit.
func TestRowsGobRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range []Rows{
		{},
		{Width: 2},
		{Width: 2, Flat: []float64{1.5, -0.1, math.Inf(1), math.Copysign(0, -1)}},
		{Width: 3, Flat: []float64{math.SmallestNonzeroFloat64, math.MaxFloat64, 1e-300, 4, 5, 6}},
	} {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(r); err != nil {
			t.Fatal(err)
		}
		var got Rows
		if err := gob.NewDecoder(&buf).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Width != r.Width || len(got.Flat) != len(r.Flat) {
			t.Fatalf("%+v came back %+v", r, got)
		}
		for i := range r.Flat {
			if math.Float64bits(got.Flat[i]) != math.Float64bits(r.Flat[i]) {
				t.Errorf("%+v: number %d came back %v", r, i, got.Flat[i])
			}
		}
	}
}
