package jsrt

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestConstraint(t *testing.T) {
	t.Parallel()
	combos := []map[string]any{{"fast": 5, "slow": 20}, {"fast": 30, "slow": 20}, {"fast": 10, "slow": 10}}
	for _, tt := range []struct {
		expr string
		want []bool
		err  string
	}{
		{"p.fast < p.slow", []bool{true, false, false}, ""},
		{"p.fast <= p.slow && p.slow % 10 === 0", []bool{true, false, true}, ""},
		{"p.slow", []bool{true, true, true}, ""},
		{"p.fast <", nil, "Constraint: SyntaxError"},
		{"1); }); (function() { return 1", nil, "Constraint: SyntaxError"},
		{"p.nope.x", nil, "Constraint: TypeError"},
		// Stopped by the time limit or, when the package's other tests allocate meanwhile,
		// by the memory limit (it watches the process's heap): stopped either way.
		{"(() => { while (true) {} })()", nil, "Constraint: strategy"},
		{"typeof require === 'undefined' && typeof process === 'undefined'", []bool{true, true, true}, ""},
		{strings.Repeat("1+", 600) + "1", nil, "too long"},
	} {
		got, err := Constraint(context.Background(), tt.expr, combos)
		if tt.err != "" {
			var pe *ParamError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%.40q: %v, want a ParamError with %q", tt.expr, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v %v, want %v", tt.expr, got, err, tt.want)
		}
	}
}
