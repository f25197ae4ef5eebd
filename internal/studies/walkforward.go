package studies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
)

// WalkForwardSpec is the walk_forward of a study request: each window a number of bars or
// a duration such as "2y", "6M", "4w" or "90d".
type WalkForwardSpec struct {
	Train    json.RawMessage `json:"train"`
	Test     json.RawMessage `json:"test"`
	Step     json.RawMessage `json:"step,omitempty"` // default: test
	Anchored bool            `json:"anchored"`
}

// parse reads the request's windows.
func (w WalkForwardSpec) parse() (sweep.WalkForward, error) {
	out := sweep.WalkForward{Anchored: w.Anchored}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *sweep.Window
	}{{"train", w.Train, &out.Train}, {"test", w.Test, &out.Test}, {"step", w.Step, &out.Step}} {
		raw := bytes.TrimSpace(f.raw)
		if len(raw) == 0 || string(raw) == "null" {
			if f.name == "step" {
				continue
			}
			return out, apperr.Invalid("walk_forward.%s is required: a number of bars such as 500, or a duration such as 2y, 6M, 4w or 90d", f.name)
		}
		var n int
		var s string
		switch {
		case json.Unmarshal(raw, &n) == nil:
			if n < 1 || n > 10_000_000 {
				return out, apperr.Invalid("walk_forward.%s: a number of bars must be from 1 to 10000000, got %d", f.name, n)
			}
			*f.dst = sweep.Window{Bars: n}
		case json.Unmarshal(raw, &s) == nil:
			win, err := sweep.ParseWindow(s)
			if err != nil {
				return out, apperr.Invalid("walk_forward.%s: %s", f.name, err)
			}
			*f.dst = win
		default:
			return out, apperr.Invalid("walk_forward.%s must be a whole number of bars or a duration such as \"2y\", got %s", f.name, raw)
		}
	}
	return out, nil
}

