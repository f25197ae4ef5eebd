package studies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
	"github.com/backtestd/backtestd/internal/store"
)

// BatchArgs are the arguments of a study's job: which combinations it runs.
type BatchArgs struct {
	StudyID string  `json:"study_id"`
	Trials  []int32 `json:"trials"`
}

// Kind implements river.JobArgs.
func (BatchArgs) Kind() string { return "study_batch" }

// InsertOpts implements river.JobArgsWithInsertOpts: batches share the backtests' queue
// (and its workers) and their attempt policy.
func (BatchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.Queue, MaxAttempts: jobs.MaxAttempts}
}

type worker struct {
	river.WorkerDefaults[BatchArgs]
	s *Service
}

func (w *worker) Timeout(*river.Job[BatchArgs]) time.Duration {
	return jobs.JobTimeout(w.s.cfg.RunTimeout)
}

func (w *worker) Work(ctx context.Context, job *river.Job[BatchArgs]) error {
	return w.s.Execute(ctx, job)
}

// AddWorker registers the study workers with River: batches, and folds' out-of-sample runs.
func (s *Service) AddWorker(w *river.Workers) {
	river.AddWorker(w, &worker{s: s})
	river.AddWorker(w, &foldWorker{s: s})
}

// Timing of a batch.
const (
	flushEvery = 250 * time.Millisecond // trials are stored and progress published this often
	watchEvery = 250 * time.Millisecond // a running batch looks for its study's cancellation this often
	// A batch runs for at most its run time limit plus this, then hands its remaining
	// combinations to a new job: a job stays within River's timeout however many slow
	// combinations it holds, and one that starts a combination can always finish it.
	budgetSlack = 15 * time.Second
)

var (
	errCancelled = errors.New("the study was cancelled")
	errBudget    = errors.New("the batch used its time")
)

// outcome is a finished trial waiting to be stored.
type outcome struct {
	idx   int32
	trial runner.Trial
}

// Execute runs one batch: the batch's combinations still pending, in one runner process,
// storing their figures as they come. Trials already stored (by an earlier run of this job)
// are not run again. It returns nil when the batch is done or has nothing to do, and an
// error for River to retry after an infrastructure failure (the trials stored stay).
//
// The batch is one unit of its owner's fair share (fairshare.Admit): when the owner runs as
// many units as allowed it goes back to the queue without spending an attempt. Once it has
// computed for about a slice (Config.Slice) it stores what it ran and goes back to the
// queue too, with its remaining combinations: a study never holds a worker or a CPU place
// for long, so others' backtests (and, without accounts, the same user's) get their turn.
func (s *Service) Execute(ctx context.Context, job *river.Job[BatchArgs]) error {
	id := job.Args.StudyID
	row, err := s.q.GetStudy(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", id, err)
	}
	if !Status(row.Status).Active() {
		return nil
	}
	pending, err := s.q.PendingTrials(ctx, s.db.Pool, store.PendingTrialsParams{StudyID: id, Idx: job.Args.Trials})
	if err != nil {
		return fmt.Errorf("load trials of %s: %w", id, err)
	}
	if len(pending) == 0 {
		s.finish(ctx, id, nil)
		return nil
	}
	// Admitted, the batch holds a lease while it runs: if this process dies, a reaper in
	// another queues the pending trials again within about the lease timeout.
	runCtx, end, err := s.hold(ctx, job.ID, row, job.Args.Trials, nil)
	if errors.Is(err, fairshare.ErrBusy) {
		return river.JobSnooze(fairshare.Wait())
	}
	if err != nil {
		return s.retry(job, id, pending, err)
	}
	defer end()
	if err := s.q.StartStudy(ctx, s.db.Pool, id); err != nil {
		return s.retry(job, id, pending, fmt.Errorf("start %s: %w", id, err))
	}
	cfg, failMsg, err := s.runConfig(ctx, row)
	if err != nil {
		return s.retry(job, id, pending, err)
	}
	if failMsg == "" && row.WalkForward != nil { // in sample: the fold's training bars only (a batch is one fold's: enqueue)
		f, err := s.q.GetStudyFold(ctx, s.db.Pool, store.GetStudyFoldParams{StudyID: id, Fold: pending[0].Fold})
		if err != nil {
			return s.retry(job, id, pending, fmt.Errorf("load fold %d: %w", pending[0].Fold+1, err))
		}
		cfg.Feeds = window(cfg.Feeds, f.TrainStart, f.TrainEnd)
	}
	if failMsg != "" { // the data or the version is gone: no combination can run
		out := make([]outcome, len(pending))
		for i, p := range pending {
			out[i] = outcome{idx: p.Idx, trial: runner.Trial{Err: &jsrt.RunError{Kind: jsrt.KindStrategy, Message: failMsg}}}
		}
		s.finish(ctx, id, out)
		return nil
	}

	release, ok := s.cfg.Runner.Slot(runCtx, cfg.Owner, fairshare.Study)
	if !ok {
		return interrupted(runCtx)
	}
	defer release()
	runCtx, cancelBudget := context.WithTimeoutCause(runCtx, s.cfg.RunTimeout+budgetSlack, errBudget)
	defer cancelBudget()

	params := make([]map[string]any, len(pending))
	for i, p := range pending {
		if err := json.Unmarshal(p.Params, &params[i]); err != nil {
			return fmt.Errorf("stored params of %s #%d: %w", id, p.Idx, err)
		}
	}
	var buf []outcome
	last := time.Now()
	flush := func() {
		if len(buf) > 0 {
			s.finish(ctx, id, buf)
			buf, last = buf[:0], time.Now()
		}
	}
	sliceEnd := time.Now().Add(s.cfg.Slice)
	perTrial := s.trialTime.get(id) // measured on earlier chunks of the study in this process
	for ran := 0; len(pending) > 0; {
		if ran > 0 && !time.Now().Before(sliceEnd) {
			// Its slice is used: the rest of the batch waits in the queue again (the trials
			// stored are not run again), behind what came meanwhile.
			flush()
			return river.JobSnooze(0)
		}
		// A chunk is what should fit in the rest of the slice, by the time of the chunks
		// before (without any, one combination): the runner process is kept between
		// chunks of the same code, and no run is cut short to end a slice.
		k := 1
		if perTrial > 0 {
			k = min(max(int(time.Until(sliceEnd)/perTrial), 1), len(pending))
		}
		reported := 0
		t0 := time.Now()
		err := s.cfg.Runner.RunBatch(runCtx, cfg, params[:k], row.Objective, func(t runner.Trial) {
			buf = append(buf, outcome{idx: pending[t.Index].Idx, trial: t})
			reported = t.Index + 1
			if time.Since(last) >= flushEvery {
				flush()
			}
		})
		var re *jsrt.RunError
		switch {
		case err == nil:
			perTrial = max(time.Since(t0)/time.Duration(k), time.Microsecond)
			s.trialTime.put(id, perTrial)
			ran += k
			pending, params = pending[k:], params[k:]
		case errors.As(err, &re) && re.Kind == jsrt.KindCancelled:
			flush()
			if errors.Is(context.Cause(runCtx), errBudget) {
				return s.continueLater(ctx, row, pending[reported:])
			}
			return interrupted(runCtx)
		case errors.As(err, &re):
			// The runner process was lost on this trial (its time or memory, a crash): it
			// fails, and the rest run in a new process.
			buf = append(buf, outcome{idx: pending[reported].Idx, trial: runner.Trial{Err: re}})
			ran += reported + 1
			pending, params = pending[reported+1:], params[reported+1:]
		default:
			flush()
			return s.retry(job, id, pending[reported:], err)
		}
	}
	flush()
	s.finish(ctx, id, nil)
	return nil
}

