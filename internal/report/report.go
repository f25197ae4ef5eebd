// Package report turns stored results into what people look at: the ECharts chart
// configurations, the JSON, CSV and HTML exports and the side-by-side comparison. It reads
// through results.Service and the market-data service and owns no SQL.
package report

import (
	"context"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// BarsFunc returns the bars of symbol over [start, end] at timeframe tf, as a backtest ran
// on them, and the symbol's time zone (marketdata.Service.Bars).
type BarsFunc func(ctx context.Context, source, symbol string, start, end time.Time, tf string) ([]engine.Bar, *time.Location, error)

// Service builds charts, exports and comparisons of stored results.
type Service struct {
	results *results.Service
	bars    BarsFunc
}

// New returns a Service reading results from res and bars with bars.
func New(res *results.Service, bars BarsFunc) *Service { return &Service{results: res, bars: bars} }