// planFolds lays the walk-forward folds over the bars the study will run on (the union of
// its symbols' bar times).
func (s *Service) planFolds(ctx context.Context, spec WalkForwardSpec, source string, symbols []string, versions map[string]int, tf string, start, end time.Time) ([]store.CopyStudyFoldsParams, error) {
	wf, err := spec.parse()
	if err != nil {
		return nil, err
	}
	var times []time.Time
	for _, sym := range symbols {
		bars, err := s.feeds.AtVersion(ctx, source, sym, tf, start, end, versions[sym])
		if ae, ok := apperr.As(err); ok {
			return nil, apperr.Invalid("walk_forward needs the study's bars: %s", ae.Detail)
		}
		if err != nil {
			return nil, fmt.Errorf("load bars of %s: %w", sym, err)
		}
		for _, b := range bars {
			times = append(times, b.Time)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	times = slices.CompactFunc(times, time.Time.Equal)
	folds, err := wf.Folds(times)
	if err != nil {
		return nil, apperr.Invalid("walk_forward: %s", err)
	}
	out := make([]store.CopyStudyFoldsParams, len(folds))
	for i, f := range folds {
		out[i] = store.CopyStudyFoldsParams{Fold: int32(i), TrainStart: times[f.TrainFrom], TrainEnd: times[f.TrainTo-1],
			TestStart: times[f.TestFrom], TestEnd: times[f.TestTo-1]}
	}
	return out, nil
}

// window is feeds cut to the bars from from to to, both included.
func window(feeds []engine.Feed, from, to time.Time) []engine.Feed {
	out := make([]engine.Feed, len(feeds))
	for i, f := range feeds {
		lo, _ := slices.BinarySearchFunc(f.Bars, from, func(b engine.Bar, t time.Time) int { return b.Time.Compare(t) })
		hi, _ := slices.BinarySearchFunc(f.Bars, to, func(b engine.Bar, t time.Time) int { return b.Time.Compare(t) })
		if hi < len(f.Bars) && f.Bars[hi].Time.Equal(to) {
			hi++
		}
		out[i] = engine.Feed{Symbol: f.Symbol, Bars: f.Bars[lo:hi:hi]}
	}
	return out
}

// advance moves the study's folds whose in-sample trials have all run on to their
// out-of-sample run, enqueued in tx: exactly once per fold, whoever calls it.
func (s *Service) advance(ctx context.Context, tx pgx.Tx, id string) error {
	moved, err := s.q.AdvanceStudyFolds(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("advance the folds of %s: %w", id, err)
	}
	var params []river.InsertManyParams
	for _, m := range moved {
		if m.Status == foldTesting {
			params = append(params, river.InsertManyParams{Args: FoldArgs{StudyID: id, Fold: m.Fold}})
		}
	}
	if len(params) == 0 {
		return nil
	}
	if s.queue == nil {
		return errors.New("studies: no job queue configured")
	}
	owner, err := s.q.StudyOwner(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("owner of %s: %w", id, err)
	}
	for i := range params {
		params[i].InsertOpts = s.insertOpts(owner)
	}
	if _, err := s.queue.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue the out-of-sample runs of %s: %w", id, err)
	}
	return nil
}

// States of a fold besides the study's.
const (
	foldOptimising = "optimising" // its in-sample trials run
	foldTesting    = "testing"    // its winner runs out of sample
)

// FoldArgs are the arguments of a fold's out-of-sample job.
type FoldArgs struct {
	StudyID string `json:"study_id"`
	Fold    int32  `json:"fold"`
}

// Kind implements river.JobArgs.
func (FoldArgs) Kind() string { return "study_fold" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (FoldArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.Queue, MaxAttempts: jobs.MaxAttempts}
}

type foldWorker struct {
	river.WorkerDefaults[FoldArgs]
	s *Service
}

func (w *foldWorker) Timeout(*river.Job[FoldArgs]) time.Duration {
	return jobs.JobTimeout(w.s.cfg.RunTimeout)
}

func (w *foldWorker) Work(ctx context.Context, job *river.Job[FoldArgs]) error {
	return w.s.ExecuteFold(ctx, job)
}

// ExecuteFold runs a fold's winner out of sample: on the bars from the fold's training
// start to its test end, trading from the test start only, so that its indicators warm up
// on the bars before the window while no in-sample position exists on out-of-sample bars.
func (s *Service) ExecuteFold(ctx context.Context, job *river.Job[FoldArgs]) error {
	id, fold := job.Args.StudyID, job.Args.Fold
	row, err := s.q.GetStudy(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", id, err)
	}
	f, err := s.q.GetStudyFold(ctx, s.db.Pool, store.GetStudyFoldParams{StudyID: id, Fold: fold})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load fold %d of %s: %w", fold+1, id, err)
	}
	if f.Status != foldTesting || !Status(row.Status).Active() {
		return nil
	}
	fail := func(msg string) error {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := s.q.FailStudyFold(c, s.db.Pool, store.FailStudyFoldParams{StudyID: id, Fold: fold, Error: &msg}); err != nil {
			return fmt.Errorf("store the failure of fold %d of %s: %w", fold+1, id, err)
		}
		s.finish(c, id, nil)
		return nil
	}
	// The run is one unit of the owner's fair share, as a batch is.
	runCtx, end, err := s.hold(ctx, job.ID, row, []int32{}, &fold)
	if errors.Is(err, fairshare.ErrBusy) {
		return river.JobSnooze(fairshare.Wait())
	}
	if err != nil {
		return s.retryFold(job, err, fail)
	}
	defer end()
	if err := s.q.StartStudy(ctx, s.db.Pool, id); err != nil {
		return s.retryFold(job, fmt.Errorf("start %s: %w", id, err), fail)
	}
	cfg, failMsg, err := s.runConfig(ctx, row)
	if err != nil {
		return s.retryFold(job, err, fail)
	}
	if failMsg != "" {
		return fail(failMsg)
	}
	if err := json.Unmarshal(f.Params, &cfg.Params); err != nil {
		return fail(fmt.Sprintf("the winner's stored parameters: %v", err))
	}
	cfg.Feeds, cfg.TradeFrom = window(cfg.Feeds, f.TrainStart, f.TestEnd), f.TestStart

	release, ok := s.cfg.Runner.Slot(runCtx, cfg.Owner, fairshare.Study)
	if !ok {
		return interrupted(runCtx)
	}
	defer release()

	res, err := s.cfg.Runner.Run(runCtx, cfg)
	var re *jsrt.RunError
	switch {
	case errors.As(err, &re) && re.Kind == jsrt.KindCancelled:
		return interrupted(runCtx)
	case errors.As(err, &re):
		return fail("the out-of-sample run failed: " + re.Message)
	case err != nil:
		return s.retryFold(job, err, fail)
	}
	stats := engine.ComputeStatistics(res.InitialCash, res.Equity, res.Trades, res.Summary.SQN, nil)
	p := store.CompleteStudyFoldParams{StudyID: id, Fold: fold, OosTotalReturn: &res.Summary.TotalReturn,
		OosAnnualReturn: res.Summary.AnnualReturn, OosSharpeRatio: res.Summary.SharpeRatio,
		OosMaxDrawdownPct: &res.Summary.MaxDrawdownPct, OosTotalTrades: ptr(int32(res.Summary.TotalTrades)),
		OosTimes: make([]time.Time, len(res.Equity)), OosValues: make([]float64, len(res.Equity))}
	if v, ok := (sweep.Objective{Metric: row.Objective}).Value(res.Summary, &stats); ok {
		p.OosObjective = &v
	}
	for i, e := range res.Equity {
		p.OosTimes[i], p.OosValues[i] = e.Time, e.Value
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.q.CompleteStudyFold(c, s.db.Pool, p); err != nil {
		return s.retryFold(job, fmt.Errorf("store fold %d of %s: %w", fold+1, id, err), fail)
	}
	s.finish(c, id, nil)
	return nil
}

func ptr[T any](v T) *T { return &v }

// retryFold is retry for a fold's job: River retries it, and on its last attempt the fold
// fails with the error.
func (s *Service) retryFold(job *river.Job[FoldArgs], err error, fail func(string) error) error {
	return jobs.Retry(s.log, job, "study fold", err, fail, "study", job.Args.StudyID, "fold", job.Args.Fold+1)
}

// Fold is one fold of a walk-forward analysis as the API shows it.
type Fold struct {
	Fold       int             `json:"fold"` // from 1
	Status     string          `json:"status"`
	Error      *string         `json:"error"`
	TrainStart string          `json:"train_start"`
	TrainEnd   string          `json:"train_end"`
	TestStart  string          `json:"test_start"`
	TestEnd    string          `json:"test_end"`
	BestIdx    *int32          `json:"best_idx"` // the in-sample winner's idx
	Params     json.RawMessage `json:"params"`
	// The winner's objective and annualised return in sample, then its figures out of
	// sample; Efficiency is its out-of-sample annual return over its in-sample one.
	ISObjective       *float64 `json:"is_objective"`
	ISAnnualReturn    *float64 `json:"is_annual_return"`
	OOSObjective      *float64 `json:"oos_objective"`
	OOSTotalReturn    *float64 `json:"oos_total_return"`
	OOSAnnualReturn   *float64 `json:"oos_annual_return"`
	OOSSharpeRatio    *float64 `json:"oos_sharpe_ratio"`
	OOSMaxDrawdownPct *float64 `json:"oos_max_drawdown_pct"`
	OOSTotalTrades    *int32   `json:"oos_total_trades"`
	OOSBars           int      `json:"oos_bars"`
	Efficiency        *float64 `json:"efficiency"`
}

// WalkForward is a walk-forward analysis's result: the fold table, the out-of-sample
// equity curves stitched end to end (each fold starts from the study's cash; the stitched
// curve compounds them), its statistics and the walk-forward efficiency.
type WalkForward struct {
	StudyID      string               `json:"study_id"`
	Status       string               `json:"status"`
	Objective    string               `json:"objective"`
	Spec         json.RawMessage      `json:"walk_forward"`
	Folds        []Fold               `json:"folds"`
	Equity       []engine.EquityPoint `json:"-"`
	Chart        *report.ChartConfig  `json:"chart"`         // the stitched curve against buy and hold
	Statistics   *engine.Statistics   `json:"statistics"`    // of the stitched curve; null before a fold completed
	AnnualReturn *float64             `json:"annual_return"` // of the stitched curve, as a run's summary annualises
	Efficiency   *float64             `json:"efficiency"`
	Explanations map[string]string    `json:"explanations"`
}

// EfficiencyExplanation says what walk-forward efficiency means.
const EfficiencyExplanation = "Walk-forward efficiency is the annualised return the chosen parameters made on data they were not chosen on (out of sample, stitched over every fold), divided by the mean annualised return they made where they were chosen (in sample). Around 0.5 or more is usually taken to mean the optimisation found something real; near 0 or negative means the in-sample results were mostly luck or fitting noise (Pardo, 2008). It is not given (—) when the winners made less than 1% a year in sample: a ratio of two figures near zero is no verdict."

// StitchExplanation says how the stitched curve is built.
const StitchExplanation = "Each fold's winner runs out of sample from the study's starting cash, its indicators warmed up on the bars before its window and without any position carried over from the training window. The stitched curve chains those runs: each fold's returns compound on the value the previous fold ended with."

// WalkForwardOf returns study id's walk-forward result; a 404 for an unknown id, a 409 for
// a study without walk-forward analysis.
func (s *Service) WalkForwardOf(ctx context.Context, id string) (WalkForward, error) {
	var row store.Study
	var folds []store.StudyFold
	err := s.db.WithSnapshot(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = s.load(ctx, tx, id); err != nil {
			return err
		}
		folds, err = s.q.StudyFolds(ctx, tx, id)
		return err
	})
	if err != nil {
		return WalkForward{}, err
	}
	if row.WalkForward == nil {
		return WalkForward{}, apperr.Conflict("Study %s has no walk-forward analysis: create one with walk_forward", id)
	}
	out := WalkForward{StudyID: id, Status: row.Status, Objective: row.Objective, Spec: row.WalkForward,
		Folds: make([]Fold, len(folds)), Explanations: map[string]string{"efficiency": EfficiencyExplanation, "stitched": StitchExplanation}}
	value := row.InitialCash
	var isAnnual []float64
	for i, f := range folds {
		out.Folds[i] = Fold{Fold: int(f.Fold) + 1, Status: f.Status, Error: f.Error,
			TrainStart: results.FormatTime(f.TrainStart), TrainEnd: results.FormatTime(f.TrainEnd),
			TestStart: results.FormatTime(f.TestStart), TestEnd: results.FormatTime(f.TestEnd),
			BestIdx: f.BestIdx, Params: f.Params, ISObjective: f.IsObjective, ISAnnualReturn: f.IsAnnualReturn,
			OOSObjective: f.OosObjective, OOSTotalReturn: f.OosTotalReturn, OOSAnnualReturn: f.OosAnnualReturn,
			OOSSharpeRatio: f.OosSharpeRatio, OOSMaxDrawdownPct: f.OosMaxDrawdownPct, OOSTotalTrades: f.OosTotalTrades,
			OOSBars: len(f.OosValues)}
		if Status(f.Status) != StatusCompleted {
			continue
		}
		if f.IsAnnualReturn != nil {
			isAnnual = append(isAnnual, *f.IsAnnualReturn)
			if f.OosAnnualReturn != nil {
				if e, ok := sweep.Efficiency(*f.OosAnnualReturn, []float64{*f.IsAnnualReturn}); ok {
					out.Folds[i].Efficiency = &e
				}
			}
		}
		start := value
		for k, v := range f.OosValues {
			value = start * v / row.InitialCash
			out.Equity = append(out.Equity, engine.EquityPoint{Time: f.OosTimes[k], Value: value})
		}
	}
	if len(out.Equity) == 0 {
		return out, nil
	}
	stats := engine.ComputeStatistics(row.InitialCash, out.Equity, nil, 0, nil)
	out.Statistics = &stats
	// annualised as a run's summary is (engine: compounded over the curve's calendar span)
	first, last := out.Equity[0], out.Equity[len(out.Equity)-1]
	if y := last.Time.Sub(first.Time).Hours() / 24 / 365.25; y > 0 && last.Value > 0 {
		annual := math.Pow(last.Value/row.InitialCash, 1/y) - 1
		out.AnnualReturn = &annual
		if e, ok := sweep.Efficiency(annual, isAnnual); ok {
			out.Efficiency = &e
		}
	}
	in := report.ChartInput{InitialCash: row.InitialCash, Equity: out.Equity, Benchmark: row.Symbols[0]}
	versions, err := s.dataVersions(ctx, row.ID)
	if err != nil {
		return WalkForward{}, err
	}
	if bars, err := s.feeds.AtVersion(ctx, row.DataSource, row.Symbols[0], row.Timeframe, row.StartDate, row.EndDate, versions[row.Symbols[0]]); err == nil {
		in.BenchBars = window([]engine.Feed{{Bars: bars}}, out.Equity[0].Time, out.Equity[len(out.Equity)-1].Time)[0].Bars
	}
	out.Chart, err = report.BuildChart("equity", in)
	if err != nil {
		return WalkForward{}, err
	}
	out.Chart.Title = "Stitched out-of-sample equity"
	return out, nil
}
