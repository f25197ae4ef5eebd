package events

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/store"
)

// PostgreSQL has no privilege on LISTEN or NOTIFY: any role that can connect, a BI login
// included, may listen on Channel and notify on it. So every payload is sealed with
// AES-256-GCM under a key that only the service's role can read (backtestd_private.event_key,
// migration 00087): a listener without the key reads nothing, and a notification that does
// not open under the key (another role's NOTIFY, an old process's plain JSON) is dropped.
// The channel name is the associated data, so a payload sealed for it is not accepted on
// another. A payload is sealPrefix and the base64 (no padding) of nonce || ciphertext.

// sealPrefix starts every sealed payload: the format's version.
const sealPrefix = "1."

// MaxNotify is the largest NOTIFY payload PostgreSQL accepts (it refuses 8,000 bytes).
const MaxNotify = 7999

// sealedLen is the length of the payload that seals n bytes.
func sealedLen(n int) int {
	return len(sealPrefix) + base64.RawStdEncoding.EncodedLen(12+n+16)
}

// sealer seals and opens payloads with the channel's key.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("event key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("event key: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal returns the payload carrying plain. Nonces are random: 96 bits, which GCM allows
// for far more messages than a deployment sends under one key.
func (s *sealer) seal(plain []byte) (string, error) {
	buf := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("event nonce: %w", err)
	}
	buf = s.aead.Seal(buf, buf, plain, []byte(Channel))
	return sealPrefix + base64.RawStdEncoding.EncodeToString(buf), nil
}

// errUnsealed is a payload that the service did not seal with the channel's key.
var errUnsealed = errors.New("payload not sealed with the service's event key")

// nonce is a sealed payload's nonce, which the listener remembers to refuse a replay.
type nonce [12]byte

// open returns what payload carries and its nonce, or errUnsealed.
func (s *sealer) open(payload string) ([]byte, nonce, error) {
	var n nonce
	if len(payload) < len(sealPrefix) || payload[:len(sealPrefix)] != sealPrefix {
		return nil, n, errUnsealed
	}
	raw, err := base64.RawStdEncoding.DecodeString(payload[len(sealPrefix):])
	if err != nil || s.aead.NonceSize() != len(n) || len(raw) < len(n)+s.aead.Overhead() {
		return nil, n, errUnsealed
	}
	plain, err := s.aead.Open(nil, raw[:len(n)], raw[len(n):], []byte(Channel))
	if err != nil {
		return nil, n, errUnsealed
	}
	copy(n[:], raw)
	return plain, n, nil
}

// replayWindow is how old (or how far ahead, for clocks that differ) by its SentAt an
// event may be when it arrives: a sealed payload seen before, or outside the window, is a
// replay (a role that listened sends it again) and is dropped. Events arrive within
// milliseconds; the window allows for processes whose clocks differ by up to a minute.
const replayWindow = time.Minute

// replays remembers the nonces of the events accepted within the window.
type replays struct {
	seen      map[nonce]time.Time // nonce -> when it may be forgotten
	nextSweep time.Time
}

// fresh reports whether the event sealed with n and sent at sentAt (unix nanoseconds) is
// seen for the first time within the window, and remembers it.
func (r *replays) fresh(n nonce, sentAt int64, now time.Time) bool {
	if r.seen == nil {
		r.seen = map[nonce]time.Time{}
	}
	if now.After(r.nextSweep) {
		for k, until := range r.seen {
			if now.After(until) {
				delete(r.seen, k)
			}
		}
		r.nextSweep = now.Add(replayWindow / 4)
	}
	at := time.Unix(0, sentAt)
	if sentAt == 0 || now.Sub(at) > replayWindow || at.Sub(now) > replayWindow {
		return false
	}
	if _, dup := r.seen[n]; dup {
		return false
	}
	// Forgotten once its SentAt is out of the window: a later replay is refused by age.
	r.seen[n] = at.Add(replayWindow)
	return true
}

// loadSealer reads the channel's key through db, storing a new random one first if the
// database has none: the first process to ask makes it, and every process sharing the
// database gets the same one.
func loadSealer(ctx context.Context, db store.DBTX) (*sealer, error) {
	q := store.New()
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("event key: %w", err)
	}
	if err := q.EnsureEventKey(ctx, db, fresh); err != nil {
		return nil, fmt.Errorf("store the event key: %w", err)
	}
	key, err := q.EventKey(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read the event key: %w", err)
	}
	return newSealer(key)
}

// keyring holds a publisher's sealer, loaded through db on first use (and tried again
// on the next publication if that failed).
type keyring struct {
	db store.DBTX
	mu sync.Mutex
	s  *sealer
}

func (k *keyring) get(ctx context.Context) (*sealer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.s == nil {
		s, err := loadSealer(ctx, k.db)
		if err != nil {
			return nil, err
		}
		k.s = s
	}
	return k.s, nil
}
