package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

const studyBody = `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31",
  "space":{"fast":{"start":5,"stop":15,"step":5},"slow":[10,20,30]},"constraint":"p.fast < p.slow"%s}`

func (e *taskEnv) waitStudy(t *testing.T, id string, want ...string) map[string]any {
	t.Helper()
	// Generous: with both cores busy and the race detector on, a few hundred combinations
	// have taken over a minute.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		_, body := e.do(t, "GET", "/api/studies/"+id, "")
		m := body.(map[string]any)
		for _, w := range want {
			if m["status"] == w {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("study %s: %v, want %v", id, m, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStudy runs a small study end to end with real workers: progress over WebSocket, the
// leaderboard, heatmap, overfitting statistics, the BI views, and a promoted combination
// whose backtest gives the figures its row shows.
func TestStudy(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	code, body := e.do(t, "POST", "/api/studies", fmt.Sprintf(studyBody, `,"objective":"total_return","name":"crossovers"`))
	if code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	st := body.(map[string]any)
	for k, want := range map[string]any{"id": "study_1", "total": 7.0, "excluded": 2.0, "method": "grid", "objective": "total_return",
		"direction": "max", "name": "crossovers", "blocks": 16.0} {
		if st[k] != want {
			t.Errorf("created study %s = %v, want %v", k, st[k], want)
		}
	}
	ws := e.dial(t, "/ws/study_1")
	if f := ws.next(t); f.Event != "connected" {
		t.Fatalf("first frame %s", f.Event)
	}
	var last map[string]any
	for last == nil || last["status"] != "completed" {
		f := ws.next(t)
		if f.Event != "study" {
			t.Fatalf("frame %s %s", f.Event, f.Data)
		}
		last = nil
		if err := json.Unmarshal(f.Data, &last); err != nil {
			t.Fatal(err)
		}
	}
	if last["done"] != 7.0 || last["best"] == nil {
		t.Errorf("last progress frame %v", last)
	}
	st = e.waitStudy(t, "study_1", "completed")
	if st["done"] != 7.0 || st["failed"] != 0.0 || st["best"] == nil {
		t.Fatalf("finished study %v", st)
	}
	best := st["best"].(map[string]any)

	_, body = e.do(t, "GET", "/api/studies/study_1/results?sort=total_return&limit=3", "")
	board := body.(map[string]any)
	rows := board["trials"].([]any)
	if board["total"] != 7.0 || len(rows) != 3 || board["order"] != "desc" {
		t.Fatalf("leaderboard %v", board)
	}
	top := rows[0].(map[string]any)
	if top["idx"] != best["idx"] || top["objective"] != top["total_return"] || top["status"] != "completed" {
		t.Errorf("leaderboard top %v, best %v", top, best)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].(map[string]any)["total_return"].(float64) > rows[i-1].(map[string]any)["total_return"].(float64) {
			t.Errorf("leaderboard not sorted: %v", rows)
		}
	}
	_, body = e.do(t, "GET", "/api/studies/study_1/results?sort=max_drawdown_pct&order=asc&skip=6", "")
	if rows := body.(map[string]any)["trials"].([]any); len(rows) != 1 {
		t.Errorf("last page: %v", body)
	}

	// The promoted combination runs as a backtest with the figures its row shows.
	code, body = e.do(t, "POST", "/api/studies/study_1/promote", fmt.Sprintf(`{"idx":%v}`, top["idx"]))
	if code != 200 {
		t.Fatalf("promote: %d %v", code, body)
	}
	task := body.(map[string]any)["task_id"].(string)
	e.waitStatus(t, task, "completed")
	_, body = e.do(t, "GET", "/api/results/"+task+"/summary", "")
	sum := body.(map[string]any)["data"].(map[string]any)
	for _, k := range []string{"total_return", "final_value", "sharpe_ratio", "max_drawdown_pct", "total_trades"} {
		if sum[k] != top[k] {
			t.Errorf("promoted backtest %s = %v, study row %v", k, sum[k], top[k])
		}
	}

	code, body = e.do(t, "GET", "/api/studies/study_1/heatmap?x=fast&y=slow", "")
	if code != 200 {
		t.Fatalf("heatmap: %d %v", code, body)
	}
	hm := body.(map[string]any)
	data := hm["series"].([]any)[0].(map[string]any)["data"].([]any)
	if len(data) != 7 || len(hm["xAxis"].(map[string]any)["data"].([]any)) != 3 {
		t.Errorf("heatmap cells %v", data)
	}
	code, body = e.do(t, "GET", "/api/studies/study_1/overfitting", "")
	if code != 200 || body.(map[string]any)["trials"] != 7.0 || body.(map[string]any)["explanations"] == nil {
		t.Fatalf("overfitting: %d %v", code, body)
	}
	// CPCV over the 7 combinations' returns: C(4, 2) = 6 splits, φ = 3 paths; bad N, k, E
	// answer 400 before anything is computed.
	code, body = e.do(t, "GET", "/api/studies/study_1/cpcv?groups=4&test_groups=2&embargo_bars=1", "")
	if code != 200 {
		t.Fatalf("cpcv: %d %v", code, body)
	}
	cv := body.(map[string]any)
	if cv["trials"] != 7.0 || len(cv["splits"].([]any)) != 6 || len(cv["paths"].([]any)) != 3 || len(cv["combinations"].([]any)) != 7 {
		t.Errorf("cpcv: %v", cv)
	}
	if p := cv["pbo"].(float64); p < 0 || p > 1 {
		t.Errorf("cpcv PBO %v", p)
	}
	if cv["selection"] != "total_return" { // the study maximises total_return
		t.Errorf("cpcv selection %v, want total_return", cv["selection"])
	}
	// A study that declares its validation: the route takes its parameters by default and
	// chooses by Sharpe ratio, the default objective.
	code, body = e.do(t, "POST", "/api/studies", fmt.Sprintf(studyBody, `,"validation":{"method":"cpcv","groups":4,"test_groups":2,"embargo_bars":1}`))
	if code != 200 {
		t.Fatalf("create with validation: %d %v", code, body)
	}
	sv := e.waitStudy(t, body.(map[string]any)["id"].(string), "completed")
	if v, _ := sv["validation"].(map[string]any); v["method"] != "cpcv" || v["groups"] != 4.0 || v["test_groups"] != 2.0 || v["embargo_bars"] != 1.0 {
		t.Errorf("study validation %v", sv["validation"])
	}
	code, body = e.do(t, "GET", "/api/studies/"+sv["id"].(string)+"/cpcv", "")
	if code != 200 {
		t.Fatalf("declared cpcv: %d %v", code, body)
	}
	if dv := body.(map[string]any); dv["groups"] != 4.0 || dv["test_groups"] != 2.0 || dv["embargo_bars"] != 1.0 || dv["selection"] != "sharpe_ratio" || len(dv["splits"].([]any)) != 6 {
		t.Errorf("declared cpcv: %v", dv)
	}
	if code, body := e.do(t, "GET", "/api/studies/"+sv["id"].(string)+"/cpcv?test_groups=1", ""); code != 200 || len(body.(map[string]any)["splits"].([]any)) != 4 {
		t.Errorf("declared cpcv with test_groups=1: %d %v", code, body)
	}
	for q, want := range map[string]int{"": 400, "groups=4": 400, "groups=x&test_groups=2": 400, "groups=4&test_groups=4": 400,
		"groups=4&test_groups=2&embargo_bars=-1": 400, "groups=40&test_groups=20": 400, "groups=4&test_groups=2&fold=9": 400,
		"groups=4&test_groups=2&embargo_bars=100000": 422} {
		if code, body := e.do(t, "GET", "/api/studies/study_1/cpcv?"+q, ""); code != want {
			t.Errorf("cpcv?%s: %d %v, want %d", q, code, body, want)
		}
	}
	// The surface: each parameter's slice through the best is the leaderboard's objective
	// of the combination with that value and the other parameter at the best's.
	code, body = e.do(t, "GET", "/api/studies/study_1/surface", "")
	if code != 200 {
		t.Fatalf("surface: %d %v", code, body)
	}
	surf := body.(map[string]any)
	_, body = e.do(t, "GET", "/api/studies/study_1/results?limit=100", "")
	objOf := map[string]any{}
	for _, r := range body.(map[string]any)["trials"].([]any) {
		row := r.(map[string]any)
		p, _ := json.Marshal(row["params"])
		objOf[string(p)] = row["objective"]
	}
	bp := best["params"].(map[string]any)
	if fmt.Sprint(surf["best"]) != fmt.Sprint(bp) || surf["objective"] != best["objective"] || surf["metric"] != "total_return" {
		t.Errorf("surface best %v %v, study best %v", surf["best"], surf["objective"], best)
	}
	for _, sl := range surf["parameters"].([]any) {
		sl := sl.(map[string]any)
		name := sl["name"].(string)
		for i, v := range sl["values"].([]any) {
			combo := map[string]any{}
			for k, w := range bp {
				combo[k] = w
			}
			combo[name] = v
			key, _ := json.Marshal(combo)
			if got, want := sl["objective"].([]any)[i], objOf[string(key)]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("surface %s=%v: %v, leaderboard %v", name, v, got, want)
			}
		}
	}
	if surf["findings"] == nil || (surf["spike"] == true) != (len(surf["findings"].([]any)) == 1) {
		t.Errorf("surface spike %v with findings %v", surf["spike"], surf["findings"])
	}
	var n, np int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT (SELECT count(*) FROM bi_study_results WHERE study_id = 'study_1' AND final_value > 0),
		(SELECT count(*) FROM bi_study_params WHERE study_id = 'study_1' AND num IS NOT NULL)`).Scan(&n, &np); err != nil || n != 7 || np != 14 {
		t.Errorf("bi views: %d results, %d params, %v", n, np, err)
	}

	code, body = e.do(t, "GET", "/api/studies/", "")
	if code != 200 || len(body.([]any)) != 2 { // study_1 and the one with a validation
		t.Errorf("list: %d %v", code, body)
	}
	// Finished with nothing failed: nothing to cancel or retry.
	for _, p := range []struct{ method, path string }{{"DELETE", "/api/studies/study_1"}, {"POST", "/api/studies/study_1/retry"}} {
		if code, body := e.do(t, p.method, p.path, ""); code != 409 {
			t.Errorf("%s %s: %d %v, want 409", p.method, p.path, code, body)
		}
	}
}

// TestStudyCancelAndRetry: a cancelled study stops, keeps what ran, and a retry runs the
// rest.
func TestStudyCancelAndRetry(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	code, body := e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31",
	  "space":{"fast":{"start":2,"stop":30,"step":1},"slow":{"start":50,"stop":54,"step":1}}}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	code, body = e.do(t, "DELETE", "/api/studies/study_1", "")
	if code != 200 || body.(map[string]any)["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", code, body)
	}
	cancelled := time.Now()
	// Batches running when it was cancelled stop; nothing is left pending.
	var st map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, body = e.do(t, "GET", "/api/studies/study_1", "")
		st = body.(map[string]any)
		var running int
		if err := e.st.Pool.QueryRow(e.ctx, `SELECT count(*) FROM river_job WHERE kind = 'study_batch' AND state IN ('available', 'running', 'retryable', 'scheduled')`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 || time.Now().After(deadline) {
			break
		}
	}
	// The 1 s target is measured here (docs/studies.md gives it), not asserted: a busy machine
	// delays the batches' 250 ms polls.
	t.Logf("cancel → every batch stopped: %s", time.Since(cancelled).Round(time.Millisecond))
	if st["status"] != "cancelled" || st["cancelled"].(float64) == 0 || st["done"].(float64)+st["cancelled"].(float64)+st["failed"].(float64) != st["total"].(float64) {
		t.Fatalf("cancelled study %v", st)
	}
	code, body = e.do(t, "POST", "/api/studies/study_1/retry", "")
	if s := body.(map[string]any)["status"]; code != 200 || s != "pending" && s != "running" && s != "completed" {
		t.Fatalf("retry: %d %v", code, body)
	}
	st = e.waitStudy(t, "study_1", "completed")
	if st["done"] != st["total"] || st["cancelled"] != 0.0 {
		t.Fatalf("retried study %v", st)
	}
}

func TestStudyErrors(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	base := `"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"`
	for _, c := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"no space", `{` + base + `}`, 400, "space is required"},
		{"unknown parameter", `{` + base + `,"space":{"nope":[1]}}`, 400, "no parameter nope"},
		{"bad range", `{` + base + `,"space":{"fast":{"start":5,"stop":1,"step":1}}}`, 400, "below its start"},
		{"not a list", `{` + base + `,"space":{"fast":5}}`, 400, "list of values"},
		{"wrong type", `{` + base + `,"space":{"fast":["x"]}}`, 400, "combination fast=x"},
		{"too many", `{` + base + `,"space":{"fast":{"start":1,"stop":200,"step":1},"slow":{"start":1,"stop":200,"step":1}}}`, 400, "more than the 10000"},
		{"bad constraint", `{` + base + `,"space":{"fast":[1]},"constraint":"p.fast <"}`, 400, "Constraint:"},
		{"constraint leaves none", `{` + base + `,"space":{"fast":[1]},"constraint":"false"}`, 400, "leaves no combination"},
		{"unknown objective", `{` + base + `,"space":{"fast":[1]},"objective":"luck"}`, 400, "unknown objective"},
		{"random without samples", `{` + base + `,"space":{"fast":[1]},"method":"random"}`, 400, "needs samples"},
		{"bad method", `{` + base + `,"space":{"fast":[1]},"method":"anneal"}`, 400, "grid, random or bayes"},
		{"bayes without samples", `{` + base + `,"space":{"fast":[1]},"method":"bayes"}`, 400, "needs samples"},
		{"bad direction", `{` + base + `,"space":{"fast":[1]},"direction":"up"}`, 400, "max or min"},
		{"odd blocks", `{` + base + `,"space":{"fast":[1]},"blocks":3}`, 400, "even number"},
		{"varied and fixed", `{` + base + `,"space":{"fast":[1]},"strategy_params":{"fast":2}}`, 400, "both in space"},
		{"unknown strategy", `{"strategy_id":"str_9","start_date":"1970-01-01","end_date":"1979-12-31","space":{"fast":[1]}}`, 404, "Strategy not found"},
		{"malformed", `{"space":`, 400, ""},
		{"walk-forward without train", `{` + base + `,"space":{"fast":[1]},"walk_forward":{"test":"1y"}}`, 400, "walk_forward.train is required"},
		{"walk-forward minutes", `{` + base + `,"space":{"fast":[1]},"walk_forward":{"train":"2m","test":"1y"}}`, 400, "not a window"},
		{"walk-forward fraction", `{` + base + `,"space":{"fast":[1]},"walk_forward":{"train":1.5,"test":"1y"}}`, 400, "whole number of bars"},
		{"walk-forward too long", `{` + base + `,"space":{"fast":[1]},"walk_forward":{"train":"50y","test":"1y"}}`, 400, "no bar to test"},
		{"walk-forward overlap", `{` + base + `,"space":{"fast":[1]},"walk_forward":{"train":"2y","test":"1y","step":"6M"}}`, 400, "overlap"},
		{"validation method", `{` + base + `,"space":{"fast":[1]},"validation":{"method":"kfold","groups":4,"test_groups":2}}`, 400, `validation.method must be cpcv, got "kfold"`},
		{"validation k", `{` + base + `,"space":{"fast":[1]},"validation":{"method":"cpcv","groups":4,"test_groups":4}}`, 400, "validation: "},
		{"validation too many splits", `{` + base + `,"space":{"fast":[1]},"validation":{"method":"cpcv","groups":40,"test_groups":20}}`, 400, "validation: "},
		{"validation type", `{` + base + `,"space":{"fast":[1]},"validation":{"method":"cpcv","groups":"4","test_groups":2}}`, 422, "validation.groups"},
		{"validation and walk-forward", `{` + base + `,"space":{"fast":[1]},"validation":{"method":"cpcv","groups":4,"test_groups":2},"walk_forward":{"train":"2y","test":"1y"}}`, 400, "choose one"},
	} {
		code, body := e.do(t, "POST", "/api/studies", c.body)
		text := fmt.Sprint(body)
		if code != c.status || !strings.Contains(text, c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, code, text, c.status, c.want)
		}
	}
	for _, path := range []string{"/api/studies/study_9", "/api/studies/study_9/walk-forward", "/api/studies/study_9/results", "/api/studies/study_9/overfitting", "/api/studies/study_9/heatmap?x=a&y=b", "/api/studies/study_9/surface",
		"/api/studies/study_9/cpcv?groups=4&test_groups=2"} {
		if code, body := e.do(t, "GET", path, ""); code != 404 {
			t.Errorf("%s: %d %v, want 404", path, code, body)
		}
	}
	if code, body := e.do(t, "POST", "/api/studies", `{`+base+`,"space":{"fast":[5,10],"slow":[30]}}`); code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	for path, want := range map[string]string{
		"/api/studies/study_1/results?sort=luck":                "sort must be one of",
		"/api/studies/study_1/results?order=sideways":           "asc or desc",
		"/api/studies/study_1/heatmap?x=fast&y=nope":            "varied parameters",
		"/api/studies/study_1/heatmap?x=fast&y=fast":            "different parameters",
		"/api/studies/study_1/heatmap?x=fast&y=slow&agg=median": "best, max or mean",
		"/api/studies/study_1/results?fold=2":                   "fold must be a number from 1 to 1",
	} {
		if code, body := e.do(t, "GET", path, ""); code != 400 || !strings.Contains(fmt.Sprint(body), want) {
			t.Errorf("%s: %d %v, want 400 with %q", path, code, body, want)
		}
	}
	if code, body := e.do(t, "POST", "/api/studies/study_1/promote", `{}`); code != 422 {
		t.Errorf("promote without params: %d %v", code, body)
	}
	if code, body := e.do(t, "POST", "/api/studies/study_1/promote", `{"params":{"fast":"x"}}`); code != 400 {
		t.Errorf("promote with bad params: %d %v", code, body)
	}
}

// TestWalkForward runs a rolling walk-forward analysis end to end: every fold optimises on
// its training bars only, its winner runs on the test window that follows with its
// indicators warmed up on the bars before it (the figures equal an in-process run with that
// warm-up, and differ from a cold start on the window in some fold), and the stitched
// curve chains the folds' curves.
func TestWalkForward(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	code, body := e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31",
		"space":{"fast":[5,10],"slow":[20,30]},"objective":"total_return","walk_forward":{"train":"2y","test":"1y"}}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	// 3,000 daily bars from 1970-01-01: tests start each January from 1972 to 1978
	st := body.(map[string]any)
	if st["folds"] != 7.0 || st["total"] != 28.0 {
		t.Fatalf("created %v, want 7 folds of 4 combinations", st)
	}
	st = e.waitStudy(t, "study_1", "completed")
	if st["done"] != 28.0 {
		t.Fatalf("finished %v", st)
	}
	code, body = e.do(t, "GET", "/api/studies/study_1/walk-forward", "")
	if code != 200 {
		t.Fatalf("walk-forward: %d %v", code, body)
	}
	var wf struct {
		Folds []struct {
			Fold                                     int
			Status                                   string
			TrainStart, TrainEnd, TestStart, TestEnd string `json:"-"`
			Train0, Train1, Test0, Test1             string
			Params                                   map[string]any
			BestIdx                                  int     `json:"best_idx"`
			ISObjective                              float64 `json:"is_objective"`
			OOSTotalReturn                           float64 `json:"oos_total_return"`
			OOSObjective                             float64 `json:"oos_objective"`
			OOSBars                                  int     `json:"oos_bars"`
		}
		Statistics *struct{ Groups []any }
		Chart      *struct{ Series []struct{ Data []any } }
	}
	raw, _ := json.Marshal(body)
	// the window fields by their JSON names
	raw = []byte(strings.NewReplacer(`"train_start"`, `"Train0"`, `"train_end"`, `"Train1"`, `"test_start"`, `"Test0"`, `"test_end"`, `"Test1"`).Replace(string(raw)))
	if err := json.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Folds) != 7 || wf.Statistics == nil || wf.Chart == nil {
		t.Fatalf("walk-forward %s", raw)
	}
	bars := func(from, to string) []engine.Bar {
		t.Helper()
		rows, err := e.st.Pool.Query(e.ctx, `SELECT ts, open, high, low, close, volume FROM bars
			WHERE symbol = 'AAA' AND ts BETWEEN $1::date AND $2::date ORDER BY ts`, from, to)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Bar, error) {
			var b engine.Bar
			return b, r.Scan(&b.Time, &b.Open, &b.High, &b.Low, &b.Close, &b.Volume)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	stitched, differs := 0, false
	for i, f := range wf.Folds {
		if f.Status != "completed" || !(f.Train1 < f.Test0) || (i > 0 && !(wf.Folds[i-1].Test1 < f.Test0)) {
			t.Fatalf("fold %d: %+v", i+1, f)
		}
		// in sample: every trial of the fold ran on its training bars, none of the test's
		train := bars(f.Train0, f.Train1)
		_, body := e.do(t, "GET", fmt.Sprintf("/api/studies/study_1/results?fold=%d&limit=10", f.Fold), "")
		board := body.(map[string]any)
		top := board["trials"].([]any)[0].(map[string]any)
		if board["total"] != 4.0 || top["bars"] != float64(len(train)) || top["idx"] != float64(f.BestIdx) || top["objective"] != f.ISObjective {
			t.Errorf("fold %d trained on %d bars; its board %v", f.Fold, len(train), board)
		}
		// out of sample: warmed up on the training bars, trading on the test bars
		test := bars(f.Test0, f.Test1)
		if f.OOSBars != len(test) {
			t.Errorf("fold %d: %d out-of-sample points, want the test window's %d bars", f.Fold, f.OOSBars, len(test))
		}
		run := func(feed []engine.Bar, from time.Time) *engine.Result {
			res, err := jsrt.Run(e.ctx, jsrt.RunConfig{Code: taskTestStrategy, Params: f.Params, Cash: st["initial_cash"].(float64),
				Commission: st["commission"].(float64),
				Feeds:      []engine.Feed{{Symbol: "AAA", Bars: feed}}, TradeFrom: from})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		warm := run(append(train, test...), test[0].Time)
		if warm.Summary.TotalReturn != f.OOSTotalReturn || f.OOSObjective != f.OOSTotalReturn {
			t.Errorf("fold %d: out-of-sample return %v, want %v as run with its warm-up", f.Fold, f.OOSTotalReturn, warm.Summary.TotalReturn)
		}
		if cold := run(test, time.Time{}); cold.Summary.TotalReturn != warm.Summary.TotalReturn {
			differs = true
		}
		stitched += len(test)
	}
	if !differs {
		t.Error("no fold's out-of-sample run differs from a cold start: the warm-up is not shown to matter")
	}
	if n := len(wf.Chart.Series[0].Data); n != stitched {
		t.Errorf("stitched curve of %d points, want %d", n, stitched)
	}
	var n int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT count(*) FROM bi_study_folds WHERE study_id = 'study_1' AND oos_total_return IS NOT NULL`).Scan(&n); err != nil || n != 7 {
		t.Errorf("bi_study_folds: %d rows, %v", n, err)
	}
	for path, want := range map[string]int{"/api/studies/study_1/results?fold=8": 400, "/api/studies/study_1/heatmap?x=fast&y=slow&fold=0": 400,
		"/api/studies/study_1/overfitting?fold=1": 200, "/api/studies/study_1/heatmap?x=fast&y=slow&fold=3": 200} {
		if code, body := e.do(t, "GET", path, ""); code != want {
			t.Errorf("%s: %d %v, want %d", path, code, body, want)
		}
	}

	// Cancelled at once, the folds not done are cancelled; a retry runs them to the end.
	code, body = e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31",
		"space":{"fast":[5,10,15],"slow":[20,30,40]},"walk_forward":{"train":500,"test":250,"anchored":true}}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	if code, body := e.do(t, "DELETE", "/api/studies/study_2", ""); code != 200 {
		t.Fatalf("cancel: %d %v", code, body)
	}
	folds := func(want string) map[string]int {
		_, body := e.do(t, "GET", "/api/studies/study_2/walk-forward", "")
		n := map[string]int{}
		for _, f := range body.(map[string]any)["folds"].([]any) {
			n[f.(map[string]any)["status"].(string)]++
		}
		if n[want] == 0 || n["optimising"]+n["testing"] > 0 {
			t.Errorf("folds by status %v, want some %s and none running", n, want)
		}
		return n
	}
	e.waitStudy(t, "study_2", "cancelled")
	folds("cancelled")
	if code, body := e.do(t, "POST", "/api/studies/study_2/retry", ""); code != 200 {
		t.Fatalf("retry: %d %v", code, body)
	}
	e.waitStudy(t, "study_2", "completed")
	if n := folds("completed"); n["completed"] != 10 {
		t.Errorf("after the retry, folds by status %v, want all 10 completed", n)
	}
}
