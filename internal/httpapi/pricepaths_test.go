package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
)

// pricePaths polls a price_paths request until it answers other than 202, checking every
// 202 on the way (its progress and the request it reports), and returns the final status
// and body.
func (e *taskEnv) pricePaths(t *testing.T, id, query string) (int, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := e.do(t, "GET", "/api/results/"+id+"/montecarlo?method=price_paths"+query, "")
		m, _ := body.(map[string]any)
		if code != 202 {
			return code, m
		}
		p := m["data"].(map[string]any)
		if p["method"] != "price_paths" || (p["status"] != "pending" && p["status"] != "running") ||
			p["done"].(float64) > p["runs"].(float64) || p["progress"].(float64) != 100*p["done"].(float64)/p["runs"].(float64) {
			t.Fatalf("progress of %s%s: %v", id, query, p)
		}
		if time.Now().After(deadline) {
			t.Fatalf("price paths of %s%s: still %v after 60 s", id, query, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPricePathsRoute reruns a strategy on price paths through the real service and
// workers: the first request answers 202 with progress and starts the reruns, the answer
// has every method's shape over the result's bars, the same request reads the stored
// answer, rerunning from scratch gives it again to the bit, another seed another answer;
// two symbols are rerun on the same draws; a strategy that fails on a path fails the
// request with its reason; bad input is a 400, a task without a result a 404.
func TestPricePathsRoute(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	// A second symbol on the same dates, for a two-symbol run.
	rows := [][]any{}
	for _, x := range engine.RandomWalk(3000, 4) {
		rows = append(rows, []any{"testsrc", "BBB", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume})
	}
	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO symbols (source, symbol, name) VALUES ('testsrc', 'BBB', 'B')`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Pool.CopyFrom(e.ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	// Version 2 throws unless its second bar closes where the stored one does: it runs on
	// the real bars and fails on (almost) every path.
	second := strconv.FormatFloat(engine.RandomWalk(3000, 3)[1].Close, 'g', -1, 64)
	picky := `class Picky extends Strategy {
  init() { this.n = 0; }
  next() { this.n++; if (this.n === 2 && this.data.close[0] !== ` + second + `) throw new Error('not the stored bars'); }
}`
	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 2, 'Picky', $1, 'Picky', '[]', 'api', 'h2')`, picky); err != nil {
		t.Fatal(err)
	}
	run := func(extra string) string {
		t.Helper()
		id := e.submit(t, extra)["task_id"].(string)
		e.waitStatus(t, id, "completed")
		return id
	}
	id := run("")
	code, body := e.do(t, "GET", "/api/results/"+id+"/summary", "")
	if code != 200 {
		t.Fatalf("result: %d %v", code, body)
	}
	summary := body.(map[string]any)["data"].(map[string]any)
	var bars int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT count(*) FROM bi_equity WHERE task_id = $1`, id).Scan(&bars); err != nil {
		t.Fatal(err)
	}

	const query = "&runs=6&seed=5&block=20"
	first, firstBody := e.do(t, "GET", "/api/results/"+id+"/montecarlo?method=price_paths"+query, "")
	if first != 202 {
		t.Fatalf("first request: %d %v, want 202 and the reruns started", first, firstBody)
	}
	code, m := e.pricePaths(t, id, query)
	if code != 200 {
		t.Fatalf("price paths: %d %v", code, m)
	}
	a := m["data"].(map[string]any)
	if a["method"] != "price_paths" || a["runs"] != 6.0 || a["seed"] != 5.0 || a["block"] != 20.0 || a["unit"] != "bars" || a["steps"] != float64(bars) {
		t.Errorf("answer %v %v %v %v %v %v, want price_paths 6 5 20 bars %d", a["method"], a["runs"], a["seed"], a["block"], a["unit"], a["steps"], bars)
	}
	fv := a["final_value"].(map[string]any)
	if !(fv["p5"].(float64) <= fv["p50"].(float64) && fv["p50"].(float64) <= fv["p95"].(float64)) || fv["p5"] == fv["p95"] {
		t.Errorf("final value percentiles %v: ordered and spread over 6 paths", fv)
	}
	if orig := a["original"].(map[string]any); orig["final_value"] != summary["final_value"] {
		t.Errorf("original final value %v, the summary's %v", orig["final_value"], summary["final_value"])
	}
	n := 0.0
	for _, b := range a["final_value_histogram"].([]any) {
		n += b.(map[string]any)["count"].(float64)
	}
	fan := a["fan"].(map[string]any)
	if n != 6 || len(fan["steps"].([]any)) != 101 || len(fan["p50"].([]any)) != 101 || fan["p50"].([]any)[0] != a["initial_cash"] {
		t.Errorf("histogram counts %v, fan of %d steps starting at %v", n, len(fan["steps"].([]any)), fan["p50"].([]any)[0])
	}

	// Stored: the same request reads it (one row, no new job); rerun from scratch, the
	// same seed draws the same paths and gives the same answer to the bit.
	code, again := e.pricePaths(t, id, query)
	if code != 200 || !jsonEqual(t, again, m) {
		t.Errorf("the same request again: %d, a different answer", code)
	}
	var rowsN, jobsN int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT (SELECT count(*) FROM montecarlo_paths), (SELECT count(*) FROM river_job WHERE kind = 'montecarlo_paths')`).Scan(&rowsN, &jobsN); err != nil {
		t.Fatal(err)
	}
	if rowsN != 1 || jobsN != 1 {
		t.Errorf("%d stored requests and %d jobs after asking twice, want 1 and 1", rowsN, jobsN)
	}
	if _, err := e.st.Pool.Exec(e.ctx, `DELETE FROM montecarlo_paths`); err != nil {
		t.Fatal(err)
	}
	if code, rerun := e.pricePaths(t, id, query); code != 200 || !jsonEqual(t, rerun, m) {
		t.Errorf("rerun with seed 5: %d, a different answer", code)
	}
	if code, other := e.pricePaths(t, id, "&runs=6&seed=6&block=20"); code != 200 || jsonEqual(t, other["data"].(map[string]any)["final_value"], fv) {
		t.Errorf("seed 6: %d, the same final values as seed 5", code)
	}
	// The default block: the cube root of the bars' returns.
	if code, d := e.pricePaths(t, id, "&runs=2"); code != 200 || d["data"].(map[string]any)["block"] != math.Round(math.Cbrt(float64(bars-1))) {
		t.Errorf("default block: %d %v", code, d["data"].(map[string]any)["block"])
	}

	two := run(`,"symbols":["AAA","BBB"]`)
	if code, b := e.pricePaths(t, two, "&runs=3&seed=1"); code != 200 || b["data"].(map[string]any)["runs"] != 3.0 {
		t.Errorf("two symbols: %d %v", code, b)
	}

	picked := run(`,"strategy_version":2`)
	for range 2 { // failed, and stored so
		code, b := e.pricePaths(t, picked, "&runs=3&seed=1")
		if detail := fmt.Sprint(b["detail"]); code != 422 || !strings.HasPrefix(detail, "Monte Carlo on price paths failed: the strategy failed on price path 1: ") ||
			!strings.Contains(detail, "not the stored bars") {
			t.Errorf("a strategy failing on a path: %d %v", code, b)
		}
	}

	maxRuns := 2_000_000 / bars
	for _, tc := range []struct {
		name, query string
		status      int
		detail      string
	}{
		{"runs past the work", fmt.Sprintf("&runs=%d", maxRuns+1), 400,
			fmt.Sprintf("Invalid runs %d: from 1 to %d for this result (each run reruns the strategy on %d bars, at most 2000000 bars in all)", maxRuns+1, maxRuns, bars)},
		{"runs past the most", "&runs=10001", 400, "Invalid runs '10001': expected an integer from 1 to 10000"},
		{"runs zero", "&runs=0", 400, "Invalid runs '0': expected an integer from 1 to 10000"},
		{"runs not a number", "&runs=lots", 400, "Invalid runs 'lots': expected an integer from 1 to 10000"},
		{"block past the returns", fmt.Sprintf("&runs=2&block=%d", bars), 400, fmt.Sprintf("Invalid block %d: from 1 to the result's %d returns (its bars less the first)", bars, bars-1)},
		{"block zero", "&block=0", 400, "Invalid block '0': expected an integer from 1 to 1073741824"},
		{"block negative", "&block=-2", 400, "Invalid block '-2': expected an integer from 1 to 1073741824"},
		{"block not a number", "&block=ten", 400, "Invalid block 'ten': expected an integer from 1 to 1073741824"},
		{"seed negative", "&seed=-1", 400, "Invalid seed '-1': expected an integer from 0 to 9007199254740991"},
		{"loss over 1", "&loss=2", 400, "Invalid loss '2': comma-separated shares of the capital above 0 and at most 1 (0.5 is half)"},
		{"unknown result", "", 404, "Result not found: task_99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := id
			if tc.status == 404 {
				target = "task_99"
			}
			code, body := e.do(t, "GET", "/api/results/"+target+"/montecarlo?method=price_paths"+tc.query, "")
			if m, _ := body.(map[string]any); code != tc.status || m["detail"] != tc.detail {
				t.Errorf("%d %v, want %d %q", code, body, tc.status, tc.detail)
			}
		})
	}
}

