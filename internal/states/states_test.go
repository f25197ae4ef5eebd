package states

import (
	"slices"
	"strings"
	"testing"
)

type light string

var traffic = Machine[light]{
	Entity: "light",
	States: []light{"red", "green", "amber"},
	Transitions: []Transition[light]{
		{Action: "go", From: []light{"red"}, To: "green", Why: "cars may go"},
		{Action: "slow", From: []light{"green"}, To: "amber"},
		{Action: "stop", From: []light{"amber", "green"}, To: "red"},
		{Action: "remove", From: []light{"red"}},
	},
}

func TestMachine(t *testing.T) {
	tests := []struct {
		state  light
		action string
		want   bool
	}{
		{"red", "go", true}, {"green", "go", false}, {"green", "stop", true}, {"amber", "stop", true},
		{"red", "stop", false}, {"red", "fly", false}, {"purple", "go", false},
	}
	for _, tt := range tests {
		if got := traffic.Can(tt.state, tt.action); got != tt.want {
			t.Errorf("Can(%s, %s) = %v, want %v", tt.state, tt.action, got, tt.want)
		}
	}
	if got := traffic.From("stop"); !slices.Equal(got, []light{"green", "amber"}) {
		t.Errorf("From(stop) = %v: want the machine's order of states", got)
	}
	for action, want := range map[string]string{"stop": "green or amber", "go": "red", "fly": "no state"} {
		if got := traffic.FromText(action); got != want {
			t.Errorf("FromText(%s) = %q, want %q", action, got, want)
		}
	}
	md := traffic.Markdown()
	for _, want := range []string{"| go | `red` | `green` | cars may go |", "| stop | `amber`, `green` | `red` |", "| remove | `red` | (removed) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestCheckSQL(t *testing.T) {
	const sql = `
-- name: Go :one
UPDATE lights SET state = 'green' WHERE id = $1 AND state = 'red' RETURNING *;

-- name: Stop :exec
-- Stops a light.
UPDATE lights l SET state = 'red' WHERE l.id = $1 AND l.state IN ('green', 'amber');

-- name: Slow :exec
UPDATE lights SET state = 'amber' WHERE id = $1 AND state IN ('green', 'red');

-- name: Remove :exec
DELETE FROM lights WHERE id = $1;
`
	got := traffic.CheckSQL(sql, []Guard{
		{Query: "Go", Action: "go", Column: "state"},
		{Query: "Stop", Action: "stop", Column: "l.state"},
		{Query: "Slow", Action: "slow", Column: "state"},     // accepts red too: wrong
		{Query: "Remove", Action: "remove", Column: "state"}, // no guard: wrong
		{Query: "Fly", Action: "go", Column: "state"},        // no such query
	})
	want := []string{
		"query Slow (slow) accepts state [green red]; the light machine says [green]",
		"query Remove: no guard on state after WHERE",
		"query Fly not found",
	}
	if !slices.Equal(got, want) {
		t.Errorf("CheckSQL =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInDoc(t *testing.T) {
	doc := "# Lights\n\n<!-- states:light -->\nold\n<!-- /states:light -->\n\nmore\n"
	up, current, err := traffic.InDoc(doc)
	if err != nil || current {
		t.Fatalf("InDoc of an old table: current %v, err %v", current, err)
	}
	if !strings.Contains(up, "<!-- states:light -->\n| action |") || !strings.HasSuffix(up, "<!-- /states:light -->\n\nmore\n") {
		t.Fatalf("updated doc:\n%s", up)
	}
	if again, current, err := traffic.InDoc(up); err != nil || !current || again != up {
		t.Fatalf("InDoc of the updated doc: current %v, err %v", current, err)
	}
	if _, _, err := traffic.InDoc("# nothing here\n"); err == nil {
		t.Fatal("InDoc of a doc without the lines: no error")
	}
}
