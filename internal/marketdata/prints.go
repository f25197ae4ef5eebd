package marketdata

import (
	"context"
	"errors"
	"fmt"

	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/store"
)

// maxSavedPrints bounds the set of series SavePrints remembers as stored.
const maxSavedPrints = 10_000

// SavePrints stores the per-bar prints of the series with sha256 sum, once: the table is
// keyed by the sum, and this Feeds remembers the sums it stored, so the runs on one series
// write its prints once (a run's provenance records only the sum).
func (f *Feeds) SavePrints(ctx context.Context, sum string, prints []provenance.Print) error {
	f.printsMu.Lock()
	done := f.printsSaved[sum]
	f.printsMu.Unlock()
	if done {
		return nil
	}
	if err := f.db.Queries.SaveBarPrints(ctx, f.db.Pool, store.SaveBarPrintsParams{Sha256: sum, Prints: provenance.EncodePrints(prints)}); err != nil {
		return fmt.Errorf("save bar prints %s: %w", sum, err)
	}
	f.printsMu.Lock()
	defer f.printsMu.Unlock()
	if len(f.printsSaved) >= maxSavedPrints {
		clear(f.printsSaved)
	}
	f.printsSaved[sum] = true
	return nil
}

// Prints reads the stored per-bar prints of the series with sha256 sum; found is false when
// none are stored (a run recorded before prints were kept).
func Prints(ctx context.Context, db *store.Store, sum string) (prints []provenance.Print, found bool, err error) {
	raw, err := db.Queries.BarPrints(ctx, db.Pool, sum)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("bar prints %s: %w", sum, err)
	}
	prints, err = provenance.DecodePrints(raw)
	return prints, err == nil, err
}
