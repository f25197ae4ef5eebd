package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/findings"
	"github.com/backtestd/backtestd/internal/store"
)

// SaveFindings stores a run's findings with its result (in the transaction that stores it).
func SaveFindings(ctx context.Context, db store.DBTX, taskID string, fs []findings.Finding) error {
	if fs == nil {
		fs = []findings.Finding{}
	}
	raw, err := json.Marshal(fs)
	if err != nil {
		return fmt.Errorf("findings of %s: %w", taskID, err)
	}
	if err := q.SetResultFindings(ctx, db, store.SetResultFindingsParams{TaskID: taskID, Findings: raw}); err != nil {
		return fmt.Errorf("save findings of %s: %w", taskID, err)
	}
	return nil
}

// notComputed stands for the run's own findings of a result stored before they existed.
var notComputed = findings.Finding{
	ID: "not_computed", Severity: findings.Info, Title: "Run findings not computed",
	Detail: "This result was stored before findings were computed at completion: run the backtest again (or reproduce it) for them.",
}

// Findings returns what taskID's result should be read with: the run's own findings, stored
// when it completed, then what the look-ahead checks of its strategy version say. The
// version has look-ahead when any check of it found some (the runs list's rule), and the
// latest such check gives the detail; otherwise the check on the run's own data and
// timeframe does, else the latest.
func (svc *Service) Findings(ctx context.Context, taskID string) ([]findings.Finding, error) {
	row, err := q.ResultFindings(ctx, svc.db, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(taskID)
	}
	if err != nil {
		return nil, fmt.Errorf("findings of %s: %w", taskID, err)
	}
	out := []findings.Finding{}
	if row.Findings == nil {
		out = append(out, notComputed)
	} else if err := json.Unmarshal(row.Findings, &out); err != nil {
		return nil, fmt.Errorf("stored findings of %s: %w", taskID, err)
	}
	checks, err := q.LookaheadChecks(ctx, svc.db, store.LookaheadChecksParams{StrategyID: row.StrategyID, StrategyVersion: row.StrategyVersion})
	if err != nil {
		return nil, fmt.Errorf("look-ahead checks of %s: %w", taskID, err)
	}
	return append(out, findings.OfCheck(checkOf(checks, row))...), nil
}

func checkOf(checks []store.LookaheadCheck, run store.ResultFindingsRow) *findings.Check {
	if len(checks) == 0 {
		return nil
	}
	found := slices.IndexFunc(checks, func(c store.LookaheadCheck) bool { return c.Lookahead })
	own := slices.IndexFunc(checks, func(c store.LookaheadCheck) bool {
		return c.DataSource == run.DataSource && c.Timeframe == run.Timeframe && slices.Equal(c.Symbols, run.Symbols)
	})
	pick := checks[0] // the latest (checks come newest first)
	switch {
	case found >= 0: // the latest that found look-ahead tells what
		pick = checks[found]
	case own >= 0:
		pick = checks[own]
	}
	c := &findings.Check{LookAhead: found >= 0, Cuts: int(pick.Cuts), CheckedAt: pick.CheckedAt}
	var rep bias.Report
	if json.Unmarshal(pick.Report, &rep) == nil {
		c.Report = &rep
	}
	return c
}
