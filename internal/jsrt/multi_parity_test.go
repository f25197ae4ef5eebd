package jsrt

import (
	"encoding/json"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// checkStrategies checks a fixture of several strategies (gen.py's "strategies": what
// each has of its own, its orders, fills, trades, first next and the analyzers of its
// trades) against the engine's result split by the strategy that made each order; the
// broker's figures (equity, final value, drawdown, Sharpe, open orders) are the run's.
// It reports whether the fixture was one of several strategies.
func checkStrategies(t *testing.T, exp *expected, raw []byte, res *engine.Result) bool {
	t.Helper()
	var multi struct {
		Strategies []json.RawMessage `json:"strategies"`
	}
	if err := json.Unmarshal(raw, &multi); err != nil {
		t.Fatal(err)
	}
	if len(multi.Strategies) == 0 {
		return false
	}
	if len(res.Strategies) != len(multi.Strategies) {
		t.Fatalf("%d strategy results, want %d", len(res.Strategies), len(multi.Strategies))
	}
	for i, one := range multi.Strategies {
		sub := *exp
		sub.Trades, sub.Executions, sub.OrderEvents = nil, nil, nil
		if err := json.Unmarshal(one, &sub); err != nil {
			t.Fatal(err)
		}
		var name struct {
			Class string `json:"strategy_class"`
		}
		_ = json.Unmarshal(one, &name)
		got := *res
		got.Executions, got.Trades, got.OrderEvents = nil, nil, nil
		for _, x := range res.Executions {
			if x.Strategy == i {
				got.Executions = append(got.Executions, x)
			}
		}
		for _, x := range res.Trades {
			if x.Strategy == i {
				got.Trades = append(got.Trades, x)
			}
		}
		for _, x := range res.OrderEvents {
			if x.Strategy == i {
				got.OrderEvents = append(got.OrderEvents, x)
			}
		}
		s := res.Strategies[i]
		if s.Name != name.Class {
			t.Errorf("strategy %d is %s, want %s", i, s.Name, name.Class)
		}
		got.FirstNext = s.FirstNext
		got.Analyzers.TradeAnalyzer, got.Analyzers.SQN = s.TradeAnalyzer, s.SQN
		if len(sub.Executions) == 0 {
			t.Errorf("strategy %d (%s) has no fills in the fixture: nothing compared", i, name.Class)
		}
		t.Run(name.Class, func(t *testing.T) { checkParity(t, &sub, &got) })
	}
	return true
}
