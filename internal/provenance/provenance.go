// Package provenance records what a backtest run read and what ran it: the hash of its
// strategy code, the engine build, an exact fingerprint of every bar series it read, and
// its resolved settings and parameters. Two runs with equal provenance give equal results
// (the engine is deterministic); where results differ, comparing provenance says why.
package provenance

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// Provenance is one run's record.
type Provenance struct {
	CodeSHA256    string         `json:"code_sha256"`    // hex sha256 of the version's code text
	EngineVersion string         `json:"engine_version"` // Engine() of the process that ran it
	Data          []Feed         `json:"data"`           // the feeds, then the benchmark when it is not one
	Settings      Settings       `json:"settings"`
	Parameters    map[string]any `json:"parameters"` // declared defaults overlaid by the run's values
}

// Feed is the fingerprint of one bar series a run read.
type Feed struct {
	Symbol    string     `json:"symbol"`
	Timeframe string     `json:"timeframe"`
	Timezone  string     `json:"timezone"`
	Bars      int        `json:"bars"`
	First     *time.Time `json:"first"`
	Last      *time.Time `json:"last"`
	SHA256    string     `json:"sha256"` // see Fingerprint
	// Version is the symbol's bar version read (marketdata versions); absent in runs made
	// before versions, or whose bars the version migration could not match.
	Version int `json:"version,omitempty"`
}

// Settings are a run's resolved settings, defaults included.
type Settings struct {
	StrategyID      string   `json:"strategy_id"`
	StrategyVersion int      `json:"strategy_version"`
	DataSource      string   `json:"data_source"`
	Symbols         []string `json:"symbols"`
	Benchmark       string   `json:"benchmark"`
	Timeframe       string   `json:"timeframe"`
	Timezone        string   `json:"timezone"`
	StartDate       string   `json:"start_date"`
	EndDate         string   `json:"end_date"`
	InitialCash     float64  `json:"initial_cash"`
	Commission      float64  `json:"commission"`
}

// CodeSHA256 is the hex sha256 of a strategy's code text.
func CodeSHA256(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// Engine names the build of this binary: its module version, or "devel" when it has none
// (built from a checkout), followed by "+" and the VCS revision when the build recorded one
// ("+dirty" marks uncommitted changes).
func Engine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
		if rev != "" {
			v += "+" + rev
			if dirty {
				v += "+dirty"
			}
		}
	}
	return v
}

// Print is one bar's entry in a series' per-bar prints: its time and a 64-bit hash of its
// canonical encoding. Comparing two series' prints by time names the bars that changed.
type Print struct {
	Time int64  // unix nanoseconds
	Hash uint64 // FNV-1a of the bar's canonical record
}

// Fingerprint is a bar series' sha256 and per-bar prints.
type Fingerprint struct {
	SHA256 string
	Prints []Print
}

// recordSize is the canonical encoding of one bar: its UTC time in unix nanoseconds, open,
// high, low and close as IEEE-754 bits, and volume, each 8 bytes little-endian.
const recordSize = 48

// FingerprintOf is the fingerprint of exactly bars: sha256 over their canonical records, and
// the per-bar prints. 5,000 bars take well under a millisecond; Feeds keeps the answer with
// its cached series.
func FingerprintOf(bars []engine.Bar) Fingerprint {
	h := sha256.New()
	prints := make([]Print, len(bars))
	buf := make([]byte, 0, 64*recordSize)
	for i, b := range bars {
		rec := record(b)
		buf = append(buf, rec[:]...)
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		prints[i] = Print{Time: b.Time.UnixNano(), Hash: fnv1a(rec[:])}
	}
	h.Write(buf)
	return Fingerprint{SHA256: hex.EncodeToString(h.Sum(nil)), Prints: prints}
}

// fnv1a is 64-bit FNV-1a (as hash/fnv's, without its allocation per bar).
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func record(b engine.Bar) [recordSize]byte {
	var r [recordSize]byte
	binary.LittleEndian.PutUint64(r[0:], uint64(b.Time.UnixNano()))
	binary.LittleEndian.PutUint64(r[8:], math.Float64bits(b.Open))
	binary.LittleEndian.PutUint64(r[16:], math.Float64bits(b.High))
	binary.LittleEndian.PutUint64(r[24:], math.Float64bits(b.Low))
	binary.LittleEndian.PutUint64(r[32:], math.Float64bits(b.Close))
	binary.LittleEndian.PutUint64(r[40:], uint64(b.Volume))
	return r
}

// FeedOf describes a series read for symbol from its bars and fingerprint.
func FeedOf(symbol, timeframe, zone string, bars []engine.Bar, fp Fingerprint) Feed {
	f := Feed{Symbol: symbol, Timeframe: timeframe, Timezone: zone, Bars: len(bars), SHA256: fp.SHA256}
	if len(bars) > 0 {
		first, last := bars[0].Time.UTC(), bars[len(bars)-1].Time.UTC()
		f.First, f.Last = &first, &last
	}
	return f
}

// EncodePrints is prints as stored: 16 bytes little-endian per bar, time then hash.
func EncodePrints(prints []Print) []byte {
	out := make([]byte, 16*len(prints))
	for i, p := range prints {
		binary.LittleEndian.PutUint64(out[16*i:], uint64(p.Time))
		binary.LittleEndian.PutUint64(out[16*i+8:], p.Hash)
	}
	return out
}

// DecodePrints reads what EncodePrints wrote.
func DecodePrints(b []byte) ([]Print, error) {
	if len(b)%16 != 0 {
		return nil, fmt.Errorf("bar prints: %d bytes is not a whole number of 16-byte entries", len(b))
	}
	out := make([]Print, len(b)/16)
	for i := range out {
		out[i] = Print{Time: int64(binary.LittleEndian.Uint64(b[16*i:])), Hash: binary.LittleEndian.Uint64(b[16*i+8:])}
	}
	return out, nil
}

// BarChange is how two series' bars differ: by time, bars whose values changed, bars only in
// the new series and bars only in the old; First is the earliest time of any of them.
type BarChange struct {
	Changed, Added, Removed int
	First                   time.Time
}

// Count is how many bars differ.
func (c BarChange) Count() int { return c.Changed + c.Added + c.Removed }

// ComparePrints compares an old series' prints with a new one's (each in time order).
func ComparePrints(old, cur []Print) BarChange {
	var c BarChange
	first := int64(math.MaxInt64)
	note := func(t int64) { first = min(first, t) }
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j >= len(cur) || (i < len(old) && old[i].Time < cur[j].Time):
			c.Removed++
			note(old[i].Time)
			i++
		case i >= len(old) || cur[j].Time < old[i].Time:
			c.Added++
			note(cur[j].Time)
			j++
		default:
			if old[i].Hash != cur[j].Hash {
				c.Changed++
				note(old[i].Time)
			}
			i++
			j++
		}
	}
	if c.Count() > 0 {
		c.First = time.Unix(0, first).UTC()
	}
	return c
}
