package jsrt

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
)

// ParamError is a parameter validation failure; Message is the API's error text.
type ParamError struct {
	Name    string
	Message string
}

func (e *ParamError) Error() string { return e.Message }

// ValidateParams checks overrides against the strategy's parameters and
// returns them coerced to the declared types. Unknown names give "Unknown
// parameter: <name>"; values that cannot be coerced give "Parameter
// '<name>': expected <type>, got <type>". Errors are *ParamError. Names are
// checked in sorted order so the reported error is deterministic.
func ValidateParams(info *StrategyInfo, in map[string]any) (map[string]any, error) {
	decl := make(map[string]Param, len(info.Params))
	for _, p := range info.Params {
		decl[p.Name] = p
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]any, len(in))
	for _, name := range names {
		p, ok := decl[name]
		if !ok {
			return nil, &ParamError{Name: name, Message: "Unknown parameter: " + apperr.Quote(name)}
		}
		v, ok := coerce(p.Type, in[name])
		if !ok {
			return nil, &ParamError{Name: name, Message: fmt.Sprintf("Parameter '%s': expected %s, got %s", apperr.Quote(name), p.Type, typeName(in[name]))}
		}
		out[name] = v
	}
	return out, nil
}

// typeName names a decoded JSON (or Go) value with the parameter type names.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "str"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "int"
	case float32:
		return typeName(float64(x))
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "int"
		}
		return "float"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "int"
		}
		return "float"
	case []any:
		return "list"
	default:
		return "object"
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func coerce(typ string, v any) (any, bool) {
	switch typ {
	case "int":
		if f, ok := toFloat(v); ok {
			if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
				return nil, false
			}
			return int64(f), true
		}
		if s, ok := v.(string); ok {
			s = strings.TrimSpace(s)
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, true
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
				return int64(f), true
			}
		}
		return nil, false
	case "float":
		if f, ok := toFloat(v); ok {
			return f, true
		}
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f, true
			}
		}
		return nil, false
	case "bool":
		switch x := v.(type) {
		case bool:
			return x, true
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "1", "yes":
				return true, true
			}
			return false, true
		}
		if f, ok := toFloat(v); ok {
			return f != 0, true
		}
		return nil, false
	case "str":
		if s, ok := v.(string); ok {
			return s, true
		}
		return nil, false
	case "list":
		if l, ok := v.([]any); ok {
			return l, true
		}
		return nil, false
	default: // "object": any value is accepted as given
		return v, true
	}
}
