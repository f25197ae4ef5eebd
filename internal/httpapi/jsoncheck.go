package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/backtestd/backtestd/internal/apperr"
)

// MaxJSONDepth is the deepest nesting of objects and arrays a JSON document sent to the
// service may have (request bodies, bar imports, WebSocket messages): {"a":[1]} is 2 deep.
// Nothing the API takes needs more than a handful of levels; the bound keeps a small,
// deeply nested body from costing seconds of CPU and gigabytes of memory in the decoder
// and in what walks the decoded value afterwards. docs/team-and-security.md and
// api/openapi.yaml state it (a test holds them to this constant).
const MaxJSONDepth = 32

// checkJSON scans a JSON document before it is decoded and refuses, as a 400 naming the
// byte offset, what encoding/json would let through but the service must not accept:
//   - nesting deeper than MaxJSONDepth (checked as the scan goes, so a deep document costs
//     no more than reading it);
//   - a key that appears twice in one object, at any depth: encoding/json keeps the last,
//     while a proxy or validator in front of the service may read the first, so the two
//     would act on different requests ({"role":"viewer","role":"admin"}). Keys are compared
//     after unescaping and without regard to case, as encoding/json matches a key to a
//     struct field without regard to case ("role" and "Role" fill the same field);
//   - a \u escape that is half of a UTF-16 surrogate pair without its other half (a lone
//     \ud800, a \udc00 alone), which encoding/json would silently turn into U+FFFD.
//
// It is not a full validator: what it does not refuse (a syntax error, invalid UTF-8, NUL)
// is refused by safeText and the decoder after it, with their own details.
func checkJSON(b []byte) error {
	type frame struct {
		object  bool
		wantKey bool // in an object, the next string is a key
		// The object's keys so far: a slice searched in order while it is short (most
		// objects), then a set of folded keys, so a large object costs no more than linear.
		keys   []string
		folded map[string]struct{}
	}
	var stack []frame
	for i := 0; i < len(b); {
		switch b[i] {
		case '{', '[':
			if len(stack) >= MaxJSONDepth {
				return badJSON("JSON nested too deeply at byte %d: at most %d levels of objects and arrays are accepted", i, MaxJSONDepth)
			}
			stack = append(stack, frame{object: b[i] == '{', wantKey: b[i] == '{'})
			i++
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
			i++
		case '"':
			top := len(stack) - 1
			isKey := top >= 0 && stack[top].object && stack[top].wantKey
			end, key, err := scanString(b, i, isKey)
			if err != nil {
				return err
			}
			if isKey {
				f := &stack[top]
				f.wantKey = false
				dup := false
				if f.folded == nil {
					for _, k := range f.keys {
						dup = dup || strings.EqualFold(k, key)
					}
					if f.keys = append(f.keys, key); len(f.keys) > 16 {
						f.folded = map[string]struct{}{}
						for _, k := range f.keys[:len(f.keys)-1] {
							f.folded[foldKey(k)] = struct{}{}
						}
					}
				}
				if f.folded != nil && !dup {
					fk := foldKey(key)
					_, dup = f.folded[fk]
					f.folded[fk] = struct{}{}
				}
				if dup {
					return badJSON("Duplicate key %s at byte %d: a key may appear only once in an object (keys that differ only in letter case count as the same)", quoteInput(key), i)
				}
			}
			if end < 0 { // unterminated: the decoder says so
				return nil
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// scanString reads the JSON string starting at b[start] (a '"'). It returns the index
// after its closing quote (-1 when it has none) and, when decode is set, its unescaped
// text. It refuses escapes of lone UTF-16 surrogates.
func scanString(b []byte, start int, decode bool) (int, string, error) {
	var out []byte
	i := start + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, string(out), nil
		case c == '\\' && i+1 < len(b):
			if b[i+1] != 'u' {
				if decode {
					out = append(out, unescapeByte(b[i+1]))
				}
				i += 2
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok { // a malformed escape: the decoder says so
				return -1, "", nil
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // a high surrogate: a low one must follow
				r2, ok2 := rune(0), false
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					r2, ok2 = hex4(b, i+8)
				}
				if !ok2 || r2 < 0xDC00 || r2 > 0xDFFF {
					return 0, "", badJSON(`Invalid text at byte %d: %s is half of a UTF-16 surrogate pair without the low half that must follow it; text must be valid Unicode`, i, quoteInput(string(b[i:i+6])))
				}
				if decode {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
				}
				i += 12
			case utf16.IsSurrogate(r): // a low surrogate with no high one before it
				return 0, "", badJSON(`Invalid text at byte %d: %s is the low half of a UTF-16 surrogate pair without the high half before it; text must be valid Unicode`, i, quoteInput(string(b[i:i+6])))
			default:
				if decode {
					out = utf8.AppendRune(out, r)
				}
				i += 6
			}
		default:
			if decode {
				out = append(out, c)
			}
			i++
		}
	}
	return -1, string(out), nil
}

// hex4 reads the four hexadecimal digits of a \u escape at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}

func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // \" \\ \/ (and whatever the decoder will refuse)
}

// foldKey folds a key as encoding/json does when it matches keys to struct fields, so that
// two keys one struct field would both take count as one.
func foldKey(k string) string {
	out := make([]byte, 0, len(k))
	for _, r := range k {
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(r)))
	}
	return string(out)
}

// quoteInput quotes a client's text for an error detail, cut by apperr.Quote (at most
// apperr.MaxQuote bytes of it).
func quoteInput(s string) string {
	return strconv.Quote(apperr.Quote(s))
}

// badJSON is a 400 whose detail is formatted as it is: the input it quotes is already
// cut by quoteInput.
func badJSON(format string, a ...any) error {
	return &apperr.Error{Kind: apperr.KindInvalid, Detail: fmt.Sprintf(format, a...)}
}

// validJSON is the one check every JSON document from a client passes before it is
// decoded: text PostgreSQL can store (valid UTF-8, no NUL), then checkJSON.
func validJSON(raw []byte) error {
	if !safeText(raw, true) {
		return errInvalidText
	}
	return checkJSON(raw)
}

// decodeMessage decodes a client's WebSocket message into dst after the same checks as a
// request body (validJSON); the socket's read limit bounds its size.
func decodeMessage(msg []byte, dst any) error {
	if err := validJSON(msg); err != nil {
		return err
	}
	return json.Unmarshal(msg, dst)
}
