package store

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Text that reaches PostgreSQL is made safe here, once, for every query, batch and COPY of
// the store's pool (River's included): PostgreSQL refuses NUL characters and invalid UTF-8
// in text and jsonb, and such text comes from users and from strategies (log lines, error
// messages, parameter names). A refused write would lose a log or, worse, leave a task or
// a River job unfinished. NUL characters are removed (in JSON, the \u0000 escape becomes
// U+FFFD) and invalid bytes become U+FFFD.
//
// Two hooks cover every path: pgx writes string arguments in the text format without
// asking a codec, so safeArgs cleans string arguments as a query starts; everything else
// (JSON documents, COPY rows, named string types) is encoded in the binary format through
// the codecs registered by registerSafeText.

// safeArgs is a pgx tracer that replaces unsafe string arguments of queries and batches
// before they are encoded (pgx passes the tracer the argument slice it then encodes).
type safeArgs struct{}

func (safeArgs) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	cleanArgs(d.Args)
	return ctx
}

func (safeArgs) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (safeArgs) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		cleanArgs(q.Arguments)
	}
	return ctx
}

func (safeArgs) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (safeArgs) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func cleanArgs(args []any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if c := SafeString(v); c != v {
				args[i] = c
			}
		case *string:
			if v != nil {
				if c := SafeString(*v); c != *v {
					args[i] = &c
				}
			}
		}
	}
}

// SafeString is SafeText for a string of text.
func SafeString(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return string(SafeText([]byte(s), false))
}

// registerSafeText makes the text, varchar, json and jsonb encoders of m (and those of
// their arrays) clean what they write.
func registerSafeText(m *pgtype.Map) {
	for _, name := range []string{"text", "varchar", "bpchar", "json", "jsonb"} {
		t, ok := m.TypeForName(name)
		if !ok {
			continue
		}
		safe := &pgtype.Type{Name: t.Name, OID: t.OID, Codec: safeCodec{Codec: t.Codec, json: name == "json" || name == "jsonb"}}
		m.RegisterType(safe)
		if at, ok := m.TypeForName("_" + name); ok {
			m.RegisterType(&pgtype.Type{Name: at.Name, OID: at.OID, Codec: &pgtype.ArrayCodec{ElementType: safe}})
		}
	}
}

type safeCodec struct {
	pgtype.Codec
	json bool
}

// PreferredFormat is binary: pgx writes strings in the text format without asking the
// codec, so only binary parameters pass through PlanEncode. For these types the two
// formats carry the same bytes.
func (safeCodec) PreferredFormat() int16 { return pgtype.BinaryFormatCode }

func (c safeCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	p := c.Codec.PlanEncode(m, oid, format, value)
	if p == nil {
		return nil
	}
	return safePlan{inner: p, json: c.json}
}

type safePlan struct {
	inner pgtype.EncodePlan
	json  bool
}

func (p safePlan) Encode(value any, buf []byte) ([]byte, error) {
	start := len(buf)
	out, err := p.inner.Encode(value, buf)
	if err != nil || out == nil {
		return out, err
	}
	// Text and JSON are written as their bytes (binary jsonb after a version byte, which
	// is clean), so the appended bytes are checked as they are.
	tail := out[start:]
	if clean := SafeText(tail, p.json); len(clean) != len(tail) || !bytes.Equal(clean, tail) {
		out = append(out[:start], clean...)
	}
	return out, nil
}

// SafeText returns b without NUL bytes and with invalid UTF-8 replaced by U+FFFD; with
// json set, \u0000 escapes become \ufffd too. It returns b itself when b is clean.
func SafeText(b []byte, json bool) []byte {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 && (!json || !bytes.Contains(b, []byte(`\u0000`))) {
		return b
	}
	b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	b = bytes.ReplaceAll(b, []byte{0}, nil)
	if !json {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		// An escape pair: \\ must not be read as the start of \u0000.
		if b[i+1] == 'u' && i+6 <= len(b) && string(b[i+2:i+6]) == "0000" {
			out = append(out, `\ufffd`...)
			i += 5
			continue
		}
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}

// Truncate shortens s to at most n bytes on a character boundary, marking a cut with "…".
func Truncate(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
