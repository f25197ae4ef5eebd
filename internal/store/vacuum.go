package store

import (
	"context"
	"fmt"
)

// resultTables are the tables deleting runs and studies frees space in.
const resultTables = "tasks, task_attempts, results, result_trades, result_executions, result_statistics, " +
	"result_equity_series, task_log_chunks, studies, study_trials, study_trial_params, study_folds"

// VacuumResults vacuums the tables runs and studies are stored in, index cleanup included,
// so that the space deleted rows held is reused by new results at once instead of after
// autovacuum's next visit. It takes no lock that stops reads or writes. VACUUM cannot run
// in a transaction or through sqlc, hence the plain statement.
func (s *Store) VacuumResults(ctx context.Context) error {
	if _, err := s.Pool.Exec(ctx, "VACUUM (INDEX_CLEANUP ON) "+resultTables); err != nil {
		return fmt.Errorf("vacuum result tables: %w", err)
	}
	return nil
}
