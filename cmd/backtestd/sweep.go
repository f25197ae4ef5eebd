package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/backtestd/backtestd/backtest"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/overfit"
	"github.com/backtestd/backtestd/internal/sweep"
)

// spaceFlags collects repeatable --param name=start:stop:step or name=v1,v2 flags.
type spaceFlags sweep.Space

func (s spaceFlags) String() string { return "" }

func (s spaceFlags) Set(v string) error {
	name, vals, err := sweep.ParseParam(v)
	if err != nil {
		return err
	}
	s[name] = vals
	return nil
}

// sweepReport is what `backtestd sweep --json` prints.
type sweepReport struct {
	Strategy     string             `json:"strategy"`
	Symbols      []string           `json:"symbols"`
	Objective    string             `json:"objective"`
	Direction    string             `json:"direction"`
	Combinations int                `json:"combinations"` // run: the grid or sample, less those the constraint left out
	Excluded     int                `json:"excluded"`     // left out by the constraint
	Failed       int                `json:"failed"`
	Seconds      float64            `json:"seconds"`
	Trials       []sweep.Trial      `json:"trials"` // best first
	Overfitting  sweep.Overfit      `json:"overfitting"`
	Explanations map[string]string  `json:"explanations"`
	Fixed        map[string]any     `json:"fixed,omitempty"`
	Space        map[string][]any   `json:"space"`
	Statistics   *engine.Statistics `json:"best_statistics,omitempty"`
}

