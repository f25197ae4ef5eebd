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
	return walk(reflect.ValueOf(res).Elem(), "result")
}

func walk(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return path
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walk(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			if p := walk(v.Field(i), path+"."+fieldName(t.Field(i))); p != "" {
				return p
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if p := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// fieldName is the JSON name users see in results.
func fieldName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
		return tag
	}
	return f.Name
}
