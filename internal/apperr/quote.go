package apperr

import (
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"
)

// MaxQuote is the most bytes of a client's input that an error's detail quotes: enough to
// recognise the value, not an echo of a 20 KB one (which the client has anyway).
const MaxQuote = 200

// Quote is s as a detail may quote it: all of it when it has at most MaxQuote bytes, else
// its first MaxQuote bytes (cut at a character boundary) and how long it was. It is the
// one owner of the rule: the constructors below apply it to their arguments, and code that
// builds an error text from input elsewhere (sweep, jsrt) calls it.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return s
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// sprintf is fmt.Sprintf with every argument that can carry a client's text bounded by
// Quote as it is formatted: strings, byte slices, errors, Stringers and composite values
// (maps, slices, structs). Numbers and booleans print as they are, so a count is never cut.
// Arguments that need nothing are passed on as they came (a...), which is also what lets
// go vet check the constructors' formats; a is never changed (it may be the caller's).
func sprintf(format string, a ...any) string {
	var b []any
	for i, v := range a {
		if w := boundArg(v); w != v {
			if b == nil {
				b = append([]any(nil), a...)
			}
			b[i] = w
		}
	}
	if b == nil {
		return fmt.Sprintf(format, a...)
	}
	return fmt.Sprintf(format, b...)
}

func boundArg(v any) any {
	if v == nil {
		return v
	}
	switch s := v.(type) {
	case string:
		return Quote(s) // before formatting: %q still closes its quotes
	case []byte:
		return Quote(string(s))
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		if _, ok := v.(fmt.Stringer); !ok {
			return v
		}
	}
	return quoted{v}
}

// quoted formats its value with the verb it is given, then bounds the text by Quote.
type quoted struct{ v any }

func (q quoted) Format(f fmt.State, verb rune) {
	_, _ = io.WriteString(f, Quote(fmt.Sprintf(fmt.FormatString(f, verb), q.v)))
}