// runSweep implements `backtestd sweep`: a parameter study from files on all cores, no
// database, printing the leaderboard and the overfitting statistics.
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	strategy := fs.String("strategy", "", "JavaScript strategy file (required)")
	var data, symbols stringList
	fs.Var(&data, "data", "CSV bars (required; repeat for more feeds, this.datas[i] in order)")
	fs.Var(&symbols, "symbol", "symbol name of the --data in the same position (default: the file's base name)")
	from := fs.String("from", "", "first date to use, YYYY-MM-DD")
	to := fs.String("to", "", "last date to use, YYYY-MM-DD, inclusive")
	cash := fs.Float64("cash", 10000, "starting cash")
	commission := fs.Float64("commission", 0.001, "commission as a fraction of traded value")
	space := spaceFlags{}
	fs.Var(space, "param", "a parameter to vary: name=start:stop:step (stop included) or name=v1,v2,... (repeatable)")
	fixed := paramFlags{}
	fs.Var(fixed, "set", "a parameter held at one value: name=value (repeatable)")
	constraint := fs.String("constraint", "", "JavaScript expression over p that a combination must satisfy, e.g. 'p.fast < p.slow'")
	objective := fs.String("objective", "sharpe_ratio", "the summary field or statistic to rank by")
	minimize := fs.Bool("minimize", false, "rank by the smallest objective (e.g. max_drawdown_pct)")
	method := fs.String("method", "grid", "grid (every combination), random (--samples of them) or bayes (--samples proposed by a model of the runs before)")
	samples := fs.Int("samples", 100, "combinations run by --method random or bayes")
	seed := fs.Uint64("seed", 1, "seed of --method random or bayes: the same seed runs the same combinations")
	jobs := fs.Int("jobs", runtime.NumCPU(), "backtests run at once")
	top := fs.Int("top", 10, "rows of the leaderboard printed")
	blocks := fs.Int("blocks", overfit.DefaultBlocks, "blocks the history is cut into for the probability of backtest overfitting (even)")
	timeout := fs.Duration("timeout", jsrt.DefaultWallTimeLimit, "wall-time limit of each backtest")
	asJSON := fs.Bool("json", false, "print everything as JSON: every trial, the statistics, the best trial's statistics")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: backtestd sweep --strategy FILE --data CSV --param fast=5:50:5 --param slow=20:200:10 [--constraint 'p.fast < p.slow'] [--objective sharpe_ratio] [--jobs N] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *strategy == "" || len(data) == 0 || len(space) == 0:
		fs.Usage()
		return errors.New("sweep: --strategy, --data and at least one --param are required")
	case *method != "grid" && *method != "random" && *method != "bayes":
		return fmt.Errorf("sweep: --method is grid, random or bayes, not %q", *method)
	case *jobs < 1:
		return errors.New("sweep: --jobs must be at least 1")
	}
	code, info, feeds, err := readLocal(ctx, "sweep", *strategy, data, symbols, *from, *to)
	if err != nil {
		return err
	}

	// The plan, checked whole before anything runs.
	var combos []map[string]any
	switch *method {
	case "grid":
		combos, err = sweep.Space(space).Grid()
	case "random":
		combos, err = sweep.Space(space).Random(*samples, *seed)
	}
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for name := range space {
		if _, ok := fixed[name]; ok {
			return fmt.Errorf("sweep: %s is both varied (--param) and fixed (--set)", name)
		}
	}
	if _, err := sweep.Complete(combos, fixed, info); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	excluded := 0
	if *constraint != "" && *method != "bayes" {
		keep, err := jsrt.Constraint(ctx, *constraint, combos)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		n := len(combos)
		combos = sweep.Keep(combos, keep)
		if excluded = n - len(combos); len(combos) == 0 {
			return errors.New("sweep: the constraint leaves no combination")
		}
	}
	obj := sweep.Objective{Metric: *objective, Minimize: *minimize}

	start := time.Now()
	cfg := backtest.Config{Code: code, Feeds: feeds, Cash: *cash, Commission: *commission, TimeLimit: *timeout}
	var trials []sweep.Trial
	var best *engine.Result
	if *method == "bayes" {
		trials, best, excluded, err = runBayes(ctx, cfg, sweep.Space(space), fixed, info, *constraint, obj, *samples, *seed, *jobs, stderr)
	} else {
		trials, best, err = runTrials(ctx, cfg, combos, obj, *jobs, stderr)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	// The best run's statistics are computed beside the overfitting statistics rather than
	// before them, on one core while the others wait.
	var bestStats engine.Statistics
	statsDone := make(chan struct{})
	go func() {
		defer close(statsDone)
		if best != nil {
			bestStats = backtest.ComputeStatistics(best)
		}
	}()
	sweep.Rank(trials, obj)
	rep := sweepReport{
		Strategy: info.ClassName, Symbols: feedSymbols(feeds), Objective: obj.Metric, Direction: "max",
		Combinations: len(trials), Excluded: excluded, Seconds: elapsed.Seconds(), Trials: trials,
		Overfitting:  sweep.Overfitting(trials, *blocks, *jobs),
		Explanations: map[string]string{"deflated_sharpe": sweep.DeflatedExplanation, "pbo": sweep.PBOExplanation},
		Space:        space,
	}
	<-statsDone
	if best != nil {
		rep.Statistics = &bestStats
	}
	if len(fixed) > 0 {
		rep.Fixed = fixed
	}
	if obj.Minimize {
		rep.Direction = "min"
	}
	for _, t := range trials {
		if t.Error != "" {
			rep.Failed++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printSweep(stdout, rep, sweep.Space(space).Names(), *top)
	return nil
}

// runTrials runs every combination, jobs at a time, reporting progress on stderr about
// once a second. A strategy that fails on the first combination, or an objective it does
// not know, stops the study: the runs begun beside the first are cancelled. The runs share
// one batch: the code compiled once, the bars' columns and indicators computed once. It
// returns the trials in combos' order and the best run's result.
func runTrials(ctx context.Context, cfg backtest.Config, combos []map[string]any, obj sweep.Objective, jobs int, stderr io.Writer) ([]sweep.Trial, *engine.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The strategies' lines are not kept, so the engine's are not even formatted; a trial
	// keeps the summary, the returns and the objective, and the best its statistics: the
	// analyzers none of those read are not computed.
	cfg.OnLog, cfg.QuietEngine, cfg.SummaryOnly = func(backtest.LogEntry) {}, true, true
	batch := backtest.NewBatch(cfg)
	trials := make([]sweep.Trial, len(combos))
	inSummary := sweep.Known(obj.Metric, nil) // else each run's statistics are computed for it
	// The best run so far (as Rank orders them: by value, then grid order) and its result,
	// whose statistics --json prints.
	var mu sync.Mutex
	best, bestRes := -1, (*engine.Result)(nil)
	ranksAbove := func(i, j int) bool {
		vi, vj := trials[i].Value, trials[j].Value
		switch {
		case vi == nil || vj == nil:
			return vi != nil || (vj == nil && i < j)
		case *vi == *vj:
			return i < j
		}
		return obj.Better(*vi, *vj)
	}
	run := func(i int) *engine.Result {
		trials[i].Params = combos[i]
		res, err := batch.Run(ctx, combos[i])
		if err != nil {
			trials[i].Error = err.Error()
			return nil
		}
		trials[i].Summary = res.Summary
		trials[i].Returns = sweep.Returns(res.Equity)
		var stats *engine.Statistics
		if !inSummary {
			s := backtest.ComputeStatistics(res)
			stats = &s
		}
		if v, ok := obj.Value(res.Summary, stats); ok {
			trials[i].Value = &v
		}
		// The best so far is kept for its statistics, and the first run's for the objective
		// check; the other results' per-bar storage goes to the next runs.
		mu.Lock()
		spare, spareIdx := res, i
		if best < 0 || ranksAbove(i, best) {
			spare, spareIdx = bestRes, best
			best, bestRes = i, res
		}
		mu.Unlock()
		if spareIdx != 0 {
			engine.Recycle(spare)
		}
		return res
	}
	// The first combination runs on this goroutine while the other jobs start on the rest.
	var done, next atomic.Int64 // runs finished, runs taken
	next.Store(1)
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(combos) || ctx.Err() != nil {
				return
			}
			run(i)
			done.Add(1)
			// A job never blocks, so the scheduler saw its core only when the runtime
			// preempted it (every 10 ms): the collector's mark workers waited for that, and
			// the mark phase, with its write barriers and assists on every job, ran longer.
			// Between runs costs a fraction of a microsecond.
			runtime.Gosched()
		}
	}
	var wg sync.WaitGroup
	for range min(jobs, len(combos)) - 1 {
		wg.Go(work)
	}
	first := run(0)
	done.Add(1)
	stopRuns := func(err error) ([]sweep.Trial, *engine.Result, error) {
		cancel()
		wg.Wait()
		return nil, nil, err
	}
	if first == nil {
		return stopRuns(fmt.Errorf("sweep: the first combination (%v) fails: %s", combos[0], trials[0].Error))
	}
	firstStats := backtest.ComputeStatistics(first)
	if !sweep.Known(obj.Metric, &firstStats) {
		return stopRuns(fmt.Errorf("sweep: unknown objective %q: use a summary field such as sharpe_ratio or total_return, or a statistic's key", obj.Metric))
	}
	stop := make(chan struct{})
	progressDone := make(chan struct{})
	go func() { // progress
		defer close(progressDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(stderr, "sweep: %d/%d\n", done.Load(), len(combos))
			}
		}
	}()
	work()
	wg.Wait()
	close(stop)
	<-progressDone
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return trials, bestRes, nil
}

