package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestPinAndPruneRoutes: pinning through the API keeps an old run from the admin prune,
// unpinning lets it go, and bad input is a 4xx.
func TestPinAndPruneRoutes(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	b := &dataBundle{ctx: e.ctx, store: e.st}
	bars := engine.RandomWalk(400, 9)
	for _, id := range []string{"task_1", "task_2"} {
		storeRun(t, b, id, "AAA", bars, `{"fast":5,"slow":20,"size":10}`)
	}
	if _, err := e.st.Pool.Exec(e.ctx, `UPDATE tasks SET created_at = now() - interval '200 days'`); err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		code, out := e.do(t, method, path, body)
		m, _ := out.(map[string]any)
		return code, m
	}

	if code, out := call("POST", "/api/backtests/task_1/pin", ""); code != 200 || out["data"].(map[string]any)["pinned"] != true {
		t.Fatalf("pin: %d %v", code, out)
	}
	if code, out := call("GET", "/api/backtests/task_1", ""); code != 200 || out["pinned_at"] == nil {
		t.Fatalf("the pinned task says %d %v", code, out)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"unknown task", "POST", "/api/backtests/task_404/pin", "", 404},
		{"unknown study", "DELETE", "/api/studies/study_404/pin", "", 404},
		{"no body, so no Content-Type", "POST", "/api/admin/prune", "", 415},
		{"no age", "POST", "/api/admin/prune", `{}`, 422},
		{"bad age", "POST", "/api/admin/prune", `{"older_than":"forever"}`, 400},
		{"wrong type", "POST", "/api/admin/prune", `{"older_than":180}`, 422},
		{"unknown field", "POST", "/api/admin/prune", `{"older_than":"180d","vacuum":false}`, 422},
		{"age under a day", "POST", "/api/admin/prune", `{"older_than":"1ns"}`, 400},
		{"a day in a tiny fraction", "POST", "/api/admin/prune", `{"older_than":"1e-9d"}`, 400},
		{"23 hours, dry run", "POST", "/api/admin/prune", `{"older_than":"23h","dry_run":true}`, 400},
		{"forced, dry run", "POST", "/api/admin/prune", `{"older_than":"1ns","dry_run":true,"force":true}`, 200},
	} {
		if code, out := call(tc.method, tc.path, tc.body); code != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, code, out, tc.want)
		}
	}

	if code, out := call("POST", "/api/admin/prune", `{"older_than":"1ns"}`); !strings.Contains(fmt.Sprint(out["detail"]), `"force": true`) {
		t.Errorf("an age under a day: %d %v, want a detail that says how to force it", code, out)
	}
	code, out := call("POST", "/api/admin/prune", `{"older_than":"180d","dry_run":true}`)
	if code != 200 || out["tasks"] != 1.0 || out["dry_run"] != true {
		t.Fatalf("dry run: %d %v", code, out)
	}
	code, out = call("POST", "/api/admin/prune", `{"older_than":"180d"}`)
	if code != 200 || out["tasks"] != 1.0 {
		t.Fatalf("prune: %d %v", code, out)
	}
	if code, _ := call("GET", "/api/backtests/task_2", ""); code != 404 {
		t.Errorf("the unpinned old run is still there: %d", code)
	}
	if code, _ := call("GET", "/api/results/task_1/summary", ""); code != 200 {
		t.Errorf("the pinned run's result is gone: %d", code)
	}
	if code, out := call("DELETE", "/api/backtests/task_1/pin", ""); code != 200 || out["data"].(map[string]any)["pinned"] != false {
		t.Fatalf("unpin: %d %v", code, out)
	}
	if code, out := call("POST", "/api/admin/prune", `{"older_than":"180d"}`); code != 200 || out["tasks"] != 1.0 {
		t.Fatalf("prune after unpinning: %d %v", code, out)
	}
}
