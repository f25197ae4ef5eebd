package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

func TestSafeText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		json           bool
	}{
		{"clean", "héllo", "héllo", false},
		{"NUL", "bad\x00text", "badtext", false},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb", false},
		{"cut through a character", "x\xe2\x82", "x\uFFFD", false},
		{"JSON NUL escape", `{"a":"x\u0000y"}`, `{"a":"x\ufffdy"}`, true},
		{"JSON escaped backslash", `{"a":"x\\u0000y"}`, `{"a":"x\\u0000y"}`, true},
		{"JSON escaped backslash then escape", `["\\\u0000"]`, `["\\\ufffd"]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(store.SafeText([]byte(tt.in), tt.json)); got != tt.want {
				t.Fatalf("SafeText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := store.Truncate("aé", 2); got != "a…" {
		t.Fatalf("cut inside é: %q", got)
	}
	if got := store.Truncate("abc", 3); got != "abc" {
		t.Fatalf("no cut needed: %q", got)
	}
}

// Every write through the store's pool is safe, whatever the text: parameters of queries,
// JSON documents and COPY.
func TestPoolWritesHostileText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	hostile := "bad\x00 \xff end"
	var text string
	if err := st.Pool.QueryRow(ctx, "SELECT $1::text", hostile).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "bad \uFFFD end" {
		t.Fatalf("text: %q", text)
	}
	doc, _ := json.Marshal(map[string]string{"error": hostile})
	var back string
	if err := st.Pool.QueryRow(ctx, "SELECT ($1::jsonb)->>'error'", doc).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if back != "bad\uFFFD \uFFFD end" && back != "bad \uFFFD end" {
		t.Fatalf("jsonb: %q", back)
	}
	if _, err := st.Pool.Exec(ctx, "CREATE TABLE notes (msg text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.CopyFrom(ctx, pgx.Identifier{"notes"}, []string{"msg"}, pgx.CopyFromRows([][]any{{hostile}})); err != nil {
		t.Fatalf("COPY: %v", err)
	}
	if err := st.Pool.QueryRow(ctx, "SELECT msg FROM notes").Scan(&text); err != nil || text != "bad \uFFFD end" {
		t.Fatalf("copied %q, %v", text, err)
	}
}
