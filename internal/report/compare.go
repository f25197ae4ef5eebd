package report

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/csvsafe"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// Comparison limits.
const (
	MinCompare = 2
	MaxCompare = 5
)

// ComparedTask describes one compared backtest: what ran, on what, with which parameters.
type ComparedTask struct {
	TaskID          string         `json:"task_id"`
	StrategyID      string         `json:"strategy_id"`
	StrategyName    string         `json:"strategy_name"`
	StrategyVersion int32          `json:"strategy_version"`
	Params          map[string]any `json:"params"`
	DataSource      string         `json:"data_source"`
	Symbol          string         `json:"symbol"`
	Symbols         []string       `json:"symbols"` // the feeds, in order
	Timeframe       string         `json:"timeframe"`
	Benchmark       string         `json:"benchmark"` // the symbol the benchmark metrics measure against
	Timezone        string         `json:"timezone"`  // the zone of its first feed's data
	StartDate       string         `json:"start_date"`
	EndDate         string         `json:"end_date"`
	InitialCash     float64        `json:"initial_cash"`
	Commission      float64        `json:"commission"`
}

// ComparedMetric is one metric side by side, in the order of the tasks.
type ComparedMetric struct {
	Key    string     `json:"key"`
	Label  string     `json:"label"`
	Values []*float64 `json:"values"`
}

// ComparedEquity holds the equity curves aligned on the union of their dates and divided by
// their first value, so every curve starts at 1. A curve is null before its first date and
// carries its last value over dates it has no bar for.
type ComparedEquity struct {
	Dates  []string     `json:"dates"`
	Series [][]*float64 `json:"series"` // one per task, in task order
}

// Comparison is the compare route's data.
type Comparison struct {
	Tasks   []ComparedTask   `json:"tasks"`
	Metrics []ComparedMetric `json:"metrics"`
	Equity  ComparedEquity   `json:"equity"`
}

// ParseTaskIDs splits the compare route's comma-separated task_ids and checks the count.
func ParseTaskIDs(raw string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p != "" && !seen[p] {
			seen[p] = true
			ids = append(ids, p)
		}
	}
	if len(ids) < MinCompare || len(ids) > MaxCompare {
		return nil, apperr.Invalid("Comparison needs %d to %d distinct task ids in task_ids (comma-separated), got %d", MinCompare, MaxCompare, len(ids))
	}
	return ids, nil
}

var compareExtra = []struct{ key, label string }{
	{"cagr", "CAGR"}, {"annual_volatility", "Annual Volatility"}, {"sqn", "SQN"},
	{"max_drawdown_duration", "Max DD Duration (days)"}, {"win_month_pct", "Win Months %"},
	{"benchmark_return", "Benchmark Return"}, {"alpha", "Alpha"}, {"beta", "Beta"}, {"correlation", "Correlation"},
	{"tracking_error", "Tracking Error"}, {"information_ratio", "Information Ratio"},
	{"sortino_ratio", "Sortino Ratio"}, {"calmar_ratio", "Calmar Ratio"}, {"omega_ratio", "Omega Ratio"},
	{"value_at_risk", "Value at Risk (95%)"}, {"expected_shortfall", "Expected Shortfall"},
	{"ulcer_index", "Ulcer Index"}, {"probabilistic_sharpe_ratio", "Probabilistic Sharpe"},
	{"recovery_factor", "Recovery Factor"},
}

// summaryFields are the 12 summary figures with their labels and formats, in the order
// a report shows them (the comparison keeps results.SummaryKeys' order).
var summaryFields = []struct {
	key, label string
	format     numFormat
}{
	{"total_return", "Total Return", fmtPctFraction}, {"annual_return", "Annual Return", fmtPctFraction},
	{"sharpe_ratio", "Sharpe Ratio", fmtRatio}, {"max_drawdown_pct", "Max Drawdown %", fmtPct},
	{"final_value", "Final Value", fmtMoney}, {"initial_cash", "Initial Cash", fmtMoney},
	{"max_drawdown", "Max Drawdown", fmtMoney}, {"total_trades", "Total Trades", fmtCount},
	{"win_rate", "Win Rate", fmtPct}, {"profit_factor", "Profit Factor", fmtRatio},
	{"avg_win", "Average Win", fmtMoney}, {"avg_loss", "Average Loss", fmtMoney},
}

var summaryLabels = func() map[string]string {
	m := make(map[string]string, len(summaryFields))
	for _, f := range summaryFields {
		m[f.key] = f.label
	}
	return m
}()

