package runner

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/backtestd/backtestd/internal/engine"
)

// nonFinite names the first number in res that is NaN or ±Inf (such as the value of an
// order for 1e307 shares), or returns "" when every number is finite. Such a result
// cannot be stored or compared, so it fails the run.
func nonFinite(res *engine.Result) string {
	if p, bad := walk(reflect.ValueOf(res).Elem()); bad {
		return "result" + p
	}
	return ""
}

// walk reports whether v holds a number that is not finite and, if so, its path below
// v. The path is built only on the way back from a bad number: a result has tens of
// thousands of numbers, and naming each one on the way down cost more than the check.
func walk(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Float64:
		f := v.Float()
		return "", math.IsNaN(f) || math.IsInf(f, 0)
	case reflect.Pointer:
		if !v.IsNil() {
			return walk(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if f := t.Field(i); f.IsExported() {
				if p, bad := walk(v.Field(i)); bad {
					return "." + fieldName(f) + p, true
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if p, bad := walk(v.Index(i)); bad {
				return fmt.Sprintf("[%d]%s", i, p), true
			}
		}
	}
	return "", false
}

// fieldName is the JSON name users see in results.
func fieldName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
		return tag
	}
	return f.Name
}
