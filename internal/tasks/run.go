package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/findings"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
)

var _ jobs.Executor = (*Service)(nil)

// Progress throttling: an event when the run has moved at least 1% and 100 ms have passed
// since the last one (the first, at 0%, included), so a run of a few milliseconds sends its
// 0% and 100% only: each event is a NOTIFY and a delivery in every API process, and a flood
// of short runs sent five a run (issue 35). The row less often, from progressDBEvery into
// the run (a shorter run's row gets its progress with its completion: a commit per short
// run saved).
const (
	progressStep     = 1.0
	progressInterval = 100 * time.Millisecond
	progressDBEvery  = 250 * time.Millisecond
)

// failure is a run that cannot complete: permanent ones fail the task, others are retried.
type failure struct {
	msg       string
	permanent bool // true: no retry can help (strategy error, missing data, limits)
}

// Execute runs one backtest job: the execution steps of the task's current attempt.
// It returns nil when there is nothing to do (the task was cancelled, retried as a newer
// attempt or already finished: e.g. a rescued duplicate of a job that completed), a
// river.JobCancel error when the task failed for good, and a plain error for an
// infrastructure failure River should retry. On the last attempt such a failure fails the
// task, so a task is never left running.
func (s *Service) Execute(ctx context.Context, job *river.Job[jobs.RunArgs]) error {
	args := job.Args
	attempt := int32(args.Attempt)
	// The task and its attempt row change together: a cancel arriving in between must not
	// leave the attempt marked running after the task is cancelled.
	var row store.Task
	jobID := job.ID
	lease := rand.Int64()
	start := store.StartTaskRunParams{ID: args.TaskID, Attempt: attempt, Lease: &lease, Worker: &s.worker, JobID: &jobID}
	var err error
	if s.cfg.UserMaxRunning <= 0 {
		// No admission check: the task and its attempt row change in one statement.
		row, err = s.startTask(ctx, s.db.Pool, start)
	} else {
		err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
			var err error
			if row, err = s.startTask(ctx, tx, start); err != nil {
				return err
			}
			return fairshare.Admit(ctx, tx, s.q, s.cfg.UserMaxRunning, row.CreatedBy, fairshare.Unit{Kind: fairshare.Backtest, Task: row.ID}) // busy: rolls the start back
		})
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if errors.Is(err, fairshare.ErrBusy) {
		// Back to the queue without spending an attempt, behind what others submitted
		// meanwhile.
		return river.JobSnooze(fairshare.Wait())
	}
	if err != nil {
		return s.infraError(job, row, fmt.Errorf("start %s: %w", args.TaskID, err))
	}
	if job.Attempt > 1 {
		// The previous run of this attempt died: its partial log lines go.
		if err := s.q.DeleteTaskAttemptLogs(ctx, s.db.Pool, store.DeleteTaskAttemptLogsParams{TaskID: row.ID, Attempt: attempt}); err != nil {
			return s.infraError(job, row, fmt.Errorf("clear logs of %s: %w", row.ID, err))
		}
	}

	end := s.metrics.started(job.CreatedAt, len(job.Errors) == 0)
	outcome := "interrupted" // unless it completes or fails for good below
	defer func() { end(outcome) }()

	// The run holds the task's lease while it runs; if another worker takes the task over
	// (this one's heartbeats did not get through), the run stops and stores nothing.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	go s.holdLease(runCtx, row, stopRun)
	rec := newRunRecord(row)
	res, bench, fail, err := s.run(runCtx, row, rec)
	if errors.Is(context.Cause(runCtx), errLeaseLost) {
		return river.JobCancel(fmt.Errorf("task %s: %w", row.ID, errLeaseLost))
	}
	if err != nil {
		return s.infraError(job, row, err)
	}
	if fail != nil {
		if fail.permanent {
			s.fail(row, fail.msg)
			outcome = "failed"
			return river.JobCancel(errors.New(fail.msg))
		}
		if s.stopping.Load() && ctx.Err() != nil {
			return s.handBack(row)
		}
		return s.infraError(job, row, errors.New(fail.msg))
	}

	s.savePrints(ctx, row.ID, rec)
	done, err := s.complete(ctx, row, res, bench, rec)
	if err != nil {
		rec.flushLogs(ctx, s) // the run's last lines, as a run that fails keeps them
		return s.infraError(job, row, err)
	}
	if done {
		outcome = "completed"
	}
	return nil
}

