package studies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
	"github.com/backtestd/backtestd/internal/tasks"
)

// Trial is one combination's row of the leaderboard: its parameters and its run's summary
// (null figures until it has run, or when it failed).
type Trial = store.StudyTrialSummariesRow

// metrics are the leaderboard's sortable figures.
var metrics = map[string]func(*Trial) *float64{
	"objective":             func(t *Trial) *float64 { return t.Objective },
	"final_value":           func(t *Trial) *float64 { return t.FinalValue },
	"total_return":          func(t *Trial) *float64 { return t.TotalReturn },
	"annual_return":         func(t *Trial) *float64 { return t.AnnualReturn },
	"sharpe_ratio":          func(t *Trial) *float64 { return t.SharpeRatio },
	"max_drawdown":          func(t *Trial) *float64 { return t.MaxDrawdown },
	"max_drawdown_pct":      func(t *Trial) *float64 { return t.MaxDrawdownPct },
	"max_drawdown_duration": func(t *Trial) *float64 { return i2f(t.MaxDrawdownDuration) },
	"total_trades":          func(t *Trial) *float64 { return i2f(t.TotalTrades) },
	"won":                   func(t *Trial) *float64 { return i2f(t.Won) },
	"lost":                  func(t *Trial) *float64 { return i2f(t.Lost) },
	"win_rate":              func(t *Trial) *float64 { return t.WinRate },
	"profit_factor":         func(t *Trial) *float64 { return t.ProfitFactor },
	"avg_win":               func(t *Trial) *float64 { return t.AvgWin },
	"avg_loss":              func(t *Trial) *float64 { return t.AvgLoss },
	"sqn":                   func(t *Trial) *float64 { return t.Sqn },
}

func i2f(v *int32) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}

