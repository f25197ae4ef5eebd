package jsrt

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/indicators.md from the indicator registry")

// TestIndicatorDocs holds docs/indicators.md to the registry: the page is generated from
// it (and from missing.txt's reasons), and the test fails when the file differs. Run with
// -update to rewrite it:
//
//	go test ./internal/jsrt -run TestIndicatorDocs -update
func TestIndicatorDocs(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "indicators.md")
	want := indicatorDocs(t)
	if *updateDocs {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/indicators.md is not what the registry makes: go test ./internal/jsrt -run TestIndicatorDocs -update")
	}
}

// indMinPeriod is the bar (1-based) of an entry's first value with its default parameters:
// backtrader's minperiod (the latest of its lines' first values), on inputs with values
// from the first bar. ok is false when a parameter has no default.
func indMinPeriod(d *IndDef, bars []engine.Bar) (int, bool) {
	args, err := d.args(nil)
	if err != nil || needsGiven(d) {
		return 0, false
	}
	c := columnsOf(bars)
	in := IndIn{Open: c.open, High: c.high, Low: c.low, Close: c.close, Volume: c.volume}
	switch d.Input {
	case InLine:
		in.Lines = []engine.Series{c.close}
	case InTwoLines:
		in.Lines = []engine.Series{c.close, c.open}
	}
	first := 0
	for _, s := range d.Compute(in, args)[:len(d.Lines)] {
		first = max(first, s.First)
	}
	return first + 1, true
}

// needsGiven reports whether an entry has a parameter it cannot compute without
// (IndParam.Required: a function, a line): its cases are the fixtures'.
func needsGiven(d *IndDef) bool {
	return slices.ContainsFunc(d.Params, func(p IndParam) bool { return p.Required && p.Default == nil })
}

// anchorOf is the anchor a markdown heading of family makes (GitHub's: lower case, what
// is not a letter, digit, '-' or '_' dropped).
func anchorOf(family string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(family) {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func paramDoc(p IndParam) string {
	var v string
	switch x := p.Default.(type) {
	case nil:
		v = "none"
	case string:
		v = x
		if p.Kind == ParamString {
			v = strconv.Quote(x)
		}
	case float64:
		v = strconv.FormatFloat(x, 'g', -1, 64)
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		v = "[" + strings.Join(parts, ", ") + "]"
	default:
		v = fmt.Sprint(x)
	}
	s := "`" + p.Name + "=" + v + "`"
	if len(p.Compat) > 0 {
		s += " (or `" + strings.Join(p.Compat, "`, `") + "`)"
	}
	return s
}

func indicatorDocs(t *testing.T) []byte {
	t.Helper()
	bars := walk(1500)
	defs := registeredInds()
	families := map[string][]*IndDef{}
	for _, d := range defs {
		families[d.Family] = append(families[d.Family], d)
	}
	names := make([]string, 0, len(families))
	for f := range families {
		if f != "project" {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	if _, ok := families["project"]; ok {
		names = append(names, "project")
	}
	var b strings.Builder
	b.WriteString(`# Indicators

Every indicator of the ` + "`ind`" + ` namespace, by backtrader's module (its family), generated
from the indicator registry (` + "`internal/jsrt/indreg.go`" + `) by
` + "`go test ./internal/jsrt -run TestIndicatorDocs -update`" + `; the test fails when this page is
stale. How to call them is in [Writing strategies](strategy-api.md#indicators-ind).

Each is ` + "`ind.<name>(inputs, parameters…)`" + ` under backtrader's class name and each of its
aliases. Inputs: *a line* (a data feed gives its close, a multi-line indicator its first
line), *a data feed* (its open, high, low, close and volume) or *two lines*. Parameters
come after the inputs, positionally in the order listed (or the order given) or as one
options object by name. An indicator of one line returns the line; one of several returns
an object of its lines by name, whose first line stands for it where a line is expected.
*First value* is the 1-based bar of the first value with the default parameters
(backtrader's minimum period; the latest of the lines). Values equal backtrader's to 1e-9
on every bar, warm-up included (` + "`testdata/backtrader/indicators/all`" + `, ` + "`TestRegistryParity`" + `).

`)
	b.WriteString("## Every name\n\n")
	type entry struct{ name, class, family string }
	var all []entry
	for _, d := range defs {
		for _, n := range d.names() {
			all = append(all, entry{n, d.Name, d.Family})
		}
	}
	sort.Slice(all, func(i, j int) bool { return strings.ToLower(all[i].name) < strings.ToLower(all[j].name) })
	items := make([]string, len(all))
	for i, e := range all {
		items[i] = "`" + e.name + "`"
		if e.name != e.class {
			items[i] += " (" + e.class + ")"
		}
		items[i] += " [" + e.family + "](#" + anchorOf(e.family) + ")"
	}
	b.WriteString(strings.Join(items, " · ") + "\n\n")
	for _, f := range names {
		fmt.Fprintf(&b, "## %s\n\n", f)
		if f == "project" {
			b.WriteString("The project's own, which backtrader lacks.\n\n")
		}
		b.WriteString("| name | aliases | input | parameters | lines | first value |\n|---|---|---|---|---|---|\n")
		for _, d := range families[f] {
			params := make([]string, len(d.Params))
			for i, p := range d.Params {
				params[i] = paramDoc(p)
			}
			ps := strings.Join(params, ", ")
			if d.Positional != nil {
				ps += "; positionally " + strings.Join(d.Positional, ", ")
			}
			if ps == "" {
				ps = "none"
			}
			lines := "`" + strings.Join(d.Lines, "`, `") + "`"
			if len(d.ExtraLines) > 0 {
				lines += "; also `" + strings.Join(d.ExtraLines, "`, `") + "`"
			}
			if len(d.CompatLines) > 0 {
				var c []string
				for _, k := range sortedKeys(d.CompatLines) {
					c = append(c, "`"+k+"` = `"+d.CompatLines[k]+"`")
				}
				lines += " (" + strings.Join(c, ", ") + ")"
			}
			first := "with the parameters given"
			if mp, ok := indMinPeriod(d, bars); ok {
				first = strconv.Itoa(mp)
			}
			aliases := "–"
			if len(d.Aliases) > 0 {
				aliases = "`" + strings.Join(d.Aliases, "`, `") + "`"
			}
			name := "`" + d.Name + "`"
			if d.Doc != "" {
				name += ": " + d.Doc
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, aliases, d.Input, ps, lines, first)
		}
		b.WriteString("\n")
	}
	missing := btMissing(t)
	if len(missing) > 0 {
		b.WriteString("## Not as in backtrader\n\nBacktrader's indicator classes not available, and names of a class (`Class.parameter`,\n`Class.line`, `Class.alias`) not as backtrader has them, with why\n(`testdata/backtrader/indicators/missing.txt`):\n\n")
		keys := make([]string, 0, len(missing))
		for k := range missing {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return strings.ToLower(keys[i]) < strings.ToLower(keys[j]) })
		for _, k := range keys {
			fmt.Fprintf(&b, "- `%s`: %s\n", k, missing[k])
		}
	}
	return []byte(b.String())
}
