package studies

import (
	"os"
	"strings"
	"testing"
)

// TestSQLGuardsFollowTheMachine keeps the status guards of db/queries/studies.sql and the
// machine in step.
func TestSQLGuardsFollowTheMachine(t *testing.T) {
	sql, err := os.ReadFile("../../db/queries/studies.sql")
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
	t.Fatalf("%s does not show the study machine as it is: run UPDATE_DOCS=1 go test ./internal/studies -run TestStatesDoc", path)
}
