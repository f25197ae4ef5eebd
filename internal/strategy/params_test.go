package strategy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/jsrt"
)

func TestMergeParams(t *testing.T) {
	declared := json.RawMessage(`[{"name":"fast","default":10,"type":"int"},{"name":"slow","default":30,"type":"int"},{"name":"label","default":"x","type":"str"}]`)
	tests := []struct {
		name, saved string
		in          map[string]any
		want        string // JSON, or the start of the 400's text
		bad         bool
	}{
		{"nothing saved", ``, map[string]any{"slow": 40}, `{"slow":40}`, false},
		{"saved under the request", `{"fast":12,"slow":50}`, map[string]any{"slow": 40}, `{"fast":12,"slow":40}`, false},
		// One saved value that no longer fits is dropped alone; the others stay.
		{"one saved value gone", `{"fast":12,"gone":3,"slow":"fifty"}`, nil, `{"fast":12}`, false},
		{"saved values unreadable", `[1,2]`, map[string]any{"fast": 5}, `{"fast":5}`, false},
		{"request does not fit", `{"fast":12}`, map[string]any{"slow": "forty"}, "", true},
		{"unknown parameter", ``, map[string]any{"nope": 1}, "", true},
	}
	for _, tt := range tests {
		got, err := MergeParams(declared, json.RawMessage(tt.saved), tt.in)
		if tt.bad {
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid {
				t.Errorf("%s: err %v, want a 400", tt.name, err)
			}
			continue
		}
		if err != nil || strings.TrimSpace(string(got)) != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestEffective(t *testing.T) {
	declared := []jsrt.Param{
		{Name: "fast", Default: 10.0, Type: "int"}, {Name: "slow", Default: 30.0, Type: "int"},
		{Name: "label", Default: "x", Type: "str"}, {Name: "none", Default: nil, Type: "object"},
	}
	tests := []struct {
		name, values, want string
	}{
		{"nothing given: every default", ``, `{"fast":10,"label":"x","slow":30}`},
		{"empty object", `{}`, `{"fast":10,"label":"x","slow":30}`},
		{"a given value over its default", `{"fast":5}`, `{"fast":5,"label":"x","slow":30}`},
		{"every value given", `{"fast":5,"slow":50,"label":"y"}`, `{"fast":5,"label":"y","slow":50}`},
		{"a value with no default kept", `{"none":{"a":1}}`, `{"fast":10,"label":"x","none":{"a":1},"slow":30}`},
	}
	for _, tt := range tests {
		got, err := Effective(declared, json.RawMessage(tt.values))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.name, got, err, tt.want)
		}
	}
	if _, err := Effective(declared, json.RawMessage(`[1]`)); err == nil {
		t.Error("values that are not an object: no error")
	}
}
