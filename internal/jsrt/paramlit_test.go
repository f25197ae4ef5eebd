package jsrt

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/dop251/goja/parser"
)

// TestParamTypeFollowsLiteral: a number parameter's type is the one its literal has in Python
// (backtrader's language): 2.0 is a float, 2 an int.
func TestParamTypeFollowsLiteral(t *testing.T) {
	t.Parallel()
	type p struct {
		def any
		typ string
	}
	tests := []struct {
		name string
		code string
		want map[string]p
	}{
		{"static field", `class A extends Strategy { static params = { devfactor: 2.0, period: 20, ratio: 0.5 }; }`,
			map[string]p{"devfactor": {2.0, "float"}, "period": {int64(20), "int"}, "ratio": {0.5, "float"}}},
		{"trailing point", `class A extends Strategy { static params = { a: 2., b: 2 }; }`,
			map[string]p{"a": {2.0, "float"}, "b": {int64(2), "int"}}},
		{"leading point", `class A extends Strategy { static params = { a: .5 }; }`,
			map[string]p{"a": {0.5, "float"}}},
		{"exponent", `class A extends Strategy { static params = { a: 1e3, b: 1E3, c: 2.5e-1, d: 1000 }; }`,
			map[string]p{"a": {1000.0, "float"}, "b": {1000.0, "float"}, "c": {0.25, "float"}, "d": {int64(1000), "int"}}},
		{"negative", `class A extends Strategy { static params = { a: -2.0, b: -2, c: +3.0, d: - -1.0 }; }`,
			map[string]p{"a": {-2.0, "float"}, "b": {int64(-2), "int"}, "c": {3.0, "float"}, "d": {1.0, "float"}}},
		{"zero", `class A extends Strategy { static params = { a: 0.0, b: 0, c: -0.0 }; }`,
			map[string]p{"a": {0.0, "float"}, "b": {int64(0), "int"}, "c": {0.0, "float"}}},
		{"hex octal binary and separators are ints", `class A extends Strategy { static params = { a: 0x10, b: 0o17, c: 0b101, d: 1_000 }; }`,
			map[string]p{"a": {int64(16), "int"}, "b": {int64(15), "int"}, "c": {int64(5), "int"}, "d": {int64(1000), "int"}}},
		{"quoted keys", `class A extends Strategy { static params = { "dev-factor": 2.0, 'n': 3 }; }`,
			map[string]p{"dev-factor": {2.0, "float"}, "n": {int64(3), "int"}}},
		{"static getter", `class A extends Strategy { static get params() { return { devfactor: 2.0, n: 3 }; } }`,
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(3), "int"}}},
		{"assigned after the class", "class A extends Strategy {}\nA.params = { devfactor: 2.0, n: 3 };",
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(3), "int"}}},
		{"assigned by bracket", "class A extends Strategy {}\nA['params'] = { devfactor: 2.0 };",
			map[string]p{"devfactor": {2.0, "float"}}},
		{"class expression", `const A = class extends Strategy { static params = { devfactor: 2.0, n: 3 }; };`,
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(3), "int"}}},
		// the first class extending Strategy is the strategy, so a subclass is one that extends a
		// helper class declared without params of its own
		{"inherited", "class Base extends Strategy {}\nBase.params = { devfactor: 2.0 };\nclass A extends Base {}",
			map[string]p{"devfactor": {2.0, "float"}}},
		{"spread from a helper", "const common = { devfactor: 2.0, n: 1 };\nclass A extends Strategy { static params = { ...common, size: 10 }; }",
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(1), "int"}, "size": {int64(10), "int"}}},
		{"spread from another class", "class Helper { static params = { devfactor: 2.0, n: 1 }; }\nclass A extends Strategy { static params = { ...Helper.params, size: 10 }; }",
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(1), "int"}, "size": {int64(10), "int"}}},
		{"Object.assign", "class A extends Strategy { static params = Object.assign({}, { devfactor: 2.0 }, { n: 4 }); }",
			map[string]p{"devfactor": {2.0, "float"}, "n": {int64(4), "int"}}},
		{"own int wins over another class's float", "class A extends Strategy { static params = { k: 2 }; }\nclass Other { static params = { k: 2.0 }; }",
			map[string]p{"k": {int64(2), "int"}}},
		{"own float wins over another class's int", "class Other { static params = { k: 2 }; }\nclass A extends Strategy { static params = { k: 2.0 }; }",
			map[string]p{"k": {2.0, "float"}}},
		{"a later assignment overrides the field", "class A extends Strategy { static params = { k: 2.0 }; }\nA.params = { k: 2 };",
			map[string]p{"k": {int64(2), "int"}}},
		// an expression's value has no written form: a whole result is an int
		{"computed values", `class A extends Strategy { static params = { k: 4.0 / 2, m: 2 * 0.75 }; }`,
			map[string]p{"k": {int64(2), "int"}, "m": {1.5, "float"}}},
		{"a float literal elsewhere does not count", "const other = { k: 2.0 };\nclass A extends Strategy { static params = { k: 2 }; next() { const x = { k: 2.0 }; } }",
			map[string]p{"k": {int64(2), "int"}}},
		{"nested object stays an object", `class A extends Strategy { static params = { o: { a: 2.0 }, k: 3 }; }`,
			map[string]p{"o": {`{"a":2}`, "object"}, "k": {int64(3), "int"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info, err := Inspect(context.Background(), tc.code)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]p{}
			for _, prm := range info.Params {
				got[prm.Name] = p{prm.Default, prm.Type}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("params\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestFloatParamValidation: a float parameter (written 2.0) takes 2.5; an int parameter
// refuses 2.5 and takes the whole float 3.0, as the reference's coercion says.
func TestFloatParamValidation(t *testing.T) {
	t.Parallel()
	info, err := Inspect(context.Background(), `class A extends Strategy { static params = { devfactor: 2.0, period: 20 }; }`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
		err  string
	}{
		{"float takes a fraction", map[string]any{"devfactor": 2.5}, map[string]any{"devfactor": 2.5}, ""},
		{"float takes a whole number", map[string]any{"devfactor": 3}, map[string]any{"devfactor": 3.0}, ""},
		{"float takes a numeric string", map[string]any{"devfactor": "1.75"}, map[string]any{"devfactor": 1.75}, ""},
		{"int takes a whole float", map[string]any{"period": 3.0}, map[string]any{"period": int64(3)}, ""},
		{"int refuses a fraction", map[string]any{"period": 2.5}, nil, "Parameter 'period': expected int, got float"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ValidateParams(info, tc.in)
			if tc.err != "" {
				var pe *ParamError
				if !errors.As(err, &pe) || pe.Message != tc.err {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestIsFloatLiteral(t *testing.T) {
	t.Parallel()
	for lit, want := range map[string]bool{
		"2.0": true, "2.": true, ".5": true, "1e3": true, "1E-3": true, "2": false, "0": false,
		"0x1E": false, "0XFF": false, "0o17": false, "0b1": false, "1_000": false, "1_000.5": true, "10n": false,
	} {
		if got := isFloatLiteral(lit); got != want {
			t.Errorf("isFloatLiteral(%q) = %v, want %v", lit, got, want)
		}
	}
}

// BenchmarkScanParamLiterals: the scan added to each compilation, on the largest example.
func BenchmarkScanParamLiterals(b *testing.B) {
	code, err := os.ReadFile("../../examples/pairs.js")
	if err != nil {
		b.Fatal(err)
	}
	prg, err := parser.ParseFile(nil, "s.js", string(code), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		scanParamLiterals(prg)
	}
}
