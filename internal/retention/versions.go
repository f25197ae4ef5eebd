package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/store"
)

// pruneVersions removes the bars of old bar versions (marketdata versions) that nothing
// references: not a symbol's latest, not named by a kept run's provenance, not named by a
// task still to run on it. The version rows stay, marked pruned, and the replaced bars no
// kept version holds are deleted. Bars the latest version holds are never touched. It runs
// after the runs are pruned, so versions only deleted runs named go with them; dryRun
// counts without changing anything, as if the runs created before goneBefore were gone. Studies record no versions (their batches read the
// latest bars), so they keep none.
func (s *Service) pruneVersions(ctx context.Context, dryRun bool, goneBefore time.Time) (int64, error) {
	var n int64
	err := s.st.WithTx(ctx, func(tx pgx.Tx) error {
		rows, err := s.st.PrunableBarVersions(ctx, tx, goneBefore)
		if err != nil {
			return fmt.Errorf("prunable bar versions: %w", err)
		}
		if dryRun {
			n = int64(len(rows))
			return nil
		}
		bySymbol := map[[2]string][]int32{}
		var order [][2]string
		for _, r := range rows {
			k := [2]string{r.Source, r.Symbol}
			if _, ok := bySymbol[k]; !ok {
				order = append(order, k)
			}
			bySymbol[k] = append(bySymbol[k], r.Version)
		}
		for _, k := range order {
			// As an import does: no import of the symbol runs meanwhile.
			if err := s.st.LockSymbolBars(ctx, tx, store.LockSymbolBarsParams{Source: k[0], Symbol: k[1]}); err != nil {
				return fmt.Errorf("lock %s/%s: %w", k[0], k[1], err)
			}
			marked, err := s.st.MarkBarVersionsPruned(ctx, tx, store.MarkBarVersionsPrunedParams{Source: k[0], Symbol: k[1], Versions: bySymbol[k]})
			if err != nil {
				return fmt.Errorf("mark versions of %s/%s: %w", k[0], k[1], err)
			}
			if _, err := s.st.DeleteUnneededBarHistory(ctx, tx, store.DeleteUnneededBarHistoryParams{Source: k[0], Symbol: k[1]}); err != nil {
				return fmt.Errorf("delete replaced bars of %s/%s: %w", k[0], k[1], err)
			}
			n += marked
		}
		return nil
	})
	return n, err
}
