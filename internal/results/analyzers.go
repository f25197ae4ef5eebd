package results

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/backtestd/backtestd/internal/engine"
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
	return DecodeAnalyzers(taskID, r.Analyzers)
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
