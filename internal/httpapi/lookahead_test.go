package httpapi

import (
	"strings"
	"testing"
)

// lookaheadTestStrategy trades on the next bar's close (version 2 of str_1 in the test).
const lookaheadTestStrategy = `
class Future extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => c[i + 1])); }
  next() {
    if (this.position.size === 0 && this.sig[0] > this.data.close[0]) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.sig[0] < this.data.close[0]) this.close();
  }
}`

// TestLookaheadRoute: a check of a version on the data of a run, in a runner child, stored
// per version and data; runs of a flagged version and bi_results say so; bad input is a
// clear 4xx.
func TestLookaheadRoute(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 2, 'Future', $1, 'Future', '[]', 'api', 'h2')`, lookaheadTestStrategy); err != nil {
		t.Fatal(err)
	}
	data := `{"start_date":"1970-01-01","end_date":"1979-12-31"}`

	// Before any check, a run carries lookahead null.
	t1 := e.submit(t, "")
	done := e.waitStatus(t, t1["task_id"].(string), "completed")
	if v, ok := done["lookahead"]; !ok || v != nil {
		t.Fatalf("unchecked run: lookahead %v (present %v)", v, ok)
	}
	if v, ok := listedLookahead(t, e)[t1["task_id"].(string)]; !ok || v != nil {
		t.Fatalf("unchecked run's list row: lookahead %v (present %v)", v, ok)
	}

	code, body := e.do(t, "POST", "/api/strategies/str_1/versions/1/lookahead", data)
	if code != 200 {
		t.Fatalf("check v1: %d %v", code, body)
	}
	c := body.(map[string]any)
	if c["lookahead"] != false || c["cuts"] != float64(6) || len(c["findings"].([]any)) != 0 || c["data_source"] != "testsrc" || len(c["warmup"].([]any)) == 0 {
		t.Fatalf("check of a causal version: %v", c)
	}
	if _, m := e.do(t, "GET", "/api/backtests/"+t1["task_id"].(string), ""); m.(map[string]any)["lookahead"] != false {
		t.Errorf("run of a clean version: lookahead %v", m.(map[string]any)["lookahead"])
	}

	code, body = e.do(t, "POST", "/api/strategies/str_1/versions/2/lookahead", `{"symbol":"AAA","start_date":"1970-01-01","end_date":"1979-12-31"}`)
	if code != 200 {
		t.Fatalf("check v2: %d %v", code, body)
	}
	c = body.(map[string]any)
	findings := c["findings"].([]any)
	if c["lookahead"] != true || len(findings) == 0 {
		t.Fatalf("check of a biased version: %v", c)
	}
	if f := findings[0].(map[string]any); f["what"] != "this.sig" || f["kind"] != "line" || f["time"] == "" {
		t.Errorf("first finding: %v", f)
	}
	t2 := e.submit(t, `,"strategy_version":2`)
	done = e.waitStatus(t, t2["task_id"].(string), "completed")
	if done["lookahead"] != true {
		t.Errorf("run of a flagged version: lookahead %v", done["lookahead"])
	}
	var flagged, clean *bool
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT (SELECT lookahead FROM bi_results WHERE task_id = $1), (SELECT lookahead FROM bi_results WHERE task_id = $2)`,
		t2["task_id"], t1["task_id"]).Scan(&flagged, &clean); err != nil {
		t.Fatal(err)
	}
	if flagged == nil || !*flagged || clean == nil || *clean {
		t.Errorf("bi_results lookahead: flagged run %v, clean run %v", flagged, clean)
	}
	// The runs list carries each row's verdict, as the run's own answer does, in every order.
	for _, query := range []string{"", "?sort=total_return", "?order=asc&limit=1", "?order=asc&skip=1&limit=1"} {
		rows := listedLookahead(t, e, query)
		for _, want := range []struct {
			id      string
			verdict bool
		}{{t2["task_id"].(string), true}, {t1["task_id"].(string), false}} {
			v, ok := rows[want.id]
			if strings.Contains(query, "limit=1") && !ok {
				continue // on the other page
			}
			if !ok || v != want.verdict {
				t.Errorf("list %q: row %s lookahead %v (present %v), want %v", query, want.id, v, ok, want.verdict)
			}
		}
	}

	// Checked again on the same data: the verdict is replaced, not added.
	if code, _ := e.do(t, "POST", "/api/strategies/str_1/versions/2/lookahead", data); code != 200 {
		t.Fatalf("second check: %d", code)
	}
	code, body = e.do(t, "GET", "/api/strategies/str_1/versions/2/lookahead", "")
	if code != 200 || len(body.([]any)) != 1 || body.([]any)[0].(map[string]any)["lookahead"] != true {
		t.Errorf("stored checks of v2: %d %v", code, body)
	}

	bad := []struct {
		name, method, path, body string
		want                     int
	}{
		{"version not a number", "POST", "/api/strategies/str_1/versions/x/lookahead", data, 400},
		{"version zero", "POST", "/api/strategies/str_1/versions/0/lookahead", data, 400},
		{"no such version", "POST", "/api/strategies/str_1/versions/9/lookahead", data, 404},
		{"no such strategy", "POST", "/api/strategies/str_99/versions/1/lookahead", data, 404},
		{"no dates", "POST", "/api/strategies/str_1/versions/1/lookahead", `{}`, 422},
		{"bad date", "POST", "/api/strategies/str_1/versions/1/lookahead", `{"start_date":"1970-13-01","end_date":"1979-12-31"}`, 400},
		{"not JSON", "POST", "/api/strategies/str_1/versions/1/lookahead", `{"start_date":`, 400},
		{"unknown symbol", "POST", "/api/strategies/str_1/versions/1/lookahead", `{"symbol":"ZZZ","start_date":"1970-01-01","end_date":"1979-12-31"}`, 400},
		{"bad parameter", "POST", "/api/strategies/str_1/versions/1/lookahead", `{"start_date":"1970-01-01","end_date":"1979-12-31","strategy_params":{"fast":"x"}}`, 400},
		{"list of no such version", "GET", "/api/strategies/str_1/versions/9/lookahead", "", 404},
	}
	for _, tc := range bad {
		code, body := e.do(t, tc.method, tc.path, tc.body)
		if code != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, code, body, tc.want)
		}
	}
}

// listedLookahead is the lookahead field of each row of GET /api/backtests+query, by task id
// (a row without the field is left out).
func listedLookahead(t *testing.T, e *taskEnv, query ...string) map[string]any {
	t.Helper()
	code, body := e.do(t, "GET", "/api/backtests"+strings.Join(query, ""), "")
	if code != 200 {
		t.Fatalf("list: %d %v", code, body)
	}
	out := map[string]any{}
	for _, r := range body.([]any) {
		m := r.(map[string]any)
		if v, ok := m["lookahead"]; ok {
			out[m["task_id"].(string)] = v
		}
	}
	return out
}
