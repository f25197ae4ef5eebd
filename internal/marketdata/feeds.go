package marketdata

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/store"
)

// DefaultFeedCacheBars is how many bars a Feeds keeps in memory over all its entries
// (about 48 bytes each).
const DefaultFeedCacheBars = 1_000_000

// Feeds reads the bars backtests run on and keeps the most recently used in memory: a
// flood of runs on one symbol would otherwise read the same rows from PostgreSQL for every
// run and its submission. An entry is used only while the symbol's bars_version (raised by
// every change of its bars, in the same transaction) is the one it was read with, so an
// import in any process is seen by the next read. It is safe for concurrent use.
type Feeds struct {
	db  *store.Store
	max int

	load  singleflight.Group // runs starting together read the bars once
	zones Zones

	mu      sync.Mutex
	lru     *list.List // of *feedEntry, most recent first
	entries map[feedKey]*list.Element
	size    int // bars held

	printsMu    sync.Mutex
	printsSaved map[string]bool // sha256 of series whose prints are stored (see SavePrints)
}

type feedKey struct {
	source, symbol, tf string
	from, until        int64 // unix nanoseconds
	version            int   // the bar version read (versions.go); 0 the latest
}

type feedEntry struct {
	key     feedKey
	version int64
	bars    []engine.Bar
	data    int // the symbol's bar version (versions.go) the bars are, read in the same snapshot

	printOnce sync.Once // the fingerprint is made on first use, once per cached series
	print     provenance.Fingerprint
}

// fingerprint is the entry's bars' fingerprint, computed once.
func (e *feedEntry) fingerprint() provenance.Fingerprint {
	e.printOnce.Do(func() { e.print = provenance.FingerprintOf(e.bars) })
	return e.print
}

// NewFeeds returns a Feeds over db keeping up to maxBars bars (0: DefaultFeedCacheBars).
func NewFeeds(db *store.Store, maxBars int) *Feeds {
	if maxBars <= 0 {
		maxBars = DefaultFeedCacheBars
	}
	return &Feeds{db: db, max: maxBars, lru: list.New(), entries: map[feedKey]*list.Element{}, printsSaved: map[string]bool{}}
}

// symbolState is what a read of a symbol's bars depends on: the version of its bars and the
// time zone its days are counted in.
type symbolState struct {
	version int64
	loc     *time.Location
}

// state reads symbol's state; found is false when the symbol does not exist.
func (f *Feeds) state(ctx context.Context, source, symbol string) (st symbolState, found bool, err error) {
	row, err := f.db.Queries.BarsVersion(ctx, f.db.Pool, store.BarsVersionParams{Source: source, Symbol: symbol})
	if errors.Is(err, store.ErrNotFound) {
		return symbolState{}, false, nil
	}
	if err != nil {
		return symbolState{}, false, fmt.Errorf("bars version of %s/%s: %w", source, symbol, err)
	}
	loc, err := f.zones.load(row.Timezone)
	if err != nil {
		return symbolState{}, false, fmt.Errorf("time zone of %s/%s: %w", source, symbol, err)
	}
	return symbolState{version: row.BarsVersion, loc: loc}, true, nil
}

// Zone is the time zone of symbol's data (UTC for an unknown symbol).
func (f *Feeds) Zone(ctx context.Context, source, symbol string) (*time.Location, error) {
	st, found, err := f.state(ctx, source, symbol)
	if err != nil || !found {
		return time.UTC, err
	}
	return st.loc, nil
}

// storedEntry returns the stored bars of symbol at timeframe tf on the days start..end (see
// Span), through the cache, with the cache entry they belong to (one not kept when too big).
// The bars are shared with other callers and must not be modified.
func (f *Feeds) storedEntry(ctx context.Context, source, symbol, tf string, version int, st symbolState, start, end time.Time) (*feedEntry, error) {
	from, until := Span(tf, st.loc, start, end)
	key := feedKey{source: source, symbol: symbol, tf: tf, from: from.UnixNano(), until: until.UnixNano(), version: version}
	if e, ok := f.cached(key, st.version); ok {
		return e, nil
	}
	flight := fmt.Sprintf("%q %q %q %d %d %d %d", source, symbol, tf, key.from, key.until, st.version, version)
	v, err, _ := f.load.Do(flight, func() (any, error) {
		if e, ok := f.cached(key, st.version); ok {
			return e, nil
		}
		// Shared by every caller waiting here: one caller's cancellation must not fail
		// the others' reads.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return f.read(ctx, key, from, until)
	})
	if err != nil {
		return nil, err
	}
	return v.(*feedEntry), nil
}

