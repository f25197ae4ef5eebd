package tasks

import "github.com/backtestd/backtestd/internal/states"

// Status is a task's state.
type Status string

// States of a task.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Actions on a task: the user's (cancel, retry, delete) and the workers'.
const (
	ActStart    = "start"
	ActComplete = "complete"
	ActFail     = "fail"
	ActCancel   = "cancel"
	ActHandBack = "hand back"
	ActReap     = "reap"
	ActRetry    = "retry"
	ActDelete   = "delete"
)

// Machine is a task's life: the one table of which action applies in which state. The
// service asks it before acting; the guards of the queries in db/queries/tasks.sql repeat
// it (TestSQLGuardsFollowTheMachine); docs/task-states.md is drawn from it.
var Machine = states.Machine[Status]{
	Entity: "task",
	States: []Status{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled},
	Transitions: []states.Transition[Status]{
		{Action: ActStart, From: []Status{StatusPending, StatusRunning}, To: StatusRunning,
			Why: "a worker takes the current attempt under a new lease; a running task again when River rescued the job of a worker that died"},
		{Action: ActComplete, From: []Status{StatusRunning}, To: StatusCompleted, Why: "the run ended and its result is stored, in one transaction"},
		{Action: ActFail, From: []Status{StatusPending, StatusRunning}, To: StatusFailed,
			Why: "the strategy failed, its data or version is gone, or the run failed on its last attempt"},
		{Action: ActCancel, From: []Status{StatusPending, StatusRunning}, To: StatusCancelled,
			Why: "the user cancels it: its job is removed (pending) or stopped (running)"},
		{Action: ActHandBack, From: []Status{StatusRunning}, To: StatusPending, Why: "a stopping worker returns the attempt to the queue, as if it had not started"},
		{Action: ActReap, From: []Status{StatusRunning}, To: StatusPending, Why: "its worker stopped renewing its lease: another worker runs the attempt again"},
		{Action: ActRetry, From: []Status{StatusFailed, StatusCancelled}, To: StatusPending, Why: "the user runs it again as a new attempt"},
		{Action: ActDelete, From: []Status{StatusCompleted, StatusFailed, StatusCancelled}, To: "",
			Why: "the user removes it with its attempts, result and logs; an active task must be cancelled first"},
	},
}

// sqlGuards are the queries that carry out the machine's transitions, for the test that
// keeps their WHERE clauses and the table in step.
var sqlGuards = []states.Guard{
	{Query: "StartTaskRun", Action: ActStart, Column: "tasks.status"},
	{Query: "CompleteTaskRun", Action: ActComplete, Column: "tasks.status"},
	{Query: "FailTask", Action: ActFail, Column: "status"},
	{Query: "CancelTask", Action: ActCancel, Column: "status"},
	{Query: "HandBackTask", Action: ActHandBack, Column: "status"},
	{Query: "ReapLostTasks", Action: ActReap, Column: "status"},
	{Query: "RetryTask", Action: ActRetry, Column: "status"},
	{Query: "DeleteFinishedTask", Action: ActDelete, Column: "status"},
}

// Can reports whether action applies to a task in state s.
func (s Status) Can(action string) bool { return Machine.Can(s, action) }

// Active reports whether a task in state s is waiting or running.
func (s Status) Active() bool { return s == StatusPending || s == StatusRunning }
