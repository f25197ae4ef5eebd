package jsrt

import (
	"context"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// Limits of a study's constraint, over all its combinations together.
const (
	ConstraintTimeLimit   = 5 * time.Second
	ConstraintMemoryLimit = 256 << 20 // the process's heap growth: generous, as other goroutines allocate too
	MaxConstraintLength   = 1000
)

// Constraint evaluates a study's constraint, a JavaScript expression over the parameters p
// such as "p.fast < p.slow", for each combination: which ones to keep (the expression's
// truthiness). It runs in a runtime of its own with nothing but the language built-ins,
// under ConstraintTimeLimit and ConstraintMemoryLimit. An expression that does not compile,
// throws, or runs out of its limits is a *ParamError that says so.
func Constraint(ctx context.Context, expr string, combos []map[string]any) ([]bool, error) {
	bad := func(format string, a ...any) error {
		return &ParamError{Name: "constraint", Message: "Constraint: " + fmt.Sprintf(format, a...)}
	}
	if len(expr) > MaxConstraintLength {
		return nil, bad("too long, at most %d characters", MaxConstraintLength)
	}
	rt := newRuntime()
	g := startGuard(ctx, rt, ConstraintTimeLimit, ConstraintMemoryLimit)
	keep, err := func() (keep []bool, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = recovered(r)
			}
		}()
		// The expression is the body's only statement: "return (…)" cannot be escaped
		// from without a syntax error.
		v, err := rt.RunScript(scriptName, "(function (p) { 'use strict'; return (\n"+expr+"\n); })")
		if err != nil {
			return nil, err
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return nil, fmt.Errorf("not an expression")
		}
		keep = make([]bool, len(combos))
		for i, c := range combos {
			out, err := fn(goja.Undefined(), rt.ToValue(c))
			if err != nil {
				return nil, err
			}
			keep[i] = out.ToBoolean()
		}
		return keep, nil
	}()
	if reason := g.stop(); reason != nil {
		return nil, bad("%s", reason.Message)
	}
	if err != nil {
		msg, _, _ := jsErrorInfo(err)
		return nil, bad("%s", msg)
	}
	return keep, nil
}
