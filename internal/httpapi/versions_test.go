package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeletedStrategyVersionsReadable: after a strategy is deleted, the versions that a
// task or study refers to stay readable, code included, so a result's code can still be
// read; versions nothing refers to, and all of them once nothing refers to any, are 404.
func TestDeletedStrategyVersionsReadable(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0) // no workers: the task stays pending until cancelled
	code2 := strings.Replace(taskTestStrategy, "fast: 10", "fast: 12", 1)
	body := func(name, code string) string {
		b, _ := json.Marshal(map[string]string{"name": name, "code": code})
		return string(b)
	}
	status, created := e.do(t, "POST", "/api/strategies", body("v1", taskTestStrategy))
	if status != 200 {
		t.Fatalf("create: %d %v", status, created)
	}
	id := created.(map[string]any)["id"].(string)
	if status, got := e.do(t, "PUT", "/api/strategies/"+id, body("v2", code2)); status != 200 {
		t.Fatalf("replace: %d %v", status, got)
	}
	status, task := e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+id+`","start_date":"1970-01-01","end_date":"1979-12-31"}`)
	if status != 200 {
		t.Fatalf("submit: %d %v", status, task)
	}
	tid := task.(map[string]any)["task_id"].(string)
	if status, got := e.do(t, "DELETE", "/api/strategies/"+id, ""); status != 200 {
		t.Fatalf("delete: %d %v", status, got)
	}

	if status, _ := e.do(t, "GET", "/api/strategies/"+id, ""); status != 404 {
		t.Errorf("GET the deleted strategy: %d, want 404", status)
	}
	status, list := e.do(t, "GET", "/api/strategies/"+id+"/versions", "")
	items, _ := list.(map[string]any)["data"].([]any)
	if status != 200 || len(items) != 1 || items[0].(map[string]any)["version"] != 2.0 {
		t.Fatalf("versions of the deleted strategy: %d %v, want version 2 (the task's) only", status, list)
	}
	status, one := e.do(t, "GET", "/api/strategies/"+id+"/versions/2", "")
	if v, _ := one.(map[string]any)["data"].(map[string]any); status != 200 || v["code"] != code2 {
		t.Fatalf("version 2 of the deleted strategy: %d %v", status, one)
	}
	status, one = e.do(t, "GET", "/api/strategies/"+id+"/versions/1", "")
	if d, _ := one.(map[string]any)["detail"].(string); status != 404 || !strings.Contains(d, "version 1") {
		t.Errorf("version 1, which nothing refers to: %d %v, want 404", status, one)
	}

	// Once the task is gone, nothing refers to the strategy: it is not found, as before.
	if status, got := e.do(t, "DELETE", "/api/backtests/"+tid, ""); status != 200 {
		t.Fatalf("cancel: %d %v", status, got)
	}
	if status, got := e.do(t, "POST", "/api/backtests/"+tid+"/delete", ""); status != 200 {
		t.Fatalf("delete task: %d %v", status, got)
	}
	for _, path := range []string{"/versions", "/versions/2"} {
		status, got := e.do(t, "GET", "/api/strategies/"+id+path, "")
		if d, _ := got.(map[string]any)["detail"].(string); status != 404 || d != "Strategy not found: "+id {
			t.Errorf("GET %s after the task was deleted: %d %v, want 404 Strategy not found", path, status, got)
		}
	}
}
