package apperr

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 20<<10)
	for _, tt := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "fast", "fast"},
		{"exactly the limit", strings.Repeat("y", MaxQuote), strings.Repeat("y", MaxQuote)},
		{"one over", strings.Repeat("y", MaxQuote+1), strings.Repeat("y", MaxQuote) + "… (201 bytes)"},
		{"20 KB", long, long[:MaxQuote] + "… (20480 bytes)"},
		// 199 ASCII bytes then a 3-byte character across the limit: cut before it.
		{"a character across the limit", strings.Repeat("a", MaxQuote-1) + "€€", strings.Repeat("a", MaxQuote-1) + "… (205 bytes)"},
	} {
		got := Quote(tt.in)
		if got != tt.want {
			t.Errorf("%s: Quote = %.300q, want %.300q", tt.name, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: Quote cut a character: %q", tt.name, got)
		}
	}
}

// TestConstructorsBoundInput: what the constructors format from their arguments quotes at
// most MaxQuote bytes of each; numbers are never cut.
func TestConstructorsBoundInput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 20<<10)
	over := strings.Repeat("x", MaxQuote+1)
	caller := []any{long}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"%q of a string", Invalid("method must be grid, got %q", long), `method must be grid, got "` + long[:MaxQuote] + `… (20480 bytes)"`},
		{"%s of bytes", Unprocessable("got %s", []byte(long)), "got " + long[:MaxQuote] + "… (20480 bytes)"},
		{"%v of a list", Invalid("values %v", []any{long, 1}), "values [" + long[:MaxQuote-1] + "… (20484 bytes)"},
		{"%v of a map", NotFound("%v", map[string]any{"k": long}), "map[k:" + long[:MaxQuote-6] + "… (20487 bytes)"},
		{"an error", Conflict("space: %v", errors.New(long)), "space: " + long[:MaxQuote] + "… (20480 bytes)"},
		{"numbers whole", Invalid("%d combinations, %.1f, %v", int64(1_000_000_000_000), 2.5, true), "1000000000000 combinations, 2.5, true"},
		{"short text as it is", Forbidden("%s may not %q", "alice", "delete"), `alice may not "delete"`},
		{"the caller's slice", Unauthenticated("%s", caller...), long[:MaxQuote] + "… (20480 bytes)"},
	} {
		e, _ := As(tt.err)
		if e.Detail != tt.want {
			t.Errorf("%s: %.400q, want %.400q", tt.name, e.Detail, tt.want)
		}
		if strings.Contains(e.Detail, over) {
			t.Errorf("%s: more than %d bytes of the input", tt.name, MaxQuote)
		}
	}
	if caller[0] != long {
		t.Error("a constructor changed its caller's argument slice")
	}
}
