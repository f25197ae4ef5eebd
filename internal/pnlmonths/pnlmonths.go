// Package pnlmonths keeps the realised pnl per strategy and month (the pnl_months table,
// read by BI tools as bi_pnl_months) equal to the sums over the closed round trips of the
// results stored now. Whoever stores or deletes results calls it in the same transaction:
// Add after a result's trades are written, Remove before results are deleted.
package pnlmonths

import (
	"context"
	"fmt"

	"github.com/backtestd/backtestd/internal/store"
)

var q = store.New()

// Add adds the closed round trips of these tasks' stored results to their months. A task
// without a result (or without closed trades) adds nothing.
func Add(ctx context.Context, db store.DBTX, taskIDs ...string) error {
	return apply(ctx, db, taskIDs, 1)
}

// Remove takes the closed round trips of these tasks' results away from their months; call
// it before deleting the results (or the tasks), in the same transaction.
func Remove(ctx context.Context, db store.DBTX, taskIDs ...string) error {
	return apply(ctx, db, taskIDs, -1)
}

func apply(ctx context.Context, db store.DBTX, taskIDs []string, sign int32) error {
	if len(taskIDs) == 0 {
		return nil
	}
	if err := q.ApplyPnlMonths(ctx, db, store.ApplyPnlMonthsParams{Sign: sign, TaskIds: taskIDs}); err != nil {
		return fmt.Errorf("pnl per month of %d results: %w", len(taskIDs), err)
	}
	return nil
}