// startTask marks the task's attempt running under this worker's lease, the task and its
// attempt row in one statement.
func (s *Service) startTask(ctx context.Context, db store.DBTX, p store.StartTaskRunParams) (store.Task, error) {
	r, err := s.q.StartTaskRun(ctx, db, p)
	return store.Task(r), err
}

// complete stores a finished run in one transaction of few round trips (a Pipeline): the
// run's last log lines, the task completed with its attempt and provenance, the result,
// and the events that say so (NOTIFY in the transaction: they are delivered when it
// commits, never before the result can be read). done is false when the task was
// cancelled while it finished (the cancel stands) or the lease is lost.
func (s *Service) complete(ctx context.Context, row store.Task, res *engine.Result, bench *engine.Benchmark, rec *runRecord) (done bool, err error) {
	prov, err := json.Marshal(rec.prov)
	if err != nil {
		return false, fmt.Errorf("provenance of %s: %w", row.ID, err)
	}
	sum, sumErr := json.Marshal(res.Summary)
	var reproduction bool
	err = s.db.WithPipeline(ctx, func(p *store.Pipeline) error {
		done, reproduction = false, false
		if err := s.storeLines(ctx, p, rec.chunk); err != nil {
			return fmt.Errorf("store the last log lines of %s: %w", row.ID, err)
		}
		c, err := s.q.CompleteTaskRun(ctx, p, store.CompleteTaskRunParams{ID: row.ID, Attempt: row.Attempt,
			TotalBars: int32(len(res.Equity)), Lease: row.Lease, Provenance: prov})
		if errors.Is(err, store.ErrNotFound) {
			return nil // cancelled while it finished, or the lease is lost: nothing more is stored
		}
		if err != nil {
			return fmt.Errorf("complete %s: %w", row.ID, err)
		}
		if err := results.Save(ctx, p, row.ID, int(row.Attempt), res, bench); err != nil {
			return err
		}
		if err := results.SaveFindings(ctx, p, row.ID, rec.findings); err != nil {
			return err
		}
		done, reproduction = true, c.Reproduction
		if reproduction || sumErr != nil {
			return nil // published after the commit: see below
		}
		// The run's last lines, its 100% and its completion, in the transaction.
		return s.publishEnd(ctx, s.pub.Via(p), row, rec, sum)
	})
	if err != nil {
		return false, err
	}
	if !done {
		rec.publishLogs(ctx, s)
		return false, nil
	}
	if reproduction || sumErr != nil {
		if sumErr != nil { // a figure JSON cannot carry: send what was stored
			sum, _ = s.storedSummary(ctx, row.ID)
		}
		s.checkReproduction(ctx, row.ID) // before the completion is published: a reader then sees the verdict
		if err := s.publishEnd(ctx, s.pub, row, rec, sum); err != nil && ctx.Err() == nil {
			s.log.Warn("publish the completion", "task", row.ID, "err", err)
		}
	}
	return true, nil
}

// publishEnd publishes the end of a completed run through pub: its last log lines, its
// 100% and its completion with the summary sum.
func (s *Service) publishEnd(ctx context.Context, pub *events.Publisher, t store.Task, rec *runRecord, sum json.RawMessage) error {
	if err := pub.PublishLogs(ctx, t.ID, events.SessionOf(t.CreatedBy, t.SessionID), rec.lines); err != nil {
		return err
	}
	if err := pub.Publish(ctx, events.Message{Event: events.KindProgress, Task: t.ID,
		Progr: &events.Progress{TaskID: t.ID, Progress: 100, CurrentBar: rec.steps, TotalBars: rec.steps}}); err != nil {
		return err
	}
	return pub.Publish(ctx, doneMessage(t.ID, t.SessionID, int(t.Attempt), StatusCompleted, nil, sum))
}

// run loads the data and the strategy version and runs the engine; the result comes with
// the task's benchmark over it. A nil result comes with a failure (the run cannot succeed
// or was interrupted) or an error (retry).
func (s *Service) run(ctx context.Context, t store.Task, rec *runRecord) (*engine.Result, *engine.Benchmark, *failure, error) {
	res, benchBars, fail, err := s.runEngine(ctx, t, rec)
	if res == nil {
		return nil, nil, fail, err
	}
	return res, &engine.Benchmark{Symbol: t.Benchmark, Values: engine.BuyAndHold(t.InitialCash, benchBars, res.Equity)}, nil, nil
}

