// Package csvsafe writes CSV that is safe to open in a spreadsheet: a text cell that a
// spreadsheet would read as a formula (CSV injection) is written as text. Every CSV the
// service writes goes through Writer, so the rule lives in one place.
package csvsafe

import (
	"encoding/csv"
	"io"
	"regexp"
)

// number is a plain decimal number: a spreadsheet reads it as that number, never as a
// formula, so it is written as it is (-12.5 stays the number -12.5).
var number = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// Cell returns s as a spreadsheet will show it rather than evaluate it: a cell that
// begins with =, +, -, @, a tab or a carriage return, and is not a plain number, gets a
// leading single quote (OWASP's advice for CSV injection). Other cells are unchanged.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if !number.MatchString(s) {
			return "'" + s
		}
	}
	return s
}

// Writer is a csv.Writer that passes every cell through Cell.
type Writer struct {
	w   *csv.Writer
	row []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record; the record itself is not changed.
func (w *Writer) Write(record []string) error {
	w.row = w.row[:0]
	for _, c := range record {
		w.row = append(w.row, Cell(c))
	}
	return w.w.Write(w.row)
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports an error of a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
