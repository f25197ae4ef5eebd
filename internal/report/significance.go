package report

import (
	"context"
	"errors"
	"slices"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/montecarlo"
	"github.com/backtestd/backtestd/internal/results"
)

// Significance tests taskID's closed trades (montecarlo.Test) on the opens of the bars of the
// symbols they were on, the run's own timeframe and dates. Options the result cannot take,
// and trades on a feed the strategy joined (whose bars are not stored), are an invalid or
// unprocessable apperr; a task without a result is the not-found one.
func (svc *Service) Significance(ctx context.Context, taskID string, opts montecarlo.SigOptions) (*montecarlo.Significance, error) {
	s, err := svc.results.Load(ctx, taskID, results.RoundTrips)
	if err != nil {
		return nil, err
	}
	symbols := s.Run.Symbols
	if len(symbols) == 0 {
		symbols = []string{s.Run.Symbol}
	}
	var in montecarlo.SigInput
	feeds := map[string]int{}
	for _, t := range s.Trades {
		if t.IsOpen || t.CloseTime == nil {
			continue
		}
		k, seen := feeds[t.Symbol]
		if !seen {
			if !slices.Contains(symbols, t.Symbol) {
				return nil, apperr.Unprocessable("Trades on %s, a feed the strategy made, cannot be tested: its bars are not stored", t.Symbol)
			}
			bars, err := svc.runBars(ctx, s.Run, t.Symbol)
			if err != nil {
				return nil, err
			}
			if len(bars) == 0 {
				return nil, apperr.Unprocessable("The bars of %s the run read are no longer stored", t.Symbol)
			}
			opens := make([]float64, len(bars))
			for i, b := range bars {
				opens[i] = b.Open
			}
			k = len(in.Opens)
			feeds[t.Symbol] = k
			in.Opens = append(in.Opens, opens)
		}
		in.Trades = append(in.Trades, montecarlo.SigTrade{Feed: k, Held: t.BarLen, Long: t.Size > 0,
			Return: montecarlo.TradeReturn(t.Size > 0, t.EntryPrice, t.ExitPrice)})
	}
	a, err := montecarlo.Test(ctx, in, opts)
	var bad *montecarlo.InvalidError
	if errors.As(err, &bad) {
		return nil, apperr.Invalid("%s", bad.Error())
	}
	return a, err
}
