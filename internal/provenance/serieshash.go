package provenance

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/backtestd/backtestd/internal/engine"
)

// SeriesHash computes FingerprintOf's sha256 bar by bar, without the per-bar prints. Its
// state after a series' last bar can be kept (State) and resumed (ResumeSeriesHash) to
// fingerprint the same series with bars appended from the appended bars alone.
type SeriesHash struct {
	h   hash.Hash
	buf []byte
}

// NewSeriesHash starts the fingerprint of an empty series.
func NewSeriesHash() *SeriesHash {
	return &SeriesHash{h: sha256.New(), buf: make([]byte, 0, 64*recordSize)}
}

// ResumeSeriesHash continues a fingerprint from a State.
func ResumeSeriesHash(state []byte) (*SeriesHash, error) {
	s := NewSeriesHash()
	if err := s.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("resume series hash: %w", err)
	}
	return s, nil
}

// Write adds bars, which follow the ones written before, to the series.
func (s *SeriesHash) Write(bars []engine.Bar) {
	for _, b := range bars {
		rec := record(b)
		s.buf = append(s.buf, rec[:]...)
		if len(s.buf) == cap(s.buf) {
			s.h.Write(s.buf)
			s.buf = s.buf[:0]
		}
	}
}

func (s *SeriesHash) flush() {
	s.h.Write(s.buf)
	s.buf = s.buf[:0]
}

// State is the hash's state after the bars written so far, for ResumeSeriesHash.
func (s *SeriesHash) State() ([]byte, error) {
	s.flush()
	st, err := s.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("series hash state: %w", err)
	}
	return st, nil
}

// Sum is the hex sha256 of the bars written so far: FingerprintOf(those bars).SHA256.
func (s *SeriesHash) Sum() string {
	s.flush()
	return hex.EncodeToString(s.h.Sum(nil))
}
