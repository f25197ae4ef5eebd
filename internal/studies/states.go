package studies

import "github.com/backtestd/backtestd/internal/states"

// Status is a study's state; its trials use the same names, without running.
type Status string

// States of a study.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Actions on a study: the user's (cancel, retry) and the workers'.
const (
	ActStart    = "start"
	ActComplete = "complete"
	ActFail     = "fail"
	ActCancel   = "cancel"
	ActRetry    = "retry"
)

// Machine is a study's life: the one table of which action applies in which state. The
// service asks it before acting; the guards of the queries in db/queries/studies.sql
// repeat it (TestSQLGuardsFollowTheMachine); docs/task-states.md is drawn from it.
var Machine = states.Machine[Status]{
	Entity: "study",
	States: []Status{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled},
	Transitions: []states.Transition[Status]{
		{Action: ActStart, From: []Status{StatusPending}, To: StatusRunning, Why: "a worker starts its first batch"},
		{Action: ActComplete, From: []Status{StatusRunning}, To: StatusCompleted,
			Why: "every combination and fold has run and at least one combination completed"},
		{Action: ActFail, From: []Status{StatusRunning}, To: StatusFailed, Why: "every combination has run and none completed"},
		{Action: ActCancel, From: []Status{StatusPending, StatusRunning}, To: StatusCancelled,
			Why: "the user cancels it: the combinations not yet run are cancelled, the results so far stay"},
		{Action: ActRetry, From: []Status{StatusCompleted, StatusFailed, StatusCancelled}, To: StatusPending,
			Why: "the user runs its failed and cancelled combinations and folds again (a 409 when there are none)"},
	},
}

// sqlGuards are the queries that carry out the machine's transitions, for the test that
// keeps their WHERE clauses and the table in step.
var sqlGuards = []states.Guard{
	{Query: "StartStudy", Action: ActStart, Column: "status"},
	{Query: "FinishStudy", Action: ActComplete, Column: "s.status"},
	{Query: "FinishStudy", Action: ActFail, Column: "s.status"},
	{Query: "CancelStudy", Action: ActCancel, Column: "status"},
	{Query: "ReopenStudy", Action: ActRetry, Column: "status"},
}

// Can reports whether action applies to a study in state s.
func (s Status) Can(action string) bool { return Machine.Can(s, action) }

// Active reports whether a study in state s is waiting or running.
func (s Status) Active() bool { return s == StatusPending || s == StatusRunning }
