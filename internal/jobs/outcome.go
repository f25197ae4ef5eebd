package jobs

import (
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
)

// Retry is the one outcome policy of a job that met an infrastructure failure err (the
// database, a runner process lost): backtests, study batches and folds all use it. While
// the job has attempts left River retries it (Retry returns err, with a warning naming
// what failed). On its last attempt giveUp records the failure on the work itself, with
// msg saying why, so that nothing waits for ever, and the job is cancelled; an error from
// giveUp goes back to River, which tries again later.
func Retry[T river.JobArgs](log *slog.Logger, job *river.Job[T], what string, err error, giveUp func(msg string) error, attrs ...any) error {
	if job.Attempt < job.MaxAttempts {
		log.Warn(what+" failed; River will retry", append(attrs, "job_attempt", job.Attempt, "err", err)...)
		return err
	}
	if gerr := giveUp(fmt.Sprintf("could not run after %d attempts: %v", job.Attempt, err)); gerr != nil {
		return gerr
	}
	return river.JobCancel(err)
}
