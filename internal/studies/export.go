package studies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/backtestd/backtestd/internal/tabular"
)

// ResultsTable is the whole leaderboard (Results with every combination, in its order) as
// one table for a notebook: a combination a row, its parameters as columns (named as the
// parameters are, "param_<name>" where a name is one of the fixed columns), then its status,
// objective, Pareto rank and run summary; figures a combination lacks are null.
func (s *Service) ResultsTable(ctx context.Context, id, fold, sort, order, pareto string) (tabular.Table, error) {
	b, err := s.Results(ctx, id, fold, sort, order, pareto, 0, math.MaxInt32)
	if err != nil {
		return tabular.Table{}, err
	}
	trials := b.Trials
	col := func(name string, kind tabular.Kind, nullable bool, f func(t *RankedTrial) any) tabular.Column {
		return tabular.Column{Name: name, Kind: kind, Nullable: nullable, Cell: func(i int) any { return f(&trials[i]) }}
	}
	fl := func(name string, get func(t *RankedTrial) *float64) tabular.Column {
		return col(name, tabular.Float, true, func(t *RankedTrial) any {
			if v := get(t); v != nil {
				return *v
			}
			return nil
		})
	}
	in := func(name string, get func(t *RankedTrial) *int32) tabular.Column {
		return col(name, tabular.Int, true, func(t *RankedTrial) any {
			if v := get(t); v != nil {
				return int64(*v)
			}
			return nil
		})
	}
	fixed := []tabular.Column{
		col("status", tabular.String, false, func(t *RankedTrial) any { return t.Status }),
		col("error", tabular.String, true, func(t *RankedTrial) any {
			if t.Error == nil {
				return nil
			}
			return *t.Error
		}),
		fl("objective", func(t *RankedTrial) *float64 { return t.Objective }),
		col("pareto_rank", tabular.Int, true, func(t *RankedTrial) any {
			if t.ParetoRank == nil {
				return nil
			}
			return int64(*t.ParetoRank)
		}),
		fl("initial_cash", func(t *RankedTrial) *float64 { return t.InitialCash }),
		fl("final_value", func(t *RankedTrial) *float64 { return t.FinalValue }),
		fl("total_return", func(t *RankedTrial) *float64 { return t.TotalReturn }),
		fl("annual_return", func(t *RankedTrial) *float64 { return t.AnnualReturn }),
		fl("sharpe_ratio", func(t *RankedTrial) *float64 { return t.SharpeRatio }),
		fl("max_drawdown", func(t *RankedTrial) *float64 { return t.MaxDrawdown }),
		fl("max_drawdown_pct", func(t *RankedTrial) *float64 { return t.MaxDrawdownPct }),
		in("max_drawdown_duration", func(t *RankedTrial) *int32 { return t.MaxDrawdownDuration }),
		in("total_trades", func(t *RankedTrial) *int32 { return t.TotalTrades }),
		in("won", func(t *RankedTrial) *int32 { return t.Won }),
		in("lost", func(t *RankedTrial) *int32 { return t.Lost }),
		fl("win_rate", func(t *RankedTrial) *float64 { return t.WinRate }),
		fl("profit_factor", func(t *RankedTrial) *float64 { return t.ProfitFactor }),
		fl("avg_win", func(t *RankedTrial) *float64 { return t.AvgWin }),
		fl("avg_loss", func(t *RankedTrial) *float64 { return t.AvgLoss }),
		fl("sqn", func(t *RankedTrial) *float64 { return t.Sqn }),
		in("bars", func(t *RankedTrial) *int32 { return t.Bars }),
	}
	params, err := paramColumns(trials, fixed)
	if err != nil {
		return tabular.Table{}, fmt.Errorf("parameters of %s: %w", id, err)
	}
	cols := append([]tabular.Column{col("idx", tabular.Int, false, func(t *RankedTrial) any { return int64(t.Idx) })}, params...)
	return tabular.Table{Rows: len(trials), Columns: append(cols, fixed...)}, nil
}

// paramColumns are the combinations' parameters as columns, by name: a number column
// (integer where every value is whole) or a boolean one where every value is, text
// otherwise (a value that is not a string as its JSON); null where a combination lacks it.
func paramColumns(trials []RankedTrial, fixed []tabular.Column) ([]tabular.Column, error) {
	values := make([]map[string]any, len(trials))
	var names []string
	for i := range trials {
		d := json.NewDecoder(bytes.NewReader(trials[i].Params))
		d.UseNumber()
		if err := d.Decode(&values[i]); err != nil {
			return nil, fmt.Errorf("combination %d: %w", trials[i].Idx, err)
		}
		for k := range values[i] {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	taken := func(n string) bool {
		return n == "idx" || slices.ContainsFunc(fixed, func(c tabular.Column) bool { return c.Name == n })
	}
	out := make([]tabular.Column, 0, len(names))
	for _, name := range names {
		kind, nullable := paramKind(values, name)
		col := tabular.Column{Name: name, Kind: kind, Nullable: nullable, Cell: func(i int) any {
			v, ok := values[i][name]
			if !ok || v == nil {
				return nil
			}
			return paramCell(v, kind)
		}}
		if taken(name) {
			col.Name = "param_" + name
		}
		out = append(out, col)
	}
	return out, nil
}

func paramKind(values []map[string]any, name string) (kind tabular.Kind, nullable bool) {
	ints, nums, bools, seen := true, true, true, false
	for _, m := range values {
		v, ok := m[name]
		if !ok || v == nil {
			nullable = true
			continue
		}
		seen = true
		n, isNum := v.(json.Number)
		_, isBool := v.(bool)
		nums, bools = nums && isNum, bools && isBool
		if _, err := n.Int64(); !isNum || err != nil {
			ints = false
		}
	}
	switch {
	case !seen:
		return tabular.String, true
	case ints && nums:
		return tabular.Int, nullable
	case nums:
		return tabular.Float, nullable
	case bools:
		return tabular.Bool, nullable
	}
	return tabular.String, nullable
}

func paramCell(v any, kind tabular.Kind) any {
	switch kind {
	case tabular.Int:
		n, _ := v.(json.Number).Int64()
		return n
	case tabular.Float:
		f, _ := v.(json.Number).Float64()
		return f
	case tabular.Bool:
		return v.(bool)
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