// At returns the bars of symbol at timeframe tf on the days start..end (dates, end
// included; the days of the symbol's time zone for intraday bars), oldest first: the stored
// ones when tf is stored, otherwise aggregated on the symbol's calendar from the coarsest
// stored timeframe below it. A tf finer than every stored one is an apperr 400 naming the
// finest stored; an unknown symbol gives no bars. The slice must not be modified.
func (f *Feeds) At(ctx context.Context, source, symbol, tf string, start, end time.Time) ([]engine.Bar, error) {
	bars, _, _, err := f.at(ctx, source, symbol, tf, start, end, 0)
	return bars, err
}

// AtVersion is At reading version of the symbol's bars (versions.go); 0 reads the latest. A
// version the symbol does not have, or whose bars retention removed, is an apperr 400.
func (f *Feeds) AtVersion(ctx context.Context, source, symbol, tf string, start, end time.Time, version int) ([]engine.Bar, error) {
	if version != 0 {
		if err := CheckVersion(ctx, f.db.Pool, source, symbol, version); err != nil {
			return nil, err
		}
	}
	bars, _, _, err := f.at(ctx, source, symbol, tf, start, end, version)
	return bars, err
}

// AtPrint is At with the provenance of exactly the bars it returns and their per-bar
// prints: the fingerprint is kept with a cached series (made once per series and
// bars_version) and computed afresh for aggregated bars.
func (f *Feeds) AtPrint(ctx context.Context, source, symbol, tf string, start, end time.Time) ([]engine.Bar, provenance.Feed, []provenance.Print, error) {
	return f.AtPrintVersion(ctx, source, symbol, tf, start, end, 0)
}

// AtPrintVersion is AtPrint reading version of the symbol's bars (versions.go); 0 reads the
// latest. A version the symbol does not have is an apperr 400.
func (f *Feeds) AtPrintVersion(ctx context.Context, source, symbol, tf string, start, end time.Time, version int) ([]engine.Bar, provenance.Feed, []provenance.Print, error) {
	if version != 0 {
		if err := CheckVersion(ctx, f.db.Pool, source, symbol, version); err != nil {
			return nil, provenance.Feed{}, nil, err
		}
	}
	bars, e, loc, err := f.at(ctx, source, symbol, tf, start, end, version)
	if err != nil {
		return nil, provenance.Feed{}, nil, err
	}
	var fp provenance.Fingerprint
	if e != nil && e.key.tf == tf {
		fp = e.fingerprint()
	} else {
		fp = provenance.FingerprintOf(bars)
	}
	feed := provenance.FeedOf(symbol, tf, loc.String(), bars, fp)
	if e != nil {
		feed.Version = e.data
	}
	return bars, feed, fp.Prints, nil
}

// at is At with the cache entry of the stored bars they are or are aggregated from (nil
// when none) and the symbol's time zone.
func (f *Feeds) at(ctx context.Context, source, symbol, tf string, start, end time.Time, version int) ([]engine.Bar, *feedEntry, *time.Location, error) {
	if err := CheckTimeframe(tf); err != nil {
		return nil, nil, time.UTC, err
	}
	st, found, err := f.state(ctx, source, symbol)
	if err != nil || !found {
		return []engine.Bar{}, nil, time.UTC, err
	}
	// Bars at tf itself mean tf is stored, and so is what it is made from: the usual case
	// costs no look-up of the stored timeframes.
	if e, err := f.storedEntry(ctx, source, symbol, tf, version, st, start, end); err != nil || len(e.bars) > 0 {
		return entryBars(e), e, st.loc, err
	}
	src, err := f.sourceTimeframe(ctx, source, symbol, tf)
	if err != nil || src == "" {
		return []engine.Bar{}, nil, st.loc, err
	}
	e, err := f.storedEntry(ctx, source, symbol, src, version, st, start, end)
	if err != nil || src == tf {
		return entryBars(e), e, st.loc, err
	}
	// The entry the aggregate is made from goes back too, for its version; its key's
	// timeframe tells it from the bars at tf.
	return Aggregate(e.bars, tf, calendar(src, st.loc)), e, st.loc, nil
}