// trialTimes remembers how long a combination of each study took in this process, so that
// a batch's first chunk already fills its slice.
type trialTimes struct {
	mu sync.Mutex
	m  map[string]time.Duration
}

// maxTrialTimes bounds the studies remembered; past it they are forgotten all at once
// (their next batch starts with one combination again).
const maxTrialTimes = 256

func (t *trialTimes) get(study string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[study]
}

func (t *trialTimes) put(study string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m) >= maxTrialTimes {
		t.m = make(map[string]time.Duration)
	}
	t.m[study] = d
}

// interrupted is what a study job whose runs stopped early returns: nothing when the study
// was cancelled or a reaper took its lease (and queued what was left), and otherwise (the
// worker is stopping) the job goes back to the queue for another worker, no attempt spent.
func interrupted(runCtx context.Context) error {
	if cause := context.Cause(runCtx); errors.Is(cause, errCancelled) || errors.Is(cause, errLeaseLost) {
		return nil
	}
	return river.JobSnooze(0)
}

// runConfig loads what every combination runs with: the strategy version's code and the
// bars. failMsg says why no combination can run (the study's data or version is gone).
func (s *Service) runConfig(ctx context.Context, row store.Study) (cfg jsrt.RunConfig, failMsg string, err error) {
	ver, err := s.q.TaskRecordedVersion(ctx, s.db.Pool, store.TaskRecordedVersionParams{StrategyID: row.StrategyID, Version: row.StrategyVersion})
	if errors.Is(err, store.ErrNotFound) {
		return cfg, fmt.Sprintf("Strategy version not found: %s version %d", row.StrategyID, row.StrategyVersion), nil
	}
	if err != nil {
		return cfg, "", fmt.Errorf("load strategy version: %w", err)
	}
	versions, err := s.dataVersions(ctx, row.ID)
	if err != nil {
		return cfg, "", err
	}
	feeds := make([]engine.Feed, len(row.Symbols))
	for i, sym := range row.Symbols {
		bars, err := s.feeds.AtVersion(ctx, row.DataSource, sym, row.Timeframe, row.StartDate, row.EndDate, versions[sym])
		if ae, ok := apperr.As(err); ok {
			return cfg, "Data retrieval failed: " + ae.Detail, nil
		}
		if err != nil {
			return cfg, "", fmt.Errorf("load bars of %s: %w", sym, err)
		}
		if len(bars) == 0 {
			return cfg, fmt.Sprintf("Data retrieval failed: no data for %s in data source %s between %s and %s",
				sym, row.DataSource, row.StartDate.Format(time.DateOnly), row.EndDate.Format(time.DateOnly)), nil
		}
		feeds[i] = engine.Feed{Symbol: sym, Bars: bars}
	}
	return jsrt.RunConfig{Code: ver.Code, Feeds: feeds, Cash: row.InitialCash, Commission: row.Commission,
		TimeZone: row.Timezone, Owner: auth.OwnerOf(row.CreatedBy), WallTimeLimit: s.cfg.RunTimeout, MemoryLimit: s.cfg.MemoryLimit}, "", nil
}

