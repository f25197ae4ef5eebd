package events

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The largest event the publisher sends still fits one NOTIFY once sealed, and the
// sealed length is the one sealedLen gives.
func TestSealedFitsNotify(t *testing.T) {
	t.Parallel()
	if n := sealedLen(MaxPayload); n > MaxNotify {
		t.Fatalf("a %d-byte event seals to %d bytes, over %d", MaxPayload, n, MaxNotify)
	}
	s, err := newSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.seal(bytes.Repeat([]byte("x"), MaxPayload))
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != sealedLen(MaxPayload) {
		t.Fatalf("sealed %d bytes, sealedLen says %d", len(p), sealedLen(MaxPayload))
	}
}

// Only a payload sealed under the key opens; everything else is errUnsealed.
func TestOpen(t *testing.T) {
	t.Parallel()
	s, _ := newSealer(bytes.Repeat([]byte{1}, 32))
	other, _ := newSealer(bytes.Repeat([]byte{2}, 32))
	good, err := s.seal([]byte(`{"e":"log","t":"task_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.seal([]byte(`{"e":"log","t":"task_1"}`))
	flipped := []byte(good)
	flipped[len(flipped)-5] ^= 1
	for _, c := range []struct {
		name, payload string
		ok            bool
	}{
		{"sealed", good, true},
		{"plain json", `{"e":"log","t":"task_1"}`, false},
		{"another key", foreign, false},
		{"one bit changed", string(flipped), false},
		{"no prefix", strings.TrimPrefix(good, sealPrefix), false},
		{"truncated", good[:20], false},
		{"empty", "", false},
		{"not base64", sealPrefix + "!!!!", false},
	} {
		plain, _, err := s.open(c.payload)
		if c.ok != (err == nil) || c.ok && string(plain) != `{"e":"log","t":"task_1"}` {
			t.Errorf("%s: %q, %v", c.name, plain, err)
		}
	}
}

// An event is accepted once, and only within the window of its SentAt.
func TestReplays(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	var r replays
	a, b := nonce{1}, nonce{2}
	for _, c := range []struct {
		name string
		n    nonce
		at   time.Time
		ok   bool
	}{
		{"first", a, now, true},
		{"again", a, now, false},
		{"another", b, now.Add(-30 * time.Second), true},
		{"too old", nonce{3}, now.Add(-replayWindow - time.Second), false},
		{"too far ahead", nonce{4}, now.Add(replayWindow + time.Second), false},
		{"no time", nonce{5}, time.Unix(0, 0), false},
	} {
		at := c.at.UnixNano()
		if c.at.Equal(time.Unix(0, 0)) {
			at = 0
		}
		if got := r.fresh(c.n, at, now); got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, got, c.ok)
		}
	}
	// Later, the nonces are forgotten, and a replay is refused by its age.
	later := now.Add(2 * replayWindow)
	if r.fresh(a, now.UnixNano(), later) {
		t.Error("an old event accepted again")
	}
	if len(r.seen) != 0 {
		t.Errorf("%d nonces kept after the window", len(r.seen))
	}
}

// BenchmarkSeal: what sealing and opening add to one event, a typical progress event
// (about 150 bytes) and the largest one.
func BenchmarkSeal(b *testing.B) {
	s, _ := newSealer(bytes.Repeat([]byte{3}, 32))
	for _, n := range []int{150, MaxPayload} {
		plain := bytes.Repeat([]byte("x"), n)
		b.Run(fmt.Sprint(n, "B"), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				p, err := s.seal(plain)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.open(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