// Compare loads 2 to 5 completed tasks' results side by side. Unknown or unfinished tasks
// are a 400 naming the task.
func (svc *Service) Compare(ctx context.Context, ids []string) (*Comparison, error) {
	if len(ids) < MinCompare || len(ids) > MaxCompare {
		return nil, apperr.Invalid("Comparison needs %d to %d distinct task ids, got %d", MinCompare, MaxCompare, len(ids))
	}
	stored := make([]*results.Stored, len(ids))
	stats := make([]engine.Statistics, len(ids))
	for i, id := range ids {
		status, hasResult, err := svc.results.State(ctx, id)
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindNotFound {
			return nil, apperr.Invalid("Cannot compare %s: task not found", id)
		}
		if err != nil {
			return nil, err
		}
		if status != "completed" || !hasResult {
			return nil, apperr.Invalid("Cannot compare %s: the task is %s, only completed tasks have results", id, status)
		}
		if stored[i], err = svc.results.Load(ctx, id, results.EquityValues); err != nil {
			return nil, err
		}
		if stats[i], err = svc.results.Statistics(ctx, id); err != nil {
			return nil, err
		}
	}
	c := &Comparison{}
	for _, s := range stored {
		c.Tasks = append(c.Tasks, ComparedTask{
			TaskID: s.TaskID, StrategyID: s.Run.StrategyID, StrategyName: s.Run.StrategyName,
			StrategyVersion: int32(s.Run.StrategyVersion), Params: s.Params(), DataSource: s.Run.DataSource,
			Symbol: s.Run.Symbol, Symbols: s.Run.Symbols, Timeframe: s.Run.Timeframe, Benchmark: s.Run.Benchmark, Timezone: s.Run.Timezone, StartDate: s.Run.StartDate.Format("2006-01-02"), EndDate: s.Run.EndDate.Format("2006-01-02"),
			InitialCash: s.Run.InitialCash, Commission: s.Run.Commission,
		})
	}
	for ki, key := range results.SummaryKeys {
		m := ComparedMetric{Key: key, Label: summaryLabels[key]}
		for _, s := range stored {
			m.Values = append(m.Values, s.Summary.Values()[ki])
		}
		c.Metrics = append(c.Metrics, m)
	}
	for _, e := range compareExtra {
		m := ComparedMetric{Key: e.key, Label: e.label}
		for i := range stats {
			var v *float64 // results stored before a metric existed lack it
			if sm := stats[i].Get(e.key); sm != nil {
				v = sm.Value
			}
			m.Values = append(m.Values, v)
		}
		c.Metrics = append(c.Metrics, m)
	}
	c.Equity = alignEquity(stored)
	return c, nil
}

func alignEquity(stored []*results.Stored) ComparedEquity {
	set := map[int64]bool{}
	for _, s := range stored {
		for _, e := range s.Equity {
			set[e.Time.UnixNano()] = true
		}
	}
	keys := make([]int64, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := ComparedEquity{Dates: make([]string, len(keys)), Series: make([][]*float64, len(stored))}
	for i, k := range keys {
		out.Dates[i] = results.FormatTime(time.Unix(0, k).UTC())
	}
	for si, s := range stored {
		series := make([]*float64, len(keys))
		j := 0
		var last *float64
		for i, k := range keys {
			for j < len(s.Equity) && s.Equity[j].Time.UnixNano() <= k {
				if base := s.Equity[0].Value; base != 0 {
					v := s.Equity[j].Value / base
					last = &v
				}
				j++
			}
			series[i] = last
		}
		out.Series[si] = series
	}
	return out
}

// CSV writes the comparison: a metric table (one column per task), an empty row, the
// `Equity (normalised)` label and the aligned curves.
func (c *Comparison) CSV() string {
	var b bytes.Buffer
	w := csvsafe.NewWriter(&b) // text cells that a spreadsheet would evaluate are written as text
	head := []string{"metric"}
	for _, t := range c.Tasks {
		head = append(head, t.TaskID)
	}
	_ = w.Write(head)
	for _, row := range [][]string{
		c.taskRow("strategy", func(t ComparedTask) string { return t.StrategyName }),
		c.taskRow("strategy_version", func(t ComparedTask) string { return fmt.Sprint(t.StrategyVersion) }),
		c.taskRow("symbol", func(t ComparedTask) string {
			s := t.DataSource + "/" + strings.Join(t.Symbols, ",")
			if t.Timeframe != "1d" {
				s += " " + t.Timeframe
			}
			return s
		}),
		c.taskRow("benchmark", func(t ComparedTask) string { return t.Benchmark }),
		c.taskRow("params", func(t ComparedTask) string { return paramsText(t.Params) }),
	} {
		_ = w.Write(row)
	}
	for _, m := range c.Metrics {
		row := []string{m.Key}
		for _, v := range m.Values {
			row = append(row, num(v))
		}
		_ = w.Write(row)
	}
	w.Flush()
	b.WriteString("\nEquity (normalised)\n")
	head[0] = "date"
	_ = w.Write(head)
	for i, d := range c.Equity.Dates {
		row := []string{d}
		for _, s := range c.Equity.Series {
			row = append(row, num(s[i]))
		}
		_ = w.Write(row)
	}
	w.Flush()
	return b.String()
}

func (c *Comparison) taskRow(name string, f func(ComparedTask) string) []string {
	row := []string{name}
	for _, t := range c.Tasks {
		row = append(row, f(t))
	}
	return row
}

func paramsText(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}