// MetricNames are the leaderboard's sort keys and the heatmap's metrics, sorted.
func MetricNames() []string {
	out := make([]string, 0, len(metrics))
	for k := range metrics {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Board is a page of the leaderboard.
type Board struct {
	StudyID string        `json:"study_id"`
	Sort    string        `json:"sort"`
	Order   string        `json:"order"`
	Fold    int           `json:"fold"`  // of a walk-forward study, the fold (from 1) ranked; 1 otherwise
	Total   int           `json:"total"` // combinations in the study (in the fold)
	Pareto  Pareto        `json:"pareto"`
	Trials  []RankedTrial `json:"trials"`
}

// foldOf reads a fold query value (from 1) of a study of folds: "" is the last fold, a
// plain study's only one (0 in the tables).
func foldOf(folds int32, v string) (int32, error) {
	if v == "" {
		return folds - 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > int(folds) {
		return 0, apperr.Invalid("fold must be a number from 1 to %d, got %q", folds, v)
	}
	return int32(n - 1), nil
}

// bestOf is the completed trial (in plan order) with the best objective in the study's
// direction, the first among equals; nil before one completed.
func bestOf(trials []Trial, direction string) *Trial {
	obj := sweep.Objective{Minimize: direction == "min"}
	var best *Trial
	for i := range trials {
		t := &trials[i]
		if Status(t.Status) == StatusCompleted && t.Objective != nil && (best == nil || obj.Better(*t.Objective, *best.Objective)) {
			best = t
		}
	}
	return best
}

// Results is the leaderboard: the study's combinations sorted by sort (a summary field,
// "objective", the default, or "pareto": by Pareto rank, then objective) in order (asc or
// desc; default the study's direction for the objective, asc for the Pareto rank, desc
// otherwise), those without the figure after the others, then by plan order; skip and
// limit page it. Every combination has its Pareto rank on the two objectives pareto names
// (paretoAxes). A walk-forward study ranks one fold's in-sample trials (fold, from 1;
// default the last).
func (s *Service) Results(ctx context.Context, id, fold, sort, order, pareto string, skip, limit int) (Board, error) {
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return Board{}, err
	}
	f, err := foldOf(row.Folds, fold)
	if err != nil {
		return Board{}, err
	}
	if sort == "" {
		sort = "objective"
	}
	axes, err := paretoAxes(pareto, row.Objective, row.Direction)
	if err != nil {
		return Board{}, err
	}
	get, ok := metrics[sort]
	if !ok && sort != "pareto" {
		return Board{}, apperr.Invalid("sort must be one of pareto, %s, got %q", strings.Join(MetricNames(), ", "), sort)
	}
	if order == "" {
		order = "desc"
		if (sort == "objective" && row.Direction == "min") || sort == "pareto" {
			order = "asc"
		}
	}
	if order != "asc" && order != "desc" {
		return Board{}, apperr.Invalid("order must be asc or desc, got %q", order)
	}
	rows, err := s.q.StudyTrialSummaries(ctx, s.db.Pool, store.StudyTrialSummariesParams{StudyID: id, Fold: f})
	if err != nil {
		return Board{}, fmt.Errorf("load trials of %s: %w", id, err)
	}
	ranks, front := paretoRanks(rows, axes)
	trials := make([]RankedTrial, len(rows))
	for i := range rows {
		trials[i].Trial = rows[i]
		if ranks[i] > 0 {
			trials[i].ParetoRank = &ranks[i]
		}
	}
	if sort == "pareto" {
		// By rank, and within a rank by objective (the study's direction), then plan order.
		slices.SortStableFunc(trials, func(a, b RankedTrial) int { return compareObjective(a.Objective, b.Objective, row.Direction) })
	}
	value := func(t *RankedTrial) *float64 {
		if sort == "pareto" {
			if t.ParetoRank == nil {
				return nil
			}
			f := float64(*t.ParetoRank)
			return &f
		}
		return get(&t.Trial)
	}
	slices.SortStableFunc(trials, func(a, b RankedTrial) int {
		va, vb := value(&a), value(&b)
		switch {
		case va == nil && vb == nil:
			return 0
		case va == nil:
			return 1
		case vb == nil:
			return -1
		case *va == *vb:
			return 0
		case (*va < *vb) == (order == "asc"):
			return -1
		}
		return 1
	})
	out := Board{StudyID: id, Fold: int(f) + 1, Sort: sort, Order: order, Total: len(trials),
		Pareto: Pareto{Objectives: axes, Front: front, Explanation: ParetoExplanation}}
	if skip < len(trials) {
		out.Trials = trials[skip:min(len(trials), skip+limit)]
	}
	if out.Trials == nil {
		out.Trials = []RankedTrial{}
	}
	return out, nil
}

// Heatmap is an ECharts heatmap of metric (default the objective) over the parameters x and
// y. A cell is the combination with those two values and the other varied parameters at
// the best combination's values (agg "best", the default), or the max or mean of metric
// over all combinations with those two values (agg "max", "mean"). Cells without a figure
// are empty. A walk-forward study maps one fold (from 1; default the last).
func (s *Service) Heatmap(ctx context.Context, id, fold, x, y, metric, agg string) (*report.ChartConfig, error) {
	st, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	f, err := foldOf(int32(st.Folds), fold)
	if err != nil {
		return nil, err
	}
	names := sweep.Space(st.Space).Names()
	for _, p := range []struct{ key, v string }{{"x", x}, {"y", y}} {
		if !slices.Contains(names, p.v) {
			return nil, apperr.Invalid("%s must be one of the study's varied parameters (%s), got %q", p.key, strings.Join(names, ", "), p.v)
		}
	}
	if x == y {
		return nil, apperr.Invalid("x and y must be different parameters")
	}
	if metric == "" {
		metric = "objective"
	}
	get, ok := metrics[metric]
	if !ok {
		return nil, apperr.Invalid("metric must be one of %s, got %q", strings.Join(MetricNames(), ", "), metric)
	}
	if agg == "" {
		agg = "best"
	}
	if agg != "best" && agg != "max" && agg != "mean" {
		return nil, apperr.Invalid("agg must be best, max or mean, got %q", agg)
	}
	trials, err := s.q.StudyTrialSummaries(ctx, s.db.Pool, store.StudyTrialSummariesParams{StudyID: id, Fold: f})
	if err != nil {
		return nil, fmt.Errorf("load trials of %s: %w", id, err)
	}
	var fixed map[string]any
	if agg == "best" {
		best := bestOf(trials, st.Direction)
		if best == nil {
			return nil, apperr.Conflict("Study %s has no completed combination yet: try agg=max or mean, or wait", id)
		}
		if err := json.Unmarshal(best.Params, &fixed); err != nil {
			return nil, fmt.Errorf("best params of %s: %w", id, err)
		}
	}
	xs, ys := st.Space[x], st.Space[y]
	type cell struct {
		sum, max float64
		n        int
	}
	cells := make([]cell, len(xs)*len(ys))
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	pos := func(vals []any, v any) int {
		k := key(v)
		return slices.IndexFunc(vals, func(w any) bool { return key(w) == k })
	}
	for i := range trials {
		v := get(&trials[i])
		if v == nil {
			continue
		}
		var p map[string]any
		if json.Unmarshal(trials[i].Params, &p) != nil {
			continue
		}
		if agg == "best" && slices.ContainsFunc(names, func(n string) bool { return n != x && n != y && key(p[n]) != key(fixed[n]) }) {
			continue
		}
		xi, yi := pos(xs, p[x]), pos(ys, p[y])
		if xi < 0 || yi < 0 {
			continue
		}
		c := &cells[yi*len(xs)+xi]
		if c.n == 0 || *v > c.max {
			c.max = *v
		}
		c.sum += *v
		c.n++
	}
	data := make([][]any, 0, len(cells))
	lo, hi := math.Inf(1), math.Inf(-1)
	for yi := range ys {
		for xi := range xs {
			c := cells[yi*len(xs)+xi]
			if c.n == 0 {
				continue
			}
			v := c.max
			if agg == "mean" {
				v = c.sum / float64(c.n)
			}
			v = math.Round(v*1e6) / 1e6
			lo, hi = min(lo, v), max(hi, v)
			data = append(data, []any{xi, yi, v})
		}
	}
	if len(data) == 0 {
		lo, hi = 0, 1
	}
	label := func(vals []any) []string {
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = fmt.Sprint(v)
		}
		return out
	}
	title := fmt.Sprintf("%s by %s and %s", metric, x, y)
	if metric == "objective" {
		title = fmt.Sprintf("%s (objective) by %s and %s", st.Objective, x, y)
	}
	var others []string
	for _, n := range names {
		if n != x && n != y {
			others = append(others, n)
		}
	}
	switch {
	case agg == "best" && len(others) > 0:
		parts := make([]string, len(others))
		for i, n := range others {
			parts[i] = fmt.Sprintf("%s=%v", n, fixed[n])
		}
		title += " at the best " + strings.Join(parts, " ")
	case agg != "best":
		title += fmt.Sprintf(" (%s over %s)", agg, strings.Join(others, ", "))
	}
	return &report.ChartConfig{
		Title: title, Type: "scatter", // a grid of cells: ECharts draws it as a heatmap series
		Series: []map[string]any{{"name": metric, "type": "heatmap", "data": data,
			"emphasis": map[string]any{"itemStyle": map[string]any{"borderColor": "#333", "borderWidth": 1}}}},
		XAxis:     map[string]any{"type": "category", "name": x, "data": label(xs), "splitArea": map[string]any{"show": true}},
		YAxis:     map[string]any{"type": "category", "name": y, "data": label(ys), "splitArea": map[string]any{"show": true}},
		VisualMap: map[string]any{"min": lo, "max": hi, "calculable": true, "orient": "horizontal", "left": "center", "bottom": 0},
		Tooltip:   map[string]any{"position": "top"},
	}, nil
}

// Overfitting is what the study's own trials say of its winner.
type Overfitting struct {
	StudyID      string            `json:"study_id"`
	Fold         int               `json:"fold"`   // of a walk-forward study, the fold (from 1) judged; 1 otherwise
	Status       string            `json:"status"` // of the study when computed: a running study's figures change
	Trials       int               `json:"trials"` // combinations that ran
	Objective    string            `json:"objective"`
	Best         *Best             `json:"best"`
	Statistics   sweep.Overfit     `json:"statistics"`
	Explanations map[string]string `json:"explanations"`
}

// Overfitting computes the Deflated Sharpe Ratio of the best combination and the
// Probability of Backtest Overfitting from the combinations that ran (internal/overfit).
// A finished study's figures are computed once and kept. A walk-forward study is judged
// on one fold's in-sample trials (fold, from 1; default the last, the ones kept).
func (s *Service) Overfitting(ctx context.Context, id, fold string) (Overfitting, error) {
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return Overfitting{}, err
	}
	f, err := foldOf(row.Folds, fold)
	if err != nil {
		return Overfitting{}, err
	}
	last := f == row.Folds-1
	if last && len(row.Overfitting) > 0 {
		var out Overfitting
		if json.Unmarshal(row.Overfitting, &out) == nil {
			return out, nil
		}
	}
	rets, err := s.q.StudyTrialReturns(ctx, s.db.Pool, store.StudyTrialReturnsParams{StudyID: id, Fold: f})
	if err != nil {
		return Overfitting{}, fmt.Errorf("load returns of %s: %w", id, err)
	}
	trials := make([]sweep.Trial, len(rets))
	for i, r := range rets {
		trials[i] = sweep.Trial{Value: r.Objective, Returns: r.Returns}
	}
	sweep.Rank(trials, sweep.Objective{Metric: row.Objective, Minimize: row.Direction == "min"})
	out := Overfitting{StudyID: id, Fold: int(f) + 1, Status: row.Status, Trials: len(trials), Objective: row.Objective,
		// On every core: for 1,000 trials the splits take about a second of CPU.
		Statistics:   sweep.Overfitting(trials, int(row.Blocks), runtime.GOMAXPROCS(0)),
		Explanations: map[string]string{"deflated_sharpe": sweep.DeflatedExplanation, "pbo": sweep.PBOExplanation}}
	if last { // the study's best so far
		p, err := s.progress(ctx, s.db.Pool, id)
		if err != nil {
			return Overfitting{}, err
		}
		out.Best = fromRow(row, p[id]).Best
	} else {
		sums, err := s.q.StudyTrialSummaries(ctx, s.db.Pool, store.StudyTrialSummariesParams{StudyID: id, Fold: f})
		if err != nil {
			return Overfitting{}, fmt.Errorf("load trials of %s: %w", id, err)
		}
		if b := bestOf(sums, row.Direction); b != nil {
			out.Best = &Best{Index: int(b.Idx), Params: b.Params, Objective: *b.Objective}
		}
	}
	if last && (Status(row.Status) == StatusCompleted || Status(row.Status) == StatusFailed) {
		if b, err := json.Marshal(out); err == nil {
			if err := s.q.SetStudyOverfitting(ctx, s.db.Pool, store.SetStudyOverfittingParams{ID: id, Overfitting: b}); err != nil {
				s.log.Warn("keep study overfitting statistics", "study", id, "err", err)
			}
		}
	}
	return out, nil
}