func printSweep(w io.Writer, r sweepReport, names []string, top int) {
	plural := "s"
	if r.Combinations == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "%s on %s: %d combination%s", r.Strategy, strings.Join(r.Symbols, ", "), r.Combinations, plural)
	if r.Excluded > 0 {
		fmt.Fprintf(w, " (%d left out by the constraint)", r.Excluded)
	}
	if r.Failed > 0 {
		fmt.Fprintf(w, ", %d failed", r.Failed)
	}
	fmt.Fprintf(w, ", in %.1f s; ranked by %s (%s)\n\n", r.Seconds, r.Objective, r.Direction)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// The figures after the objective, less the one the objective already is (ranked by
	// sharpe_ratio, the table showed Sharpe twice).
	var figures []sweepFigure
	for _, f := range sweepFigures {
		if f.key != r.Objective {
			figures = append(figures, f)
		}
	}
	head := []string{"RANK", "PARAMETERS", strings.ToUpper(r.Objective)}
	for _, f := range figures {
		head = append(head, f.head)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for i, t := range r.Trials[:min(top, len(r.Trials))] {
		val := "—"
		if t.Value != nil {
			val = fmt.Sprintf("%.4f", *t.Value)
		}
		if t.Error != "" {
			fmt.Fprintf(tw, "%d\t%s\tfailed: %s%s\n", i+1, sweep.Describe(names, t.Params), t.Error, strings.Repeat("\t", len(figures)))
			continue
		}
		row := []string{fmt.Sprint(i + 1), sweep.Describe(names, t.Params), val}
		for _, f := range figures {
			row = append(row, f.cell(t.Summary))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	o := r.Overfitting
	fmt.Fprintln(w)
	if d := o.Deflated; d != nil {
		fmt.Fprintf(w, "Deflated Sharpe ratio of the best: %.3f  (Sharpe %.4f per bar against %.4f expected from luck among %d trials; %d bars, skewness %.2f, kurtosis %.2f)\n",
			d.Probability, d.Sharpe, d.Expected, d.Trials, d.Periods, d.Skewness, d.Kurtosis)
		fmt.Fprintf(w, "  %s\n", sweep.DeflatedExplanation)
	}
	if p := o.PBO; p != nil {
		fmt.Fprintf(w, "Probability of backtest overfitting: %.3f  (%d blocks, %d splits of %d trials over %d bars)\n", p.Probability, p.Blocks, p.Splits, p.Trials, p.Periods)
		fmt.Fprintf(w, "  %s\n", sweep.PBOExplanation)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// sweepFigure is a column of the sweep's table after the objective.
type sweepFigure struct {
	key, head string
	cell      func(s engine.Summary) string
}

var sweepFigures = []sweepFigure{
	{"total_return", "RETURN", func(s engine.Summary) string { return fmt.Sprintf("%.2f%%", s.TotalReturn*100) }},
	{"sharpe_ratio", "SHARPE", func(s engine.Summary) string { return fmtOpt(s.SharpeRatio, "%.3f") }},
	{"max_drawdown_pct", "MAX DD", func(s engine.Summary) string { return fmt.Sprintf("%.2f%%", s.MaxDrawdownPct) }},
	{"total_trades", "TRADES", func(s engine.Summary) string { return fmt.Sprint(s.TotalTrades) }},
}
