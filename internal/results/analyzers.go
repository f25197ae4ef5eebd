package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/store"
)

// Analyzers returns the analyzers taskID's run computed (engine.Analyzers: Sharpe, drawdown,
// SQN, trade analyzer, the returns family and the PyFolio report), as stored with its
// result. A result stored before an analyzer was added has it empty: its lists empty, its
// figures null or zero.
func (svc *Service) Analyzers(ctx context.Context, taskID string) (engine.Analyzers, error) {
	r, err := svc.result(ctx, taskID)
	if err != nil {
		return engine.Analyzers{}, err
	}
	a, err := DecodeAnalyzers(taskID, r.Analyzers)
	if err != nil {
		return a, err
	}
	return a, svc.RestorePositions(ctx, taskID, &a)
}

// RestorePositions puts back into a the PyFolio positions that were stored beside the
// equity curve rather than in the analyzers document (see Save): each row the feeds'
// values, then the curve's cash; and the PyFolio transactions, derived from the stored
// fills. Analyzers that hold their positions, or have no feeds, are left as they are.
func (svc *Service) RestorePositions(ctx context.Context, taskID string, a *engine.Analyzers) error {
	pf := &a.PyFolio
	w := len(pf.Symbols)
	if w == 0 || pf.Positions.Len() > 0 {
		return nil
	}
	r, err := q.GetResultPositions(ctx, svc.db, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("positions of %s: %w", taskID, err)
	}
	n := len(r.Cash)
	if len(r.Positions) != (w-1)*n {
		return fmt.Errorf("positions of %s: %d values for %d points of %d feeds", taskID, len(r.Positions), n, w-1)
	}
	flat := make([]float64, 0, w*n)
	for i, c := range r.Cash {
		flat = append(flat, r.Positions[i*(w-1):(i+1)*(w-1)]...)
		flat = append(flat, c)
	}
	pf.Positions = engine.Rows{Width: w, Flat: flat}
	execs, err := q.ListResultExecutions(ctx, svc.db, taskID)
	if err != nil {
		return fmt.Errorf("executions of %s: %w", taskID, err)
	}
	xs := mapSlice(execs, execution)
	for i := range xs {
		xs[i].Time = xs[i].Time.UTC()
	}
	pf.Transactions = engine.Transactions(pf.Symbols[:w-1], xs)
	return nil
}

// DecodeAnalyzers reads stored analyzers, with every list of the answer non-nil (JSON []).
func DecodeAnalyzers(taskID string, raw json.RawMessage) (engine.Analyzers, error) {
	var a engine.Analyzers
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return a, fmt.Errorf("analyzers of %s: %w", taskID, err)
		}
	}
	for _, l := range []*[]engine.PeriodValue{&a.AnnualReturn, &a.Calmar.ByMonth, &a.TimeReturn.Months, &a.TimeReturn.Years} {
		if *l == nil {
			*l = []engine.PeriodValue{}
		}
	}
	pf := &a.PyFolio
	if pf.Symbols == nil {
		pf.Symbols = []string{}
	}
	if pf.Transactions == nil {
		pf.Transactions = []engine.Transaction{}
	}
	return a, nil
}