// runEngine is run without the benchmark's values: it returns the benchmark's bars. rec
// gets the run's provenance.
func (s *Service) runEngine(ctx context.Context, t store.Task, rec *runRecord) (*engine.Result, []engine.Bar, *failure, error) {
	ver, err := s.q.TaskRunVersion(ctx, s.db.Pool, store.TaskRunVersionParams{DataSource: t.DataSource, TaskID: t.ID, StrategyID: t.StrategyID, Version: t.StrategyVersion})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("look up data source and strategy version: %w", err)
	}
	if !ver.SourceExists {
		return nil, nil, &failure{msg: "Unsupported data source: " + t.DataSource, permanent: true}, nil
	}
	if !ver.Found {
		return nil, nil, &failure{msg: fmt.Sprintf("Strategy version not found: %s version %d", t.StrategyID, t.StrategyVersion), permanent: true}, nil
	}
	var versions map[string]int // the bar versions it runs on (as_of, a reproduction); none: the latest
	if err := json.Unmarshal(ver.DataVersions, &versions); err != nil {
		return nil, nil, nil, fmt.Errorf("data versions of %s: %w", t.ID, err)
	}
	feeds := make([]engine.Feed, len(t.Symbols))
	steps := 0
	var benchBars []engine.Bar
	for i, sym := range withBenchmark(t.Symbols, t.Benchmark) {
		bars, fp, prints, err := s.feeds.AtPrintVersion(ctx, t.DataSource, sym, t.Timeframe, t.StartDate, t.EndDate, versions[sym])
		if ae, ok := apperr.As(err); ok { // the stored bars changed since the task was made
			return nil, nil, &failure{msg: "Data retrieval failed: " + ae.Detail, permanent: true}, nil
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("load bars of %s: %w", sym, err)
		}
		if len(bars) == 0 {
			return nil, nil, &failure{msg: fmt.Sprintf("Data retrieval failed: no data for %s in data source %s between %s and %s",
				sym, t.DataSource, t.StartDate.Format(time.DateOnly), t.EndDate.Format(time.DateOnly)), permanent: true}, nil
		}
		rec.feed(fp, prints)
		if sym == t.Benchmark {
			benchBars = bars
		}
		if i < len(feeds) {
			feeds[i] = engine.Feed{Symbol: sym, Bars: bars}
			steps = max(steps, len(bars))
		}
	}
	var params map[string]any
	if len(t.StrategyParams) > 0 {
		if err := json.Unmarshal(t.StrategyParams, &params); err != nil {
			return nil, nil, &failure{msg: "stored strategy_params are not an object: " + err.Error(), permanent: true}, nil
		}
	}
	rec.version(ver.Code, ver.Params, params)

	path := fmt.Sprintf("%s@v%d", t.StrategyID, t.StrategyVersion)
	if ver.Origin != "" && ver.Origin != "api" {
		path = ver.Origin
	}
	release, ok := s.cfg.Runner.Slot(ctx, auth.OwnerOf(t.CreatedBy), fairshare.Backtest)
	if !ok {
		return nil, nil, &failure{msg: "backtest cancelled before it started: " + context.Cause(ctx).Error()}, nil
	}
	defer release()
	// The sink, whose loop ticks every logEventInterval, starts with the run: in a flood the
	// runs waiting for a CPU place (99 of 100) woke the service 5,000 times a second.
	sink := s.newLogSink(t, path)
	defer sink.close() // early returns and panics; closed explicitly below otherwise
	// The first progress event comes when the run has gone on for progressInterval: a run
	// of a few milliseconds publishes only its end, with its completion.
	prog := &progress{s: s, task: t, total: steps, lastDB: time.Now(), lastPub: time.Now()}
	res, err := s.cfg.Runner.Run(ctx, jsrt.RunConfig{
		Code: ver.Code, Params: params,
		Feeds:         feeds,
		Cash:          t.InitialCash,
		Commission:    t.Commission,
		TimeZone:      t.Timezone,
		Owner:         auth.OwnerOf(t.CreatedBy),
		WallTimeLimit: s.cfg.RunTimeout,
		MemoryLimit:   s.cfg.MemoryLimit,
		OnProgress:    prog.report,
		OnLog:         sink.add,
	})
	if err != nil {
		sink.close()
		var re *jsrt.RunError
		if errors.As(err, &re) {
			switch re.Kind {
			case jsrt.KindStrategy, jsrt.KindTimeout, jsrt.KindMemory:
				return nil, nil, &failure{msg: re.Message, permanent: true}, nil
			}
			// cancelled: by the user (the status says so), or the worker is stopping.
			return nil, nil, &failure{msg: re.Message, permanent: false}, nil
		}
		return nil, nil, nil, fmt.Errorf("run %s: %w", t.ID, err)
	}
	// The last lines and the 100% go with the completion (complete).
	rec.lines, rec.chunk = sink.handOver()
	rec.steps = prog.total
	rec.findings = findings.Of(findings.Run{Result: res, Feeds: feeds, Parameters: declaredParams(ver.Params)})
	return res, benchBars, nil, nil
}