// PromoteRequest names the combination to run as an ordinary backtest: its index in the
// study, or its parameters.
type PromoteRequest struct {
	Idx    *int           `json:"idx"`
	Params map[string]any `json:"params"`
	By     *string        `json:"-"`
}

// Promote runs one combination as an ordinary backtest task on the study's data, with its
// full results, charts and exports. Parameters not given keep the study's shared values.
func (s *Service) Promote(ctx context.Context, id string, req PromoteRequest) (tasks.Task, error) {
	row, err := s.load(ctx, s.db.Pool, id)
	if err != nil {
		return tasks.Task{}, err
	}
	params := map[string]any{}
	if err := json.Unmarshal(row.StrategyParams, &params); err != nil {
		return tasks.Task{}, fmt.Errorf("stored strategy_params of %s: %w", id, err)
	}
	switch {
	case req.Idx != nil && req.Params != nil:
		return tasks.Task{}, apperr.Invalid("give idx or params, not both")
	case req.Idx != nil:
		var stored json.RawMessage
		if *req.Idx >= 0 && *req.Idx < int(row.Total) {
			stored, err = s.q.StudyTrialParams(ctx, s.db.Pool, store.StudyTrialParamsParams{StudyID: id, Idx: int32(*req.Idx)})
		}
		if stored == nil {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return tasks.Task{}, fmt.Errorf("load combination %d of %s: %w", *req.Idx, id, err)
			}
			return tasks.Task{}, apperr.Invalid("Study %s has no combination %d (0 to %d)", id, *req.Idx, row.Total-1)
		}
		if err := json.Unmarshal(stored, &params); err != nil {
			return tasks.Task{}, fmt.Errorf("stored params of %s #%d: %w", id, *req.Idx, err)
		}
	case req.Params != nil:
		for k, v := range req.Params {
			params[k] = v
		}
	default:
		return tasks.Task{}, apperr.Unprocessable("Field 'params' (or 'idx') is required")
	}
	version := int(row.StrategyVersion)
	start, end := row.StartDate.Format(time.DateOnly), row.EndDate.Format(time.DateOnly)
	versions, err := s.dataVersions(ctx, id) // a study with as_of: the backtest reads its bars too
	if err != nil {
		return tasks.Task{}, err
	}
	return s.tasks.Create(ctx, tasks.Request{
		StrategyID: &row.StrategyID, StrategyVersion: &version, StrategyParams: params,
		DataSource: &row.DataSource, Symbols: row.Symbols, Timeframe: &row.Timeframe,
		StartDate: &start, EndDate: &end, InitialCash: &row.InitialCash, Commission: &row.Commission, By: req.By,
		Versions: versions,
	})
}

// compareObjective orders objective values best first in direction, those without one last.
func compareObjective(a, b *float64, direction string) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	case *a == *b:
		return 0
	case (*a > *b) == (direction == "max"):
		return -1
	}
	return 1
}