func entryBars(e *feedEntry) []engine.Bar {
	if e == nil {
		return nil
	}
	return e.bars
}

// AnyAt reports whether At would return bars, with one indexed lookup per timeframe tried
// instead of reading (or keeping) them.
func (f *Feeds) AnyAt(ctx context.Context, source, symbol, tf string, start, end time.Time) (bool, error) {
	if err := CheckTimeframe(tf); err != nil {
		return false, err
	}
	st, found, err := f.state(ctx, source, symbol)
	if err != nil || !found {
		return false, err
	}
	if ok, err := f.any(ctx, source, symbol, tf, st.loc, start, end); err != nil || ok { // as in At
		return ok, err
	}
	src, err := f.sourceTimeframe(ctx, source, symbol, tf)
	if err != nil || src == "" {
		return false, err
	}
	return f.any(ctx, source, symbol, src, st.loc, start, end)
}

func (f *Feeds) any(ctx context.Context, source, symbol, tf string, loc *time.Location, start, end time.Time) (bool, error) {
	from, until := Span(tf, loc, start, end)
	ok, err := f.db.Queries.HasBars(ctx, f.db.Pool, store.HasBarsParams{Source: source, Symbol: symbol, Timeframe: tf, FromTs: from, UntilTs: until})
	if err != nil {
		return false, fmt.Errorf("bars of %s/%s: %w", source, symbol, err)
	}
	return ok, nil
}

// sourceTimeframe is the stored timeframe bars at tf are made from; "" when none is stored.
func (f *Feeds) sourceTimeframe(ctx context.Context, source, symbol, tf string) (string, error) {
	stored, err := storedTimeframes(ctx, f.db.Pool, source, symbol)
	if err != nil || len(stored) == 0 {
		return "", err
	}
	src, err := readFrom(stored, symbol, tf)
	if err != nil {
		return "", apperr.Invalid("%s", err.Error())
	}
	return src, nil
}

// read loads the bars and the version they belong to from one snapshot and keeps them.
func (f *Feeds) read(ctx context.Context, key feedKey, from, until time.Time) (*feedEntry, error) {
	var version int64
	var data int
	var bars []engine.Bar
	err := f.db.WithSnapshot(ctx, func(tx pgx.Tx) error {
		var err error
		row, err := f.db.Queries.BarsVersion(ctx, tx, store.BarsVersionParams{Source: key.source, Symbol: key.symbol})
		if errors.Is(err, store.ErrNotFound) {
			bars = []engine.Bar{}
			return nil
		}
		if err != nil {
			return fmt.Errorf("bars version of %s/%s: %w", key.source, key.symbol, err)
		}
		version = row.BarsVersion
		read := key.version
		if data = key.version; data == 0 {
			data = int(row.DataVersion)
		} else if data == int(row.DataVersion) { // the latest version: the bars table's rows
			read = 0
		}
		bars, err = readBarsAt(ctx, tx, key.source, key.symbol, key.tf, from, until, read)
		return err
	})
	if err != nil {
		return nil, err
	}
	e := &feedEntry{key: key, version: version, bars: bars, data: data}
	f.keep(e)
	return e, nil
}

func (f *Feeds) cached(key feedKey, version int64) (*feedEntry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	el, ok := f.entries[key]
	if !ok || el.Value.(*feedEntry).version != version {
		return nil, false
	}
	f.lru.MoveToFront(el)
	return el.Value.(*feedEntry), true
}

func (f *Feeds) keep(e *feedEntry) {
	if len(e.bars) > f.max {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.entries[e.key]; ok {
		old := el.Value.(*feedEntry)
		if old.version > e.version { // a newer read got here first
			return
		}
		f.size -= len(old.bars)
		f.lru.Remove(el)
	}
	f.entries[e.key] = f.lru.PushFront(e)
	f.size += len(e.bars)
	for f.size > f.max {
		last := f.lru.Back()
		old := last.Value.(*feedEntry)
		f.lru.Remove(last)
		delete(f.entries, old.key)
		f.size -= len(old.bars)
	}
}