// jsonEqual says whether a and b encode to the same JSON.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestPricePathsByRole: reruns on price paths run the strategy, so a viewer may not start
// them (403, nothing stored) but reads those an admin started.
func TestPricePathsByRole(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 1, true)
	a := auth.NewService(e.st, 0)
	if _, err := a.AddUser(e.ctx, "vic", auth.RoleViewer, teamPasswords["vic"]); err != nil {
		t.Fatal(err)
	}
	vic, _, err := a.CreateToken(e.ctx, auth.Identity{}, auth.NewToken{User: "vic"})
	if err != nil {
		t.Fatal(err)
	}
	id := e.submit(t, "")["task_id"].(string)
	e.waitStatus(t, id, "completed")
	path := "/api/results/" + id + "/montecarlo?method=price_paths&runs=3&seed=2"
	if code, body := e.doAs(t, vic, "GET", path, ""); code != 403 || !strings.Contains(fmt.Sprint(body), "the viewer role may only read: Monte Carlo on price paths") {
		t.Fatalf("viewer starting reruns: %d %v, want 403", code, body)
	}
	var rows int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT count(*) FROM montecarlo_paths`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d rows stored after the refusal (%v)", rows, err)
	}
	if code, body := e.pricePaths(t, id, "&runs=3&seed=2"); code != 200 {
		t.Fatalf("admin: %d %v", code, body)
	}
	if code, body := e.doAs(t, vic, "GET", path, ""); code != 200 || body.(map[string]any)["data"].(map[string]any)["runs"] != 3.0 {
		t.Fatalf("viewer reading the stored answer: %d %v", code, body)
	}
}

// TestPricePathsFairShare: a price-path job is one of its requester's units of work
// (fairshare, USER_MAX_RUNNING=1 here). While root already runs one (another price-path
// job, live: its row running and touched), root's new request stays pending, its job
// snoozed rather than run and no attempt spent; once the other ends, it runs and answers.
// A request whose job died (its row running, untouched for longer than PathsStale) starts
// again when asked, rather than answering 202 forever.
func TestPricePathsFairShare(t *testing.T) {
	t.Parallel()
	e := newTaskEnvShare(t, 2, true, 1)
	id := e.submit(t, "")["task_id"].(string)
	e.waitStatus(t, id, "completed")
	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO montecarlo_paths (task_id, runs, seed, block, status, created_by, job_id, updated_at)
		VALUES ($1, 5, 999, 5, 'running', 'root', -1, now())`, id); err != nil {
		t.Fatal(err)
	}
	code, body := e.do(t, "GET", "/api/results/"+id+"/montecarlo?method=price_paths&runs=3&seed=2", "")
	if code != 202 {
		t.Fatalf("first request: %d %v", code, body)
	}
	// Two of the job's snoozes at least (fairshare.Wait is 2 to 4 s), each a refusal.
	for until := time.Now().Add(9 * time.Second); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
		var status string
		var attempt int
		if err := e.st.Pool.QueryRow(e.ctx, `SELECT m.status, coalesce((SELECT max(j.attempt) FROM river_job j WHERE j.kind = 'montecarlo_paths'), 0)
			FROM montecarlo_paths m WHERE m.task_id = $1 AND m.seed = 2`, id).Scan(&status, &attempt); err != nil {
			t.Fatal(err)
		}
		if status != "pending" {
			t.Fatalf("the request is %s while root runs as many units as allowed", status)
		}
		if attempt > 1 {
			t.Fatalf("the refused job spent attempts: %d", attempt)
		}
	}
	// The other job ends: the waiting one is admitted and completes.
	if _, err := e.st.Pool.Exec(e.ctx, `UPDATE montecarlo_paths SET status = 'completed' WHERE task_id = $1 AND seed = 999`, id); err != nil {
		t.Fatal(err)
	}
	if code, body := e.pricePaths(t, id, "&runs=3&seed=2"); code != 200 {
		t.Fatalf("after the other job ended: %d %v", code, body)
	}
	var jobID *int64
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT job_id FROM montecarlo_paths WHERE task_id = $1 AND seed = 2`, id).Scan(&jobID); err != nil || jobID == nil {
		t.Fatalf("the completed row names no job: %v", err)
	}

	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO montecarlo_paths (task_id, runs, seed, block, status, done, created_by, job_id, updated_at)
		VALUES ($1, 3, 7, 5, 'running', 1, 'root', -2, now() - interval '1 minute')`, id); err != nil {
		t.Fatal(err)
	}
	if code, body := e.pricePaths(t, id, "&runs=3&seed=7&block=5"); code != 200 {
		t.Fatalf("the dead job's request: %d %v", code, body)
	}
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT job_id FROM montecarlo_paths WHERE task_id = $1 AND seed = 7`, id).Scan(&jobID); err != nil || jobID == nil || *jobID == -2 {
		t.Fatalf("the dead job's request was not worked by a new job: %v %v", jobID, err)
	}
}
