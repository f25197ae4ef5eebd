// Package states describes an entity's life as a table of transitions: which actions apply
// in which states and where each leads. An entity (a task, a study) declares its Machine in
// one file; its service asks the machine (Can) before it acts, its SQL guards repeat the
// table's source states (CheckSQL tests that they do), the API tells the page what it may
// offer (can_cancel, can_retry, …), and the documentation is drawn from it (Markdown).
package states

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Transition is one row of a machine: action applies in the states From and leads to To.
type Transition[S ~string] struct {
	Action string
	From   []S
	To     S // "" for an action that removes the entity (delete)
	Why    string
}

// Machine is an entity's states and the transitions between them.
type Machine[S ~string] struct {
	Entity      string
	States      []S
	Transitions []Transition[S]
}

// Can reports whether action applies to an entity in state s.
func (m Machine[S]) Can(s S, action string) bool {
	for _, t := range m.Transitions {
		if t.Action == action && slices.Contains(t.From, s) {
			return true
		}
	}
	return false
}

// From is the states action applies in, in the machine's order of states.
func (m Machine[S]) From(action string) []S {
	var out []S
	for _, s := range m.States {
		if m.Can(s, action) {
			out = append(out, s)
		}
	}
	return out
}

// Names is the states as strings, for validating filters and for messages.
func (m Machine[S]) Names() []string {
	out := make([]string, len(m.States))
	for i, s := range m.States {
		out[i] = string(s)
	}
	return out
}

// FromText names the states action applies in, for an error message: "failed or cancelled".
func (m Machine[S]) FromText(action string) string {
	from := m.From(action)
	names := make([]string, len(from))
	for i, s := range from {
		names[i] = string(s)
	}
	switch len(names) {
	case 0:
		return "no state"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Markdown is the machine as a documentation table: one row per transition.
func (m Machine[S]) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| action | from | to | |\n|---|---|---|---|\n")
	for _, t := range m.Transitions {
		from := make([]string, len(t.From))
		for i, s := range t.From {
			from[i] = "`" + string(s) + "`"
		}
		to := "(removed)"
		if t.To != "" {
			to = "`" + string(t.To) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Action, strings.Join(from, ", "), to, t.Why)
	}
	return b.String()
}

// Guard names one SQL query that carries out action, and the column its WHERE clause
// guards the state by (e.g. "status", or "s.status" where the table is aliased).
type Guard struct {
	Query  string
	Action string
	Column string
}

// CheckSQL returns a description of each guard whose query, in the sqlc queries file text
// sql, does not accept exactly the states the machine gives its action: the first
// `column = 'x'` or `column IN ('x', 'y')` after the query's first WHERE.
func (m Machine[S]) CheckSQL(sql string, guards []Guard) []string {
	var problems []string
	for _, g := range guards {
		q, ok := query(sql, g.Query)
		if !ok {
			problems = append(problems, fmt.Sprintf("query %s not found", g.Query))
			continue
		}
		got, ok := guarded(q, g.Column)
		if !ok {
			problems = append(problems, fmt.Sprintf("query %s: no guard on %s after WHERE", g.Query, g.Column))
			continue
		}
		var want []string
		for _, s := range m.From(g.Action) {
			want = append(want, string(s))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			problems = append(problems, fmt.Sprintf("query %s (%s) accepts %s %v; the %s machine says %v",
				g.Query, g.Action, g.Column, got, m.Entity, want))
		}
	}
	return problems
}

// query cuts the text of one named query out of a sqlc queries file.
func query(sql, name string) (string, bool) {
	_, rest, ok := strings.Cut(sql, "-- name: "+name+" ")
	if !ok {
		return "", false
	}
	if i := strings.Index(rest, "-- name: "); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

var literal = regexp.MustCompile(`'([a-z_]+)'`)

// guarded finds the states column is compared with after the first WHERE of q.
func guarded(q, column string) ([]string, bool) {
	i := strings.Index(q, "WHERE ")
	if i < 0 {
		return nil, false
	}
	re := regexp.MustCompile(`(?:^|[^\w.])` + regexp.QuoteMeta(column) + `\s*(?:=\s*('[a-z_]+')|IN\s*\(([^)]*)\))`)
	m := re.FindStringSubmatch(q[i:])
	if m == nil {
		return nil, false
	}
	var out []string
	for _, l := range literal.FindAllStringSubmatch(m[1]+m[2], -1) {
		out = append(out, l[1])
	}
	return out, true
}

// InDoc returns doc with the machine's table (Markdown) between the lines
// `<!-- states:<entity> -->` and `<!-- /states:<entity> -->`, and whether the table there
// was already current. It is an error when doc has no such lines.
func (m Machine[S]) InDoc(doc string) (updated string, current bool, err error) {
	open, end := "<!-- states:"+m.Entity+" -->\n", "<!-- /states:"+m.Entity+" -->"
	before, rest, ok := strings.Cut(doc, open)
	if !ok {
		return doc, false, fmt.Errorf("no line %q", strings.TrimSpace(open))
	}
	old, after, ok := strings.Cut(rest, end)
	if !ok {
		return doc, false, fmt.Errorf("no line %q", end)
	}
	table := m.Markdown()
	return before + open + table + end + after, old == table, nil
}