// dataVersions are the bar versions study id reads by symbol (as_of); none: the latest.
func (s *Service) dataVersions(ctx context.Context, id string) (map[string]int, error) {
	rows, err := s.q.StudyDataVersions(ctx, s.db.Pool, id)
	if err != nil {
		return nil, fmt.Errorf("data versions of %s: %w", id, err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Symbol] = int(r.Version)
	}
	return out, nil
}

// watch cancels the batch's runs soon after the study is cancelled.
func (s *Service) watch(ctx context.Context, id string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			st, err := s.q.StudyStatus(ctx, s.db.Pool, id)
			if err == nil && !Status(st).Active() {
				cancel(errCancelled)
				return
			}
		}
	}
}

// continueLater hands the batch's remaining trials to a new job.
func (s *Service) continueLater(ctx context.Context, row store.Study, rest []store.PendingTrialsRow) error {
	if len(rest) == 0 {
		return nil
	}
	idx := make([]int32, len(rest))
	for i, r := range rest {
		idx[i] = r.Idx
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.db.WithTx(c, func(tx pgx.Tx) error { return s.enqueue(c, tx, row, idx) }); err != nil {
		return fmt.Errorf("hand on the rest of a batch of %s: %w", row.ID, err)
	}
	return nil
}

// retry decides what an infrastructure failure does: River retries the job, and on its
// last attempt the batch's remaining trials fail with the error (a study never waits for
// ever).
func (s *Service) retry(job *river.Job[BatchArgs], id string, rest []store.PendingTrialsRow, err error) error {
	return jobs.Retry(s.log, job, "study batch", err, func(msg string) error {
		out := make([]outcome, len(rest))
		for i, r := range rest {
			out[i] = outcome{idx: r.Idx, trial: runner.Trial{Err: &jsrt.RunError{Kind: jsrt.KindStrategy, Message: msg}}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.finish(ctx, id, out)
		return nil
	}, "study", id)
}

// finish stores trials in one transaction, moves on the folds whose trials have all run,
// ends the study if nothing is left to run, and publishes its progress. A failure to store
// is logged: the trials stay pending and run again when River retries the job.
func (s *Service) finish(ctx context.Context, id string, trials []outcome) {
	if ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		ctx = c
	}
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		bayes, err := s.lockRound(ctx, tx, id) // first: see bayes.go
		if err != nil {
			return err
		}
		for _, o := range trials {
			t := o.trial
			if t.Err != nil {
				msg := t.Err.Message
				if err := s.q.FailTrial(ctx, tx, store.FailTrialParams{StudyID: id, Idx: o.idx, Error: &msg}); err != nil {
					return fmt.Errorf("store trial %d: %w", o.idx, err)
				}
				continue
			}
			if err := s.q.CompleteTrial(ctx, tx, completeParams(id, o.idx, t)); err != nil {
				return fmt.Errorf("store trial %d: %w", o.idx, err)
			}
		}
		if bayes != nil {
			if _, err := s.nextRound(ctx, tx, *bayes); err != nil {
				return err
			}
		}
		if err := s.advance(ctx, tx, id); err != nil {
			return err
		}
		_, err = s.q.FinishStudy(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil // trials are left, or the study was cancelled
		}
		return err
	})
	if err != nil {
		s.log.Error("store study trials", "study", id, "err", err)
		return
	}
	s.publishProgress(ctx, id)
}

func completeParams(id string, idx int32, t runner.Trial) store.CompleteTrialParams {
	m := t.Summary
	i32 := func(v int) *int32 { x := int32(v); return &x }
	f := func(v float64) *float64 { return &v }
	return store.CompleteTrialParams{
		StudyID: id, Idx: idx, Objective: t.Objective, InitialCash: f(m.InitialCash), FinalValue: f(m.FinalValue),
		TotalReturn: f(m.TotalReturn), AnnualReturn: m.AnnualReturn, SharpeRatio: m.SharpeRatio,
		MaxDrawdown: f(m.MaxDrawdown), MaxDrawdownPct: f(m.MaxDrawdownPct), MaxDrawdownDuration: i32(m.MaxDrawdownDuration),
		TotalTrades: i32(m.TotalTrades), Won: i32(m.Won), Lost: i32(m.Lost), WinRate: f(m.WinRate),
		ProfitFactor: m.ProfitFactor, AvgWin: m.AvgWin, AvgLoss: m.AvgLoss, Sqn: f(m.SQN), Bars: i32(t.Bars),
		Returns: t.Returns,
	}
}