// handBack returns a run interrupted by this worker's shutdown to the queue: the task is
// pending again (not failed), its partial log goes, and River's snooze runs the job again
// at once elsewhere without counting an attempt. A task cancelled meanwhile stays so.
func (s *Service) handBack(t store.Task) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var back bool
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.q.HandBackTask(ctx, tx, store.HandBackTaskParams{ID: t.ID, Attempt: t.Attempt, Lease: t.Lease}); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil // cancelled or finished meanwhile
			}
			return err
		}
		back = true
		if err := s.q.HandBackTaskAttempt(ctx, tx, store.HandBackTaskAttemptParams{TaskID: t.ID, Attempt: t.Attempt}); err != nil {
			return err
		}
		return s.q.DeleteTaskAttemptLogs(ctx, tx, store.DeleteTaskAttemptLogsParams{TaskID: t.ID, Attempt: t.Attempt})
	})
	if err != nil {
		return fmt.Errorf("hand back %s: %w", t.ID, err)
	}
	if !back {
		return river.JobCancel(fmt.Errorf("task %s ended while its worker stopped", t.ID))
	}
	s.log.Info("worker stopping: backtest handed back to the queue", "task", t.ID, "attempt", t.Attempt)
	return river.JobSnooze(0)
}

// infraError decides what a retryable failure does: on the last attempt the task fails
// (it is never left running); before that River retries. A task the user cancelled in the
// meantime stays cancelled and the job ends.
func (s *Service) infraError(job *river.Job[jobs.RunArgs], t store.Task, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cur, gerr := s.q.GetTask(ctx, s.db.Pool, job.Args.TaskID)
	if gerr == nil && (!Status(cur.Status).Active() || cur.Attempt != int32(job.Args.Attempt)) {
		return river.JobCancel(fmt.Errorf("task %s is %s: %w", cur.ID, cur.Status, err))
	}
	return jobs.Retry(s.log, job, "backtest attempt", err, func(msg string) error {
		if t.ID == "" {
			t = cur
		}
		s.fail(t, "backtest "+msg)
		return nil
	}, "task", job.Args.TaskID)
}

// fail marks the task's attempt failed with msg, ends its log with msg as an ERROR line
// (the log tells the whole story of the attempt) and publishes both.
func (s *Service) fail(t store.Task, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var done bool
	now := time.Now().UTC()
	line := events.LogLine{Level: "ERROR", Message: store.Truncate(msg, maxLogMessage), Time: events.EpochSeconds(now), Source: "engine"}
	err := s.db.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.q.FailTask(ctx, tx, store.FailTaskParams{Error: &msg, ID: t.ID, Attempt: t.Attempt, Lease: t.Lease}); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		}
		done = true
		if err := s.storeLine(ctx, tx, t.ID, t.Attempt, now, line.Level, line.Message); err != nil {
			return fmt.Errorf("log the failure of %s: %w", t.ID, err)
		}
		return s.q.FinishTaskAttempt(ctx, tx, store.FinishTaskAttemptParams{Status: string(StatusFailed), Error: &msg, TaskID: t.ID, Attempt: t.Attempt})
	})
	if err != nil {
		s.log.Error("mark task failed", "task", t.ID, "err", err)
		return
	}
	if done {
		s.publish(ctx, events.Message{Event: events.KindLog, Task: t.ID, Session: t.SessionID, Owner: auth.OwnerOf(t.CreatedBy),
			Logs: []events.LogLine{line}})
		s.publishDone(ctx, t.ID, t.SessionID, int(t.Attempt), StatusFailed, &msg, nil)
	}
}

