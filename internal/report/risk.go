package report

import (
	"context"
	"fmt"
	"math"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// rollingSharpe charts the Sharpe ratio of the last half year of bars (engine.RollingWindow)
// at each bar: whether the edge held through the run or came from one stretch of it.
func rollingSharpe(in ChartInput) *ChartConfig {
	window := engine.RollingWindow(in.Equity)
	tip, ptr, zoom := interaction()
	idx, sampling := in.View.pick(in.Equity)
	name := fmt.Sprintf("Sharpe ratio, last %d bars", window)
	return &ChartConfig{
		Title: "Rolling Sharpe Ratio", Type: "line", Sampling: sampling,
		Series: []obj{{"name": name, "type": "line", "data": optFloatSeries(pickOf(engine.RollingSharpe(in.InitialCash, in.Equity, window), idx)),
			"showSymbol": false, "lineStyle": obj{"width": 1},
			"markLine": obj{"silent": true, "symbol": "none", "data": []obj{{"yAxis": 0}}, "lineStyle": obj{"type": "dashed", "width": 1}}}},
		XAxis: categoryAxis(pointDates{in.Equity, idx}, nil), YAxis: obj{"type": "value", "name": "Sharpe ratio (annualised)", "scale": true},
		Tooltip: tip, AxisPtr: ptr, DataZoom: zoom(0),
	}
}

// returnsHistogram charts how the returns per bar are spread: losses and gains as two
// series, so each keeps its colour whatever the count.
func returnsHistogram(in ChartInput) *ChartConfig {
	bins := engine.ReturnHistogram(in.InitialCash, in.Equity)
	labels := make([]string, len(bins))
	losses, gains := make([]any, len(bins)), make([]any, len(bins))
	for i, b := range bins {
		labels[i] = fmt.Sprintf("%s to %s", pctLabel(b.From), pctLabel(b.To))
		if b.From < 0 {
			losses[i] = b.Count
		} else {
			gains[i] = b.Count
		}
	}
	return &ChartConfig{
		Title: "Returns per Bar", Type: "bar",
		Series: []obj{
			{"name": "Losses", "type": "bar", "stack": "returns", "barCategoryGap": "5%", "data": losses, "itemStyle": obj{"color": ColorDown}},
			{"name": "Gains", "type": "bar", "stack": "returns", "barCategoryGap": "5%", "data": gains, "itemStyle": obj{"color": ColorUp}},
		},
		XAxis:    obj{"type": "category", "data": labels, "name": "Return per bar"},
		YAxis:    obj{"type": "value", "name": "Bars"},
		Tooltip:  obj{"trigger": "axis"},
		DataZoom: []obj{}, // a few dozen bins: nothing to zoom
	}
}

// pctLabel writes a bin edge: two decimals, never "-0.00".
func pctLabel(v float64) string {
	if math.Abs(v) < 0.005 {
		v = 0
	}
	return fmt.Sprintf("%.2f%%", v)
}

// Drawdown is a drawdown period as the results page lists it: times in the API's format.
type Drawdown struct {
	Peak      string  `json:"peak"`
	Trough    string  `json:"trough"`
	Recovered *string `json:"recovered"` // nil: not recovered by the end of the run
	DepthPct  float64 `json:"depth_pct"`
	Bars      int     `json:"bars"`
	Days      float64 `json:"days"`           // peak to recovery, or to the last bar
	ToTrough  float64 `json:"to_trough_days"` // peak to trough
}

// Drawdowns lists the n deepest drawdown periods of taskID's equity curve.
func (svc *Service) Drawdowns(ctx context.Context, taskID string, n int) ([]Drawdown, error) {
	s, err := svc.results.Load(ctx, taskID, results.EquityValues)
	if err != nil {
		return nil, err
	}
	periods := engine.DrawdownPeriods(s.Equity, n)
	out := make([]Drawdown, len(periods))
	for i, p := range periods {
		out[i] = Drawdown{Peak: results.FormatTime(p.Peak), Trough: results.FormatTime(p.Trough), DepthPct: p.DepthPct,
			Bars: p.Bars, Days: roundDays(p.Days), ToTrough: roundDays(p.ToTrough)}
		if p.Recovered != nil {
			r := results.FormatTime(*p.Recovered)
			out[i].Recovered = &r
		}
	}
	return out, nil
}

// roundDays keeps an intraday run's fractions of a day to the minute.
func roundDays(d float64) float64 {
	return math.Round(d*24*60) / (24 * 60)
}
