package report

import (
	"context"

	"github.com/backtestd/backtestd/internal/apperr"
)

// The reads of this package hold a result's rows in memory while they build and write
// their answer, so their memory grows with the result: a full-resolution candlestick chart
// of 300,000 bars holds some 50 MB. The *Cost methods estimate it from the result's size
// (one row read, one count) before anything is loaded, for the API's budget of heavy reads.
// The figures are bytes per bar, equity point, fill or round trip, measured on the peak of
// the Go heap during each read (50,000 intraday bars, TestReadCostsCoverReads) with room to spare.
const (
	costPerExecution = 600 // a fill: its row, engine.Execution and its row in the answer
	costPerTrade     = 600 // a round trip, likewise
)

// chartCosts are the bytes per bar (bars read from market data, equity points) and per
// fill that each chart holds at most.
var chartCosts = map[string]struct{ perBar, perExecution int64 }{
	// the bars (their rows and engine.Bar alive at once while read), closes and averages
	"candlestick": {perBar: 200},
	// the curve, the benchmark's bars and its buy-and-hold line
	"equity":   {perBar: 380},
	"drawdown": {perBar: 220}, "underwater": {perBar: 200},
	"monthly_heatmap": {perBar: 200}, "yearly_returns": {perBar: 200}, "returns_histogram": {perBar: 200},
	"rolling_sharpe": {perBar: 300},
	"trades":         {perBar: 220, perExecution: costPerExecution},
}

// ChartCost estimates the memory chart_type of taskID's result holds at its peak. An
// unknown chart type costs nothing (the chart answers 400); a task without a result is the
// not-found apperr Chart gives.
func (svc *Service) ChartCost(ctx context.Context, taskID, chartType string) (int64, error) {
	c, ok := chartCosts[chartType]
	if !ok {
		return 0, nil
	}
	size, err := svc.results.Size(ctx, taskID, c.perExecution > 0)
	if err != nil {
		return 0, err
	}
	return int64(size.Bars)*c.perBar + int64(size.Executions)*c.perExecution, nil
}

// ExportCost estimates the memory the export of taskID's result in format holds at its
// peak; as ChartCost.
func (svc *Service) ExportCost(ctx context.Context, taskID, format string) (int64, error) {
	size, err := svc.results.Size(ctx, taskID, true)
	if err != nil {
		return 0, err
	}
	bars, execs, trades := int64(size.Bars), int64(size.Executions), int64(size.RoundTrips)
	switch format {
	case "csv": // the fills only, as text, then as a JSON string
		return execs * 2 * costPerExecution, nil
	case "html": // the whole result, the benchmark's bars, the charts' SVG and the trade table
		return bars*500 + execs*2*costPerExecution + trades*costPerTrade, nil
	}
	// the whole result, written as it goes
	return bars*250 + execs*costPerExecution + trades*costPerTrade, nil
}

// CompareCost estimates the memory a comparison of ids holds at its peak: each curve, the
// union of their dates and the aligned curves. Tasks without a result cost nothing: the
// comparison answers for them.
func (svc *Service) CompareCost(ctx context.Context, ids []string) (int64, error) {
	var sum, most int64
	for _, id := range ids {
		size, err := svc.results.Size(ctx, id, false)
		if _, isApp := apperr.As(err); isApp {
			continue
		}
		if err != nil {
			return 0, err
		}
		sum += int64(size.Bars)
		most = max(most, int64(size.Bars))
	}
	return sum*130 + most*(130+60*int64(len(ids))), nil
}

// DrawdownsCost estimates the memory the drawdown periods of taskID's result hold: the
// equity curve, whose times are now decoded from their stored steps (about 185 bytes a bar
// measured by TestReadCostsCoverReads), with a margin.
func (svc *Service) DrawdownsCost(ctx context.Context, taskID string) (int64, error) {
	size, err := svc.results.Size(ctx, taskID, false)
	if err != nil {
		return 0, err
	}
	return int64(size.Bars) * 240, nil
}
