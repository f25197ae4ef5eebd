package provenance

import (
	"hash/fnv"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestFingerprint: the per-bar hash is FNV-1a of the canonical record, the sha256 changes
// with any one bit of a bar, and the prints survive their encoding.
func TestFingerprint(t *testing.T) {
	bars := engine.RandomWalk(300, 1)
	fp := FingerprintOf(bars)
	rec := record(bars[7])
	h := fnv.New64a()
	h.Write(rec[:])
	if fp.Prints[7].Hash != h.Sum64() || fp.Prints[7].Time != bars[7].Time.UnixNano() {
		t.Fatalf("print %+v", fp.Prints[7])
	}
	if again := FingerprintOf(bars); again.SHA256 != fp.SHA256 {
		t.Fatal("not deterministic")
	}
	changed := append([]engine.Bar(nil), bars...)
	changed[299].Volume++
	if FingerprintOf(changed).SHA256 == fp.SHA256 {
		t.Fatal("a changed volume keeps the sha256")
	}
	back, err := DecodePrints(EncodePrints(fp.Prints))
	if err != nil || len(back) != len(fp.Prints) || back[299] != fp.Prints[299] {
		t.Fatalf("decode: %v", err)
	}
	if _, err := DecodePrints(make([]byte, 17)); err == nil {
		t.Fatal("17 bytes decoded")
	}
	if FingerprintOf(nil).SHA256 != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal("empty series: not the sha256 of nothing")
	}
}
