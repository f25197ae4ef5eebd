package report

import (
	"context"
	"errors"
	"slices"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/montecarlo"
	"github.com/backtestd/backtestd/internal/results"
)

// MonteCarloCost estimates the memory a Monte Carlo simulation of taskID's result with runs
// runs (0: the default) holds: the curve and its returns, the round trips, and per run its
// figures and its fan points. A task without a result is the not-found apperr.
func (svc *Service) MonteCarloCost(ctx context.Context, taskID string, runs int) (int64, error) {
	size, err := svc.results.Size(ctx, taskID, false)
	if err != nil {
		return 0, err
	}
	if runs <= 0 {
		runs = montecarlo.DefaultRuns
	}
	return int64(size.Bars)*200 + int64(size.RoundTrips)*costPerTrade + int64(runs)*(montecarlo.FanPoints+8)*8, nil
}

// MonteCarlo simulates taskID's result (montecarlo.Run): its closed trades' net pnl in the
// order they closed, its returns per bar and its calendar span; "this run" is the stored
// summary's final value, CAGR (annual_return) and max drawdown. Options the result cannot
// take are an invalid apperr; a task without a result is the not-found one.
func (svc *Service) MonteCarlo(ctx context.Context, taskID string, opts montecarlo.Options) (*montecarlo.Answer, error) {
	s, err := svc.results.Load(ctx, taskID, results.EquityValues|results.RoundTrips)
	if err != nil {
		return nil, err
	}
	in := MonteCarloInput(s)
	closed := slices.DeleteFunc(slices.Clone(s.Trades), func(t engine.Trade) bool { return t.IsOpen || t.CloseTime == nil })
	slices.SortStableFunc(closed, func(a, b engine.Trade) int { return a.CloseTime.Compare(*b.CloseTime) })
	for _, t := range closed {
		in.PnL = append(in.PnL, t.PnLNet)
	}
	a, err := montecarlo.Run(ctx, in, opts)
	var bad *montecarlo.InvalidError
	if errors.As(err, &bad) {
		return nil, apperr.Invalid("%s", bad.Error())
	}
	return a, err
}

// MonteCarloInput is the part of a Monte Carlo input every method shares, from a result
// loaded with its equity values: the starting capital, the returns per bar, the calendar
// span, and "this run" as the stored summary states it.
func MonteCarloInput(s *results.Stored) montecarlo.Input {
	in := montecarlo.Input{InitialCash: s.Run.InitialCash, Returns: engine.BarReturns(s.Run.InitialCash, s.Equity),
		Run: &montecarlo.Figures{FinalValue: s.Summary.FinalValue, CAGR: s.Summary.AnnualReturn, MaxDrawdownPct: s.Summary.MaxDrawdownPct}}
	if n := len(s.Equity); n > 1 {
		in.Years = s.Equity[n-1].Time.Sub(s.Equity[0].Time).Hours() / 24 / 365.25
	}
	return in
}
