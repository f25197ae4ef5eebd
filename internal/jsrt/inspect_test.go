package jsrt

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

const smaCrossSrc = `/**
 * Moving-average crossover.
 * fast: period of the fast moving average
 * slow - period of the slow moving average
 * size: shares per trade
 */
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10, ratio: 0.95, name: "x", on: true, list: [1, 2.5], obj: {a: 1} };
  init() {}
  next() {}
}
`

func TestInspect(t *testing.T) {
	t.Parallel()
	info, err := Inspect(context.Background(), smaCrossSrc)
	if err != nil {
		t.Fatal(err)
	}
	if info.ClassName != "SmaCross" {
		t.Fatalf("class %q", info.ClassName)
	}
	if info.Description != "Moving-average crossover." {
		t.Errorf("description %q", info.Description)
	}
	want := []Param{
		{Name: "fast", Default: int64(10), Type: "int", Description: "period of the fast moving average"},
		{Name: "slow", Default: int64(30), Type: "int", Description: "period of the slow moving average"},
		{Name: "size", Default: int64(10), Type: "int", Description: "shares per trade"},
		{Name: "ratio", Default: 0.95, Type: "float"},
		{Name: "name", Default: "x", Type: "str"},
		{Name: "on", Default: true, Type: "bool"},
		{Name: "list", Default: []any{int64(1), 2.5}, Type: "list"},
		{Name: "obj", Default: `{"a":1}`, Type: "object"},
	}
	if !reflect.DeepEqual(info.Params, want) {
		t.Errorf("params\n got %#v\nwant %#v", info.Params, want)
	}
}

func TestInspectErrors(t *testing.T) {
	t.Parallel()
	junk := strings.Repeat("@#$%^&*( junk ", 2<<20/14)
	tests := []struct {
		name    string
		code    string
		msg     string
		line    int
		maxTime time.Duration // only where the load limit itself is under test; generous for loaded CI machines
	}{
		{"syntax error", "class A extends Strategy {\n  next() {\n    if (\n  }\n}\n", "Failed to load strategy: SyntaxError", 4, 0},
		{"no class", "const x = 1;\n", "Failed to load strategy: no Strategy subclass found", 0, 0},
		{"only Strategy", "class Strategy {}\n", "Failed to load strategy: no Strategy subclass found", 0, 0},
		{"not a subclass", "class Helper {}\n", "Helper is not a Strategy subclass", 0, 0},
		{"throws", "\n\nthrow new Error('boom');\nclass A extends Strategy {}\n", "Failed to load strategy: Error: boom", 3, 0},
		{"endless loop", "while (true) {}\nclass A extends Strategy {}\n", "Failed to load strategy: timed out", 0, 5 * time.Second},
		{"junk", junk, "Failed to load strategy: SyntaxError", 1, 0},
		{"require", "const fs = require('fs');\nclass A extends Strategy {}\n", "Failed to load strategy: ReferenceError: require is not defined", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := Inspect(context.Background(), tc.code)
			if d := time.Since(start); tc.maxTime > 0 && d > tc.maxTime {
				t.Errorf("took %s", d)
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want *LoadError, got %v", err)
			}
			if !strings.HasPrefix(le.Message, tc.msg) {
				t.Errorf("message %q, want prefix %q", le.Message, tc.msg)
			}
			if le.Line != tc.line {
				t.Errorf("line %d, want %d (%s)", le.Line, tc.line, le.Message)
			}
		})
	}
}

