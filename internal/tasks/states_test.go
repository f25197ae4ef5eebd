package tasks

import (
	"os"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/store"
)

// TestSQLGuardsFollowTheMachine keeps the status guards of db/queries/tasks.sql and the
// machine in step: a state added to one and not the other fails here.
func TestSQLGuardsFollowTheMachine(t *testing.T) {
	sql, err := os.ReadFile("../../db/queries/tasks.sql")
	if err != nil {
		t.Fatal(err)
	}
	if problems := Machine.CheckSQL(string(sql), sqlGuards); len(problems) > 0 {
		t.Fatal(strings.Join(problems, "\n"))
	}
}

// TestStatesDoc checks that docs/task-states.md shows the machine as it is; run with
// UPDATE_DOCS=1 to write it.
func TestStatesDoc(t *testing.T) {
	const path = "../../docs/task-states.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	up, current, err := Machine.InDoc(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if current {
		return
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(up), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s does not show the task machine as it is: run UPDATE_DOCS=1 go test ./internal/tasks -run TestStatesDoc", path)
}

func TestUserActions(t *testing.T) {
	tests := []struct {
		s                        Status
		cancel, retry, deletable bool
	}{
		{StatusPending, true, false, false},
		{StatusRunning, true, false, false},
		{StatusCompleted, false, false, true},
		{StatusFailed, false, true, true},
		{StatusCancelled, false, true, true},
	}
	for _, tt := range tests {
		task := fromRow(store.Task{Status: string(tt.s)})
		if task.CanCancel != tt.cancel || task.CanRetry != tt.retry || task.CanDelete != tt.deletable {
			t.Errorf("%s: can cancel %v retry %v delete %v; want %v %v %v", tt.s, task.CanCancel, task.CanRetry, task.CanDelete, tt.cancel, tt.retry, tt.deletable)
		}
	}
}
