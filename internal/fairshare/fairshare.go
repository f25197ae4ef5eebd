// Package fairshare is the one rule of how much work a user runs at once, for every kind
// of work a user queues: backtests (internal/tasks), study batches and walk-forward folds'
// out-of-sample runs (internal/studies), and price-path Monte Carlo reruns
// (internal/pricepaths, counted as study jobs). Each package calls it; none counts on its
// own.
//
//   - Admit: over all workers, one owner runs at most a limit of units at once (a running
//     backtest is one unit, a running study job is one), and the owner's waiting backtests
//     go before their study's jobs. A job refused with ErrBusy goes back to the queue with
//     river.JobSnooze(Wait()): no attempt is spent, nothing is lost, and other users' jobs
//     are fetched meanwhile. Work without an owner (accounts off) is not limited.
//   - Priority: where no limit applies (no owner, or a limit of 0), a study's jobs queue
//     behind single backtests, so a study cannot keep a single backtest waiting for the
//     whole study.
//   - Kind: in one process, runs that wait for a CPU place (internal/runner owns the
//     places) take turns: the place goes to the waiter whose owner holds the fewest places,
//     a single backtest before a study job, then first come.
//
// A study job runs for about one slice (internal/studies) and then goes back to the queue
// with its remaining combinations, so no unit holds a worker or a CPU place for long.
package fairshare

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/store"
)

// Kind is what a unit of work is, for the order of the CPU queue and the job queue.
type Kind int

// Kinds of work, the first preferred.
const (
	Backtest Kind = iota // a single backtest (a task)
	Study                // a study's job (a batch of combinations, a fold's out-of-sample run), or a price-path job
)

// ErrBusy refuses to start a unit whose owner already runs as many units as allowed.
var ErrBusy = errors.New("the owner runs as many units of work as allowed")

// Unit is the unit being started: its kind, and its name, which its own count leaves out
// (it may already be marked running when it is admitted): a task's id, or a study job's
// River job id.
type Unit struct {
	Kind Kind
	Task string
	Job  int64
}

// Load is what an owner runs and queues now, as Admit counts it.
type Load struct {
	Running          int // units running: backtests, and study jobs holding a lease
	WaitingBacktests int // backtests waiting to start
}

// Allowed reports whether a unit of kind may start for an owner with load l under limit
// (0: no limit): while the owner runs fewer than limit units, and for a study job only
// while none of the owner's backtests waits, so that the owner's own single backtest goes
// before their study's jobs as another user's does.
func Allowed(limit int, kind Kind, l Load) bool {
	if limit <= 0 {
		return true
	}
	if l.Running >= limit {
		return false
	}
	return kind != Study || l.WaitingBacktests == 0
}

// Admit returns ErrBusy when owner may not start u now (Allowed). It counts under a lock on
// the owner held until tx ends, so the caller marks u running in tx (a task's status, a
// study job's lease) and two workers cannot both start the owner's next unit. No owner or
// no limit costs no query.
func Admit(ctx context.Context, tx pgx.Tx, q *store.Queries, limit int, owner *string, u Unit) error {
	if limit <= 0 || owner == nil {
		return nil
	}
	if err := q.LockOwner(ctx, tx, *owner); err != nil {
		return fmt.Errorf("lock owner: %w", err)
	}
	n, err := q.CountOwnerUnits(ctx, tx, store.CountOwnerUnitsParams{Owner: owner, TaskID: u.Task, JobID: u.Job, PathsStaleSecs: PathsStale.Seconds()})
	if err != nil {
		return fmt.Errorf("count the owner's running work: %w", err)
	}
	if !Allowed(limit, u.Kind, Load{Running: int(n.Units), WaitingBacktests: int(n.WaitingBacktests)}) {
		return ErrBusy
	}
	return nil
}

// A price-path job (internal/pricepaths) counts as one unit of its requester while its row
// is running: the job touches the row every PathsBeat, and a row untouched for PathsStale
// (its worker died; River runs the job again later) stops counting.
const (
	PathsBeat  = 5 * time.Second
	PathsStale = 30 * time.Second
)

// OwnerWait is how long a unit refused by Admit waits before it is tried again, plus up to
// as much again (Wait).
const OwnerWait = 2 * time.Second

// Wait is the snooze of a unit refused by Admit: OwnerWait and a jitter that spreads the
// owner's waiting units.
func Wait() time.Duration {
	return OwnerWait + time.Duration(rand.Int64N(int64(OwnerWait)))
}

// Priority is the River priority of a job of kind for owner's work under limit. With the
// limit in force every job has the default priority: the owner's limit keeps the queue
// fair. Without it (no owner, or no limit) a study's jobs come after single backtests, so
// a study never keeps a single backtest waiting behind its queued batches.
func Priority(kind Kind, owner *string, limit int) int {
	if kind == Study && (owner == nil || limit <= 0) {
		return 2
	}
	return 1
}
