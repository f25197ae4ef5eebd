package marketdata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/store"
)

// Version is one immutable version of a symbol's bars of one timeframe (migration 00089):
// what GET /api/data/{source}/{symbol}/versions lists.
type Version struct {
	Version      int        `json:"version"`
	Timeframe    string     `json:"timeframe"`
	SHA256       string     `json:"sha256"` // provenance.FingerprintOf the version's bars of the timeframe
	Bars         int64      `json:"bars"`
	First        *time.Time `json:"first"`
	Last         *time.Time `json:"last"`
	CreatedAt    time.Time  `json:"created_at"`
	Changes      Changes    `json:"changes"`
	FirstChanged *time.Time `json:"first_changed"` // earliest bar changed, added or removed; null when none
	// PrunedAt is when retention removed the version's bars (nothing referenced it); null
	// while they are kept.
	PrunedAt *time.Time `json:"pruned_at"`
}

// Changes is what a version changed against the version before.
type Changes struct {
	Changed int64 `json:"changed"`
	Added   int64 `json:"added"`
	Removed int64 `json:"removed"`
}

// Versions lists a symbol's versions, newest first. An unknown source is a 404, an unknown
// symbol a 404. Versions made by the migration carry no fingerprint until first listed:
// it is computed here from the version's bars and kept.
func (svc *Service) Versions(ctx context.Context, source, symbol string) ([]Version, error) {
	if err := svc.CheckSource(ctx, source); err != nil {
		return nil, err
	}
	if _, found, err := svc.storedZone(ctx, source, symbol); err != nil {
		return nil, err
	} else if !found {
		return nil, apperr.NotFound("Unknown symbol '%s' in data source '%s'", symbol, source)
	}
	rows, err := q.ListBarVersions(ctx, svc.st.Pool, store.ListBarVersionsParams{Source: source, Symbol: symbol})
	if err != nil {
		return nil, fmt.Errorf("versions of %s/%s: %w", source, symbol, err)
	}
	out := make([]Version, len(rows))
	for i, r := range rows {
		v := Version{
			Version: int(r.Version), Timeframe: r.Timeframe, Bars: r.Bars, First: utcPtr(r.FirstTs), Last: utcPtr(r.LastTs),
			CreatedAt: r.CreatedAt.UTC(), FirstChanged: utcPtr(r.FirstChanged), PrunedAt: utcPtr(r.PrunedAt),
			Changes: Changes{Changed: r.Changed, Added: r.Added, Removed: r.Removed},
		}
		if r.Sha256 != nil {
			v.SHA256 = *r.Sha256
		} else if r.PrunedAt != nil { // its bars are gone: no fingerprint to make
		} else if v.SHA256, err = svc.fillFingerprint(ctx, source, symbol, r.Timeframe, int(r.Version)); err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// fillFingerprint computes and keeps the fingerprint of a version that has none.
func (svc *Service) fillFingerprint(ctx context.Context, source, symbol, tf string, version int) (string, error) {
	bars, err := readBarsAt(ctx, svc.st.Pool, source, symbol, tf, minDate, maxDate.AddDate(0, 0, 1), version)
	if err != nil {
		return "", err
	}
	sum := provenance.FingerprintOf(bars).SHA256
	if err := q.SetBarVersionSHA256(ctx, svc.st.Pool, store.SetBarVersionSHA256Params{
		Sha256: &sum, Source: source, Symbol: symbol, Version: int32(version), Timeframe: tf,
	}); err != nil {
		return "", fmt.Errorf("keep fingerprint of %s/%s version %d: %w", source, symbol, version, err)
	}
	return sum, nil
}

// LatestVersion is a symbol's newest version number, 0 before its first import.
func LatestVersion(ctx context.Context, db store.DBTX, source, symbol string) (int, error) {
	v, err := q.LatestBarVersion(ctx, db, store.LatestBarVersionParams{Source: source, Symbol: symbol})
	if err != nil {
		return 0, fmt.Errorf("latest version of %s/%s: %w", source, symbol, err)
	}
	return int(v), nil
}

// CheckVersion answers a 400 unless version is one of the symbol's versions (1 up to its
// latest) whose bars retention kept.
func CheckVersion(ctx context.Context, db store.DBTX, source, symbol string, version int) error {
	st, err := q.BarVersionState(ctx, db, store.BarVersionStateParams{Source: source, Symbol: symbol, Version: int32(version)})
	if err != nil {
		return fmt.Errorf("version %d of %s/%s: %w", version, source, symbol, err)
	}
	switch {
	case st.Pruned:
		return apperr.Invalid("Version %d of %s/%s was removed by retention (no kept run referenced it)", version, source, symbol)
	case st.Found:
		return nil
	case st.Latest == 0:
		return apperr.Invalid("Unknown version %d of %s/%s: it has no versions", version, source, symbol)
	}
	return apperr.Invalid("Unknown version %d of %s/%s: its versions are 1 to %d", version, source, symbol, st.Latest)
}

// VersionAt is the version of a symbol current at time at: the newest made at or before
// it. A time before the symbol's first version is a 400.
func VersionAt(ctx context.Context, db store.DBTX, source, symbol string, at time.Time) (int, error) {
	v, err := q.BarVersionAt(ctx, db, store.BarVersionAtParams{Source: source, Symbol: symbol, At: at})
	if err != nil {
		return 0, fmt.Errorf("version of %s/%s at %s: %w", source, symbol, at.Format(time.RFC3339), err)
	}
	if v == 0 {
		return 0, apperr.Invalid("as_of %s is before the first version of %s/%s", at.UTC().Format(time.RFC3339), source, symbol)
	}
	if err := CheckVersion(ctx, db, source, symbol, int(v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// readBarsAt reads bars of one stored timeframe as version held them; version 0 reads the
// latest bars. A caller that knows, in the same snapshot, that version is the symbol's
// latest passes 0: the latest version's bars are the bars table's rows.
func readBarsAt(ctx context.Context, db store.DBTX, source, symbol, tf string, from, until time.Time, version int) ([]engine.Bar, error) {
	if version == 0 {
		return readBars(ctx, db, source, symbol, tf, from, until)
	}
	out := make([]engine.Bar, 0, 1024)
	sorted := true
	err := q.EachBarAt(ctx, db, store.ListBarsAtParams{
		Source: source, Symbol: symbol, Timeframe: tf, FromTs: from, UntilTs: until, Version: int32(version),
	}, func(r store.ListBarsRow) {
		sorted = sorted && (len(out) == 0 || out[len(out)-1].Time.Before(r.Ts))
		out = append(out, engine.Bar{Time: r.Ts, Open: r.Open, High: r.High, Low: r.Low, Close: r.Close, Volume: r.Volume})
	})
	if err != nil {
		return nil, fmt.Errorf("read bars %s/%s/%s version %d: %w", source, symbol, tf, version, err)
	}
	if !sorted { // the replaced rows come after the latest ones
		slices.SortFunc(out, func(a, b engine.Bar) int { return a.Time.Compare(b.Time) })
	}
	return out, nil
}

// written is what storeBars wrote of an import into one timeframe.
type written struct {
	bars           []engine.Bar // the import's bars, ascending
	changed, added int64        // stored bars updated, bars inserted
	first          time.Time    // the earliest bar changed or added
	// appendedAfter is the time of the last bar stored before the import when every bar of
	// the import lies after it (nothing was updated); zero otherwise.
	appendedAfter time.Time
}

// newVersion records version as the symbol's newest after storeBars wrote the bars of tf
// that changed. Its bars, first and last come from bar_ranges (exact inside the
// transaction); removed counts the previous version's bars that the new one lacks (an
// import only inserts and updates, so none: the bars it leaves out stay). Its fingerprint
// is over the timeframe's whole series as it now stands, computed without reading the
// series back when that can be avoided:
//   - the series holds as many bars as the import: then it is the import's bars (each
//     of them is stored, and nothing else), hashed in memory;
//   - the import only appended after the previous version's last bar: the previous
//     version's kept sha256 state (migration 00102) resumes over the appended bars;
//   - otherwise (an import of part of the series that changed or inserted bars inside it)
//     the series is read once in the transaction.
func newVersion(ctx context.Context, tx pgx.Tx, source, symbol, tf string, version int, w written) error {
	rng, err := q.BarRange(ctx, tx, store.BarRangeParams{Source: source, Symbol: symbol, Timeframe: tf})
	if err != nil {
		return fmt.Errorf("stored range of %s/%s/%s: %w", source, symbol, tf, err)
	}
	var prevBars int64
	var prevLast *time.Time
	var prevState []byte
	switch prev, err := q.LastBarVersionOf(ctx, tx, store.LastBarVersionOfParams{Source: source, Symbol: symbol, Timeframe: tf}); {
	case errors.Is(err, store.ErrNotFound): // the timeframe's first version
	case err != nil:
		return fmt.Errorf("previous version of %s/%s/%s: %w", source, symbol, tf, err)
	default:
		prevBars, prevLast, prevState = prev.Bars, prev.LastTs, prev.Sha256State
	}
	var h *provenance.SeriesHash
	switch {
	case rng.Bars == int64(len(w.bars)):
		h = provenance.NewSeriesHash()
		h.Write(w.bars)
	case !w.appendedAfter.IsZero() && prevState != nil && prevLast != nil && prevLast.Equal(w.appendedAfter) && prevBars+w.added == rng.Bars:
		if h, err = provenance.ResumeSeriesHash(prevState); err != nil {
			return err
		}
		h.Write(w.bars)
	default:
		series, err := readBars(ctx, tx, source, symbol, tf, minDate, maxDate.AddDate(0, 0, 1))
		if err != nil {
			return err
		}
		h = provenance.NewSeriesHash()
		h.Write(series)
	}
	state, err := h.State()
	if err != nil {
		return err
	}
	sum := h.Sum()
	p := store.InsertBarVersionParams{
		Source: source, Symbol: symbol, Version: int32(version), Timeframe: tf, Sha256: &sum, Sha256State: state,
		Bars: rng.Bars, FirstTs: &rng.FirstTs, LastTs: &rng.LastTs,
		Changed: w.changed, Added: w.added, FirstChanged: &w.first,
		// Bars leave a timeframe only by SQL outside versioning; never counted below 0.
		Removed: max(prevBars+w.added-rng.Bars, 0),
	}
	if err := q.InsertBarVersion(ctx, tx, p); err != nil {
		return fmt.Errorf("record version %d of %s/%s: %w", version, source, symbol, err)
	}
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
