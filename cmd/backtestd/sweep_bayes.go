package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/backtestd/backtestd/backtest"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/sweep"
)

// runBayes is `backtestd sweep --method bayes`: samples combinations in rounds
// (sweep.BayesRound), each round proposed from the trials of those before and run jobs at
// a time. It returns the trials in the order they were proposed, the best's result and
// how many proposals the constraint turned down.
func runBayes(ctx context.Context, cfg backtest.Config, space sweep.Space, fixed map[string]any, info *jsrt.StrategyInfo,
	constraint string, obj sweep.Objective, samples int, seed uint64, jobs int, stderr io.Writer) ([]sweep.Trial, *engine.Result, int, error) {
	if samples < 1 {
		return nil, nil, 0, errors.New("sweep: --samples must be at least 1")
	}
	if samples > sweep.MaxCombinations {
		return nil, nil, 0, fmt.Errorf("sweep: --samples %d is more than the %d runs a study may make", samples, sweep.MaxCombinations)
	}
	search, err := space.Bayes(obj, seed)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("sweep: %w", err)
	}
	excluded := 0
	// allowed completes the proposals with the fixed values and judges them by the
	// constraint, as a grid's combinations are.
	allowed := func(combos []map[string]any) ([]bool, error) {
		full := make([]map[string]any, len(combos))
		copy(full, combos)
		if i, err := sweep.Complete(full, fixed, info); err != nil {
			return nil, fmt.Errorf("combination %v: %w", combos[i], err)
		}
		if constraint == "" {
			ok := make([]bool, len(combos))
			for i := range ok {
				ok[i] = true
			}
			return ok, nil
		}
		keep, err := jsrt.Constraint(ctx, constraint, full)
		for _, k := range keep {
			if !k {
				excluded++
			}
		}
		return keep, err
	}
	var trials []sweep.Trial
	var best *engine.Result
	var bestValue *float64
	hist := []sweep.Observed{}
	for n := sweep.BayesRound(0, samples); n > 0; n = sweep.BayesRound(len(trials), samples) {
		combos, err := search.Next(hist, n, allowed)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("sweep: %w", err)
		}
		if len(combos) == 0 {
			if len(trials) == 0 {
				return nil, nil, 0, errors.New("sweep: the constraint leaves no combination")
			}
			break // the space is used up
		}
		if _, err := sweep.Complete(combos, fixed, info); err != nil {
			return nil, nil, 0, fmt.Errorf("sweep: %w", err)
		}
		round, res, err := runRound(ctx, cfg, combos, obj, jobs, len(trials) == 0, stderr)
		if err != nil {
			return nil, nil, 0, err
		}
		ranked := append([]sweep.Trial(nil), round...)
		sweep.Rank(ranked, obj)
		// The round's best is the study's when it is strictly better: among equals the
		// earlier trial ranks first, as sweep.Rank orders the whole study.
		if v := ranked[0].Value; best == nil || (v != nil && (bestValue == nil || obj.Better(*v, *bestValue))) {
			best, bestValue = res, v
		}
		for _, t := range round {
			hist = append(hist, sweep.Observed{Params: t.Params, Value: t.Value})
		}
		trials = append(trials, round...)
		fmt.Fprintf(stderr, "sweep: bayes %d/%d\n", len(trials), samples)
	}
	return trials, best, excluded, nil
}

// runRound runs one round's combinations with runTrials. runTrials stops when its first
// combination fails, which the first round wants (a broken strategy or objective stops the
// study); in a later round that combination is a failed trial like any other, and the rest
// run.
func runRound(ctx context.Context, cfg backtest.Config, combos []map[string]any, obj sweep.Objective, jobs int, first bool, stderr io.Writer) ([]sweep.Trial, *engine.Result, error) {
	var failed []sweep.Trial
	for len(combos) > 0 {
		trials, best, err := runTrials(ctx, cfg, combos, obj, jobs, stderr)
		if err == nil {
			return append(failed, trials...), best, nil
		}
		if first || ctx.Err() != nil {
			return nil, nil, err
		}
		c := cfg
		c.Params = combos[0]
		c.OnLog = func(backtest.LogEntry) {}
		_, runErr := backtest.Run(ctx, c)
		if runErr == nil { // it failed for another reason than its run
			return nil, nil, err
		}
		failed = append(failed, sweep.Trial{Params: combos[0], Error: runErr.Error()})
		combos = combos[1:]
	}
	return failed, nil, nil
}
