package engine

import (
	"encoding/json"
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