func (s *Service) publish(ctx context.Context, m events.Message) {
	if err := s.pub.Publish(ctx, m); err != nil && ctx.Err() == nil {
		s.log.Warn("publish event", "task", m.Task, "event", m.Event, "err", err)
	}
}

func (s *Service) publishDone(ctx context.Context, id, session string, attempt int, status Status, errText *string, result json.RawMessage) {
	if ctx.Err() != nil {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ctx = c
	}
	s.publish(ctx, doneMessage(id, session, attempt, status, errText, result))
}

func doneMessage(id, session string, attempt int, status Status, errText *string, result json.RawMessage) events.Message {
	return events.Message{Event: events.KindComplete, Task: id, Session: session,
		Done: &events.Complete{TaskID: id, Attempt: attempt, Status: string(status), Error: errText, Result: result}}
}

// storedSummary reads a completed task's summary as its completion event carries it.
func (s *Service) storedSummary(ctx context.Context, id string) (json.RawMessage, error) {
	sum, err := results.NewService(s.db.Pool).EngineSummary(ctx, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sum)
}

// progress throttles the engine's progress callbacks into events and row updates.
type progress struct {
	s       *Service
	task    store.Task
	total   int
	lastPct float64
	lastPub time.Time
	lastDB  time.Time
	cur     int
}

func (p *progress) report(current, total int) {
	p.cur, p.total = current, total
	now := time.Now()
	pct := 0.0
	if total > 0 {
		pct = float64(current) * 100 / float64(total)
	}
	if current < total && (pct-p.lastPct < progressStep || now.Sub(p.lastPub) < progressInterval) {
		return
	}
	if current >= total {
		// The last callback; final() publishes it once the run has really finished.
		return
	}
	p.lastPct, p.lastPub = pct, now
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.s.publish(ctx, events.Message{Event: events.KindProgress, Task: p.task.ID,
		Progr: &events.Progress{TaskID: p.task.ID, Progress: round2(pct), CurrentBar: current, TotalBars: total}})
	if now.Sub(p.lastDB) >= progressDBEvery {
		p.lastDB = now
		err := p.s.db.WithTxNoWait(ctx, func(tx store.DBTX) error {
			return p.s.q.SetTaskProgress(ctx, tx, store.SetTaskProgressParams{
				Progress: round2(pct), CurrentBar: int32(current), TotalBars: int32(total), ID: p.task.ID, Attempt: p.task.Attempt,
				Lease: p.task.Lease,
			})
		})
		if err != nil {
			p.s.log.Warn("store progress", "task", p.task.ID, "err", err)
		}
	}
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// Sweep fails pending or running tasks (unchanged for olderThan) whose job has ended or
// disappeared without finishing them: for example a job River discarded after its worker
// died on every attempt. With it no task stays pending or running forever. It returns how
// many tasks it failed.
func (s *Service) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	if s.queue == nil {
		return 0, errors.New("tasks: no job queue configured")
	}
	rows, err := s.q.UnfinishedTasksBefore(ctx, s.db.Pool, time.Now().Add(-olderThan))
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	n := 0
	for _, t := range rows {
		why := ""
		if t.JobID == nil {
			why = "it has no job"
		} else {
			job, err := s.queue.JobGet(ctx, *t.JobID)
			switch {
			case errors.Is(err, river.ErrNotFound):
				why = "its job was removed"
			case err != nil:
				return n, fmt.Errorf("sweep: job of %s: %w", t.ID, err)
			case job.State == rivertype.JobStateCompleted || job.State == rivertype.JobStateCancelled || job.State == rivertype.JobStateDiscarded:
				why = fmt.Sprintf("its job ended (%s) after %d attempts", job.State, job.Attempt)
			}
		}
		if why == "" {
			continue
		}
		s.fail(t, "backtest did not finish: "+why)
		n++
	}
	return n, nil
}
