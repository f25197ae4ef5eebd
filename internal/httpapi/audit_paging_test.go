package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/backtestd/backtestd/api"
	"github.com/backtestd/backtestd/internal/store"
)

// TestAuditPagingBounds: the audit log pages like every list, skip from 0 to
// store.MaxOffset (it was a 400 past 2^30 though the docs allowed more); the bound
// api/openapi.yaml gives, for the audit route too, is that constant.
func TestAuditPagingBounds(t *testing.T) {
	t.Parallel()
	e := newTeamEnv(t)
	skipErr := fmt.Sprintf("Invalid skip '%d': expected an integer from 0 to %d", int64(store.MaxOffset)+1, store.MaxOffset)
	for _, tt := range []struct {
		path   string
		status int
		detail string
	}{
		{fmt.Sprintf("/api/audit?skip=%d", store.MaxOffset), 200, ""},
		{fmt.Sprintf("/api/audit?skip=%d&limit=1000", store.MaxOffset), 200, ""},
		{"/api/audit?skip=0&limit=1", 200, ""},
		{fmt.Sprintf("/api/audit?skip=%d", int64(store.MaxOffset)+1), 400, skipErr},
		{"/api/audit?skip=-1", 400, "Invalid skip '-1'"},
	} {
		status, body := e.as(t, "admin", "GET", tt.path, "")
		if status != tt.status || !strings.Contains(fmt.Sprint(body), tt.detail) {
			t.Errorf("GET %s: %d %v, want %d %q", tt.path, status, body, tt.status, tt.detail)
		}
		if tt.path == fmt.Sprintf("/api/audit?skip=%d", store.MaxOffset) {
			if l, ok := body.([]any); !ok || len(l) != 0 {
				t.Errorf("GET %s: %v, want an empty list", tt.path, body)
			}
		}
	}

	var doc struct {
		Paths      map[string]map[string]any `yaml:"paths"`
		Components map[string]map[string]any `yaml:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	skip, _ := doc.Components["parameters"]["Skip"].(map[string]any)
	schema, _ := skip["schema"].(map[string]any)
	if max, ok := schema["maximum"].(int); !ok || max != store.MaxOffset {
		t.Errorf("api/openapi.yaml's Skip maximum is %v, want store.MaxOffset %d", schema["maximum"], store.MaxOffset)
	}
	params, _ := doc.Paths["/api/audit"]["get"].(map[string]any)["parameters"].([]any)
	refs := false
	for _, p := range params {
		if m, _ := p.(map[string]any); m["$ref"] == "#/components/parameters/Skip" {
			refs = true
		}
	}
	if !refs {
		t.Error("GET /api/audit's skip in api/openapi.yaml is not the Skip parameter")
	}
}