func TestInspectPicksFirstSubclass(t *testing.T) {
	t.Parallel()
	code := "class Helper {}\nclass Base extends Strategy { static params = {a: 1} }\nclass Child extends Base {}\n"
	info, err := Inspect(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	if info.ClassName != "Base" || len(info.Params) != 1 {
		t.Fatalf("%+v", info)
	}
}

func TestValidateParams(t *testing.T) {
	t.Parallel()
	info := &StrategyInfo{Params: []Param{
		{Name: "n", Type: "int"}, {Name: "f", Type: "float"}, {Name: "b", Type: "bool"}, {Name: "s", Type: "str"},
	}}
	got, err := ValidateParams(info, map[string]any{"n": "12", "f": float64(3), "b": "Yes", "s": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(12), "f": 3.0, "b": true, "s": "abc"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	got, _ = ValidateParams(info, map[string]any{"b": "no", "n": 7.0})
	if got["b"] != false || got["n"] != int64(7) {
		t.Fatalf("got %#v", got)
	}
	for _, tc := range []struct {
		in  map[string]any
		msg string
	}{
		{map[string]any{"zz": 1}, "Unknown parameter: zz"},
		{map[string]any{"n": "abc"}, "Parameter 'n': expected int, got str"},
		{map[string]any{"n": 1.5}, "Parameter 'n': expected int, got float"},
		{map[string]any{"f": "x"}, "Parameter 'f': expected float, got str"},
		{map[string]any{"b": []any{1}}, "Parameter 'b': expected bool, got list"},
		{map[string]any{"s": 3.0}, "Parameter 's': expected str, got int"},
	} {
		_, err := ValidateParams(info, tc.in)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%v: got %v, want %q", tc.in, err, tc.msg)
		}
	}
}

// TestInspectRefusesAsyncLifecycle checks that lifecycle methods the engine calls
// synchronously (init, prenext, next, notifyOrder, notifyTrade, stop) cannot be async or
// generator functions, however they are defined, while other async methods stay allowed.
// The refusal is the loader's, so a run of such code fails the same way.
func TestInspectRefusesAsyncLifecycle(t *testing.T) {
	t.Parallel()
	const sync = "the engine calls it synchronously"
	tests := []struct {
		name      string
		code      string
		msg       string // "" when the code loads
		line, col int
	}{
		{"async next", "class A extends Strategy {\n  init() {}\n  async next() { await 1; }\n}\n",
			"Failed to load strategy: next() must not be async: " + sync, 3, 3},
		{"async init", "class A extends Strategy {\n\tasync init() {}\n\tnext() {}\n}\n",
			"Failed to load strategy: init() must not be async: " + sync, 2, 2},
		{"async stop", "class A extends Strategy { next() {} async stop() {} }",
			"Failed to load strategy: stop() must not be async: " + sync, 1, 38},
		{"async prenext", "class A extends Strategy { async prenext() {} }",
			"Failed to load strategy: prenext() must not be async: " + sync, 1, 28},
		{"async notifyOrder", "class A extends Strategy {\n  async notifyOrder(o) {}\n}\n",
			"Failed to load strategy: notifyOrder() must not be async: " + sync, 2, 3},
		{"async notifyTrade", "class A extends Strategy {\n  async   notifyTrade(t) {}\n}\n",
			"Failed to load strategy: notifyTrade() must not be async: " + sync, 2, 3},
		{"async function on the prototype", "class A extends Strategy {}\nA.prototype.next = async function () {};\n",
			"Failed to load strategy: next() must not be async: " + sync, 0, 0},
		{"async arrow on the prototype", "class A extends Strategy {}\nA.prototype.next = async () => {};\n",
			"Failed to load strategy: next() must not be async: " + sync, 0, 0},
		{"inherited async next", "class Base extends Strategy {\n  async next() {}\n}\nclass A extends Base {}\n",
			"Failed to load strategy: next() must not be async: " + sync, 2, 3},
		{"generator next", "class A extends Strategy {\n  *next() {}\n}\n",
			"Failed to load strategy: next() must not be a generator: " + sync, 2, 3},
		{"toString replaced", "Function.prototype.toString = function () { return 'next() {}'; };\nclass A extends Strategy { async next() {} }\n",
			"Failed to load strategy: next() must not be async: " + sync, 2, 28},
		{"async helper allowed", "class A extends Strategy {\n  async fetchLater() {}\n  next() {}\n}\n", "", 0, 0},
		{"method named async allowed", "class A extends Strategy {\n  async() {}\n  next() { this.async(); }\n}\n", "", 0, 0},
		{"sync lifecycle allowed", "class A extends Strategy {\n  init() {}\n  prenext() {}\n  next() {}\n  notifyOrder(o) {}\n  notifyTrade(t) {}\n  stop() {}\n}\n", "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info, err := Inspect(context.Background(), tc.code)
			if tc.msg == "" {
				if err != nil || info.ClassName != "A" {
					t.Fatalf("refused: %v (%+v)", err, info)
				}
				return
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want *LoadError, got %v", err)
			}
			if le.Message != tc.msg || le.Line != tc.line || le.Column != tc.col {
				t.Errorf("got %q at %d:%d, want %q at %d:%d", le.Message, le.Line, le.Column, tc.msg, tc.line, tc.col)
			}
		})
	}
}

// TestRunRefusesAsyncNext checks that a stored strategy with an async next() fails its run
// with the loader's text instead of running a next() whose body never finishes.
func TestRunRefusesAsyncNext(t *testing.T) {
	t.Parallel()
	code := "class A extends Strategy {\n  async next() { await null; this.order(1); }\n}\n"
	_, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(20)}}})
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "strategy" || re.Message != "Failed to load strategy: next() must not be async: the engine calls it synchronously" || re.Line != 2 {
		t.Fatalf("got %v (%+v)", err, re)
	}
}

// TestDocSummary: a strategy's description is its doc comment's text before the parameter
// lines, whole: a sentence that runs onto a second line does not stop mid-sentence.
func TestDocSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, code, want string
	}{
		{"one line", smaCrossSrc, "Moving-average crossover."},
		{"a sentence over two lines", "/**\n * Buys when the fast average crosses above\n * the slow one, and sells when it crosses back.\n * fast: period of the fast average\n */\nclass S extends Strategy {\n  static params = { fast: 5 };\n  next() {}\n}\n",
			"Buys when the fast average crosses above the slow one, and sells when it crosses back."},
		{"stops at a tag", "/**\n * Holds.\n * @author x\n */\nclass S extends Strategy {\n  next() {}\n}\n", "Holds."},
		{"a colon in the text is not a parameter", "/**\n * Ratio: the fast over\n * the slow average.\n * fast - period\n */\nclass S extends Strategy {\n  static params = { fast: 5 };\n  next() {}\n}\n",
			"Ratio: the fast over the slow average."},
		{"no comment", "class S extends Strategy {\n  next() {}\n}\n", ""},
	}
	for _, tt := range tests {
		info, err := Inspect(context.Background(), tt.code)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if info.Description != tt.want {
			t.Errorf("%s: description %q, want %q", tt.name, info.Description, tt.want)
		}
	}
}
