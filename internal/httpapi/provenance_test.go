package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/provenance"
)

// provBars are the bars of PROVX: a random walk from 2002-06-01, one a day.
func provBars() []engine.Bar {
	bars := engine.RandomWalk(800, 11)
	start := time.Date(2002, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range bars {
		bars[i].Time = start.AddDate(0, 0, i)
	}
	return bars
}

// importBars posts bars to /api/data/testsrc/PROVX/bars as JSON (floats round-trip exactly).
func (e *taskEnv) importBars(t *testing.T, bars []engine.Bar) {
	t.Helper()
	rows := make([]map[string]any, len(bars))
	for i, b := range bars {
		rows[i] = map[string]any{"datetime": b.Time.Format(time.DateOnly), "open": b.Open, "high": b.High, "low": b.Low, "close": b.Close, "volume": b.Volume}
	}
	body, _ := json.Marshal(rows)
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/data/testsrc/PROVX/bars", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var out any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		t.Fatalf("import: %d %v", resp.StatusCode, out)
	}
}

// runProv submits a run of str_1 on PROVX and waits for it to complete.
func (e *taskEnv) runProv(t *testing.T, params string) map[string]any {
	t.Helper()
	code, body := e.do(t, "POST", "/api/backtests", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","strategy_params":`+params+`}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, body)
	}
	return e.waitStatus(t, body.(map[string]any)["task_id"].(string), "completed")
}

// reproduce reproduces id and waits for the reproduction's verdict.
func (e *taskEnv) reproduce(t *testing.T, id string) map[string]any {
	t.Helper()
	code, body := e.do(t, "POST", "/api/backtests/"+id+"/reproduce", "")
	if code != 200 {
		t.Fatalf("reproduce %s: %d %v", id, code, body)
	}
	rid := body.(map[string]any)["task_id"].(string)
	task := e.waitStatus(t, rid, "completed", "failed")
	if task["status"] != "completed" {
		t.Fatalf("reproduction %s: %v", rid, task)
	}
	rep, _ := task["reproduction"].(map[string]any)
	if rep == nil || rep["of"] != id {
		t.Fatalf("reproduction of %s: %v", id, task["reproduction"])
	}
	return rep
}

func (e *taskEnv) trades(t *testing.T, id string) []map[string]any {
	t.Helper()
	code, body := e.do(t, "GET", "/api/results/"+id+"/trades?kind=round_trips&limit=1000", "")
	if code != 200 {
		t.Fatalf("trades of %s: %d %v", id, code, body)
	}
	var out []map[string]any
	for _, x := range field(body, "data", "trades").([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// TestProvenanceAndReproduction: a run records its provenance (the code's sha256, the engine,
// the exact fingerprint and version of the bars it read, its resolved settings and
// parameters) in the task, the JSON export and bi_results; reproducing it with the data
// unchanged is identical. After one bar is re-imported with another close (version 2), a
// reproduction still runs on version 1 and is identical, a new run on the latest bars
// differs and the diff names the bar, and a run as_of version 1's time equals the original.
func TestProvenanceAndReproduction(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	bars := provBars()
	e.importBars(t, bars)

	orig := e.runProv(t, `{}`)
	id := orig["task_id"].(string)
	p, _ := orig["provenance"].(map[string]any)
	if p == nil {
		t.Fatalf("no provenance: %v", orig)
	}
	sum := sha256.Sum256([]byte(taskTestStrategy))
	if p["code_sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("code_sha256 %v", p["code_sha256"])
	}
	if p["engine_version"] != provenance.Engine() {
		t.Errorf("engine_version %v, want %s", p["engine_version"], provenance.Engine())
	}
	data := p["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("data %v", data)
	}
	feed := data[0].(map[string]any)
	want := provenance.FingerprintOf(bars)
	last := bars[len(bars)-1].Time.Format(time.RFC3339)
	if feed["symbol"] != "PROVX" || feed["timeframe"] != "1d" || feed["timezone"] != "UTC" || feed["bars"] != float64(len(bars)) ||
		feed["first"] != "2002-06-01T00:00:00Z" || feed["last"] != last || feed["sha256"] != want.SHA256 || feed["version"] != float64(1) {
		t.Errorf("feed %v, want sha256 %s, last %s", feed, want.SHA256, last)
	}
	if params := p["parameters"].(map[string]any); params["fast"] != float64(10) || params["slow"] != float64(30) {
		t.Errorf("parameters (defaults included) %v", params)
	}
	if s := p["settings"].(map[string]any); s["commission"] != 0.001 || s["initial_cash"] != float64(10000) || s["strategy_version"] != float64(1) ||
		s["start_date"] != "2002-06-01" || s["end_date"] != "2004-12-31" {
		t.Errorf("settings %v", s)
	}
	// The JSON export and bi_results carry it too.
	code, export := e.do(t, "GET", "/api/results/"+id+"/export?format=json", "")
	if code != 200 || field(export, "provenance", "code_sha256") != p["code_sha256"] {
		t.Errorf("export: %d provenance %v", code, field(export, "provenance"))
	}
	var biSum, biEngine string
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT code_sha256, engine_version FROM bi_results WHERE task_id = $1`, id).Scan(&biSum, &biEngine); err != nil ||
		biSum != p["code_sha256"] || biEngine != p["engine_version"] {
		t.Errorf("bi_results: %q %q %v", biSum, biEngine, err)
	}

	rep := e.reproduce(t, id)
	if rep["outcome"] != "identical" || len(rep["causes"].([]any)) != 0 {
		t.Fatalf("unchanged data: %v", rep)
	}

	// One bar inside the first trade gets another close: the equity of that bar changes.
	tr := e.trades(t, id)
	if len(tr) == 0 {
		t.Fatal("the run made no trades")
	}
	open := parseTime(t, tr[0]["entry_date"].(string))
	changed := slices.IndexFunc(bars, func(b engine.Bar) bool { return b.Time.After(open) })
	b := bars[changed]
	b.Close *= 1.07
	b.High = max(b.High, b.Close)
	e.importBars(t, []engine.Bar{b})

	rep = e.reproduce(t, id)
	if rep["outcome"] != "identical" || len(rep["causes"].([]any)) != 0 {
		t.Fatalf("reproduction after a re-import (recorded version 1): %v", rep)
	}
	latest := e.runProv(t, `{}`)
	if v := field(latest, "provenance", "data").([]any)[0].(map[string]any)["version"]; v != float64(2) {
		t.Errorf("a run after the re-import read version %v, want 2", v)
	}
	wantCause := fmt.Sprintf("data: PROVX changed: 1 bar differs, first %s", b.Time.Format(time.DateOnly))
	code, body := e.do(t, "GET", "/api/results/"+id+"/diff?against="+latest["task_id"].(string), "")
	if code != 200 || field(body, "data", "identical") != false || !slices.Contains(anyStrings(field(body, "data", "causes")), wantCause) {
		t.Fatalf("diff with a run on the changed bar: %d %v, want the cause %q", code, body, wantCause)
	}

	// The versions: newest first, what version 2 changed; each version's bars.
	code, body = e.do(t, "GET", "/api/data/testsrc/PROVX/versions", "")
	if code != 200 {
		t.Fatalf("versions: %d %v", code, body)
	}
	versions := field(body, "data").([]any)
	v2, v1 := versions[0].(map[string]any), versions[1].(map[string]any)
	changedBars := append([]engine.Bar(nil), bars...)
	changedBars[changed] = b
	if len(versions) != 2 || v2["version"] != float64(2) || v1["version"] != float64(1) ||
		v1["sha256"] != want.SHA256 || v2["sha256"] != provenance.FingerprintOf(changedBars).SHA256 ||
		fmt.Sprint(v2["changes"]) != "map[added:0 changed:1 removed:0]" || v2["bars"] != float64(len(bars)) ||
		parseTime(t, v2["first_changed"].(string)) != b.Time {
		t.Fatalf("versions: %v", versions)
	}
	for _, c := range []struct {
		q     string
		close float64
	}{{"&version=1", bars[changed].Close}, {"&version=2", b.Close}, {"", b.Close}} {
		code, body := e.do(t, "GET", "/api/data/testsrc/PROVX?start_date=2002-06-01&end_date=2004-12-31"+c.q, "")
		if code != 200 || field(body, "data", "bars").([]any)[changed].(map[string]any)["close"] != c.close {
			t.Errorf("bars%s: %d, close of the changed bar %v, want %v", c.q, code, field(body, "data", "bars").([]any)[changed], c.close)
		}
	}

	// A run as of version 1's time equals the original run.
	asOf := v1["created_at"].(string)
	code, body = e.do(t, "POST", "/api/backtests", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","as_of":"`+asOf+`"}`)
	if code != 200 {
		t.Fatalf("as_of %s: %d %v", asOf, code, body)
	}
	then := e.waitStatus(t, body.(map[string]any)["task_id"].(string), "completed")
	code, body = e.do(t, "GET", "/api/results/"+id+"/diff?against="+then["task_id"].(string), "")
	if code != 200 || field(body, "data", "identical") != true {
		t.Fatalf("diff with the run as of %s: %d %v", asOf, code, body)
	}

	// Bad input.
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/api/backtests/task_999/reproduce", 404},
	} {
		if code, body := e.do(t, "POST", c.path, ""); code != c.status {
			t.Errorf("%s: %d %v, want %d", c.path, code, body, c.status)
		}
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"GET", "/api/data/testsrc/PROVX?start_date=2002-06-01&end_date=2004-12-31&version=3", "", 400, "Unknown version 3"},
		{"GET", "/api/data/testsrc/PROVX?start_date=2002-06-01&end_date=2004-12-31&version=x", "", 400, "Invalid version"},
		{"GET", "/api/data/testsrc/PROVX?start_date=2002-06-01&end_date=2004-12-31&version=0", "", 400, "Invalid version"},
		{"GET", "/api/data/testsrc/NOPE/versions", "", 404, "NOPE"},
		{"POST", "/api/backtests", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","as_of":"2001-01-01T00:00:00Z"}`, 400, "before the first version"},
		{"POST", "/api/backtests", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","as_of":"yesterday"}`, 400, "Invalid as_of"},
	} {
		code, body := e.do(t, c.method, c.path, c.body)
		if code != c.status || !strings.Contains(fmt.Sprint(body), c.says) {
			t.Errorf("%s %s %s: %d %v, want %d saying %q", c.method, c.path, c.body, code, body, c.status, c.says)
		}
	}
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if v, err := time.Parse(layout, s); err == nil {
			return v
		}
	}
	t.Fatalf("not a time: %q", s)
	return time.Time{}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestRunDiff diffs two runs that differ in one parameter: the cause names it, the trades
// split as matching them by symbol and entry time says, and the first divergence is no later
// than the first differing trade. Bad input gets clear 4xx answers.
func TestRunDiff(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	e.importBars(t, provBars())
	a := e.runProv(t, `{"fast":10}`)["task_id"].(string)
	b := e.runProv(t, `{"fast":12}`)["task_id"].(string)

	code, body := e.do(t, "GET", "/api/results/"+a+"/diff?against="+b, "")
	if code != 200 {
		t.Fatalf("diff: %d %v", code, body)
	}
	d := field(body, "data").(map[string]any)
	if d["identical"] != false || !slices.Contains(anyStrings(d["causes"]), "parameters: fast: 10 → 12") {
		t.Fatalf("diff: identical %v causes %v", d["identical"], d["causes"])
	}
	// The expected split, from the two trade lists.
	ta, tb := e.trades(t, a), e.trades(t, b)
	key := func(x map[string]any) string { return fmt.Sprint(x["symbol"], x["entry_date"]) }
	for _, x := range slices.Concat(ta, tb) {
		delete(x, "seq") // a trade's number in its run
	}
	inB := map[string]map[string]any{}
	for _, x := range tb {
		inB[key(x)] = x
	}
	var onlyA, changed, same int
	firstDiff := ""
	note := func(s string) {
		if firstDiff == "" || s < firstDiff {
			firstDiff = s
		}
	}
	for _, x := range ta {
		y, ok := inB[key(x)]
		switch {
		case !ok:
			onlyA++
			note(x["entry_date"].(string))
		case fmt.Sprint(x) != fmt.Sprint(y):
			changed++
			note(x["entry_date"].(string))
		default:
			same++
		}
		delete(inB, key(x))
	}
	for _, y := range inB {
		note(y["entry_date"].(string))
	}
	trades := d["trades"].(map[string]any)
	if len(trades["only_a"].([]any)) != onlyA || len(trades["only_b"].([]any)) != len(inB) || len(trades["changed"].([]any)) != changed ||
		trades["same"] != float64(same) {
		t.Errorf("trades: only_a %d only_b %d changed %d same %v; want %d %d %d %d", len(trades["only_a"].([]any)),
			len(trades["only_b"].([]any)), len(trades["changed"].([]any)), trades["same"], onlyA, len(inB), changed, same)
	}
	if onlyA+len(inB)+changed == 0 {
		t.Fatal("fast 10 and 12 made the same trades: the test needs differing ones")
	}
	fd, _ := d["first_divergence"].(map[string]any)
	if fd == nil || fd["date"].(string) > firstDiff[:10] {
		t.Errorf("first_divergence %v, want one no later than %s", fd, firstDiff)
	}
	if s := field(d, "summary", "final_value").(map[string]any); s["a"] == s["b"] && len(trades["changed"].([]any))+len(trades["only_a"].([]any)) > 0 {
		t.Logf("same final value: %v", s)
	}

	// A run diffed with itself.
	_, body = e.do(t, "GET", "/api/results/"+a+"/diff?against="+a, "")
	if field(body, "data", "identical") != true || len(field(body, "data", "causes").([]any)) != 0 || field(body, "data", "first_divergence") != nil {
		t.Errorf("self diff: %v", body)
	}

	// A task without a result: a strategy that throws fails.
	_, up := e.do(t, "POST", "/api/strategies", `{"name":"Boom","code":"class Boom extends Strategy { next() { throw new Error('boom'); } }"}`)
	boom := up.(map[string]any)["id"].(string)
	_, sub := e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+boom+`","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31"}`)
	failed := sub.(map[string]any)["task_id"].(string)
	e.waitStatus(t, failed, "failed")

	for _, c := range []struct {
		method, path string
		status       int
		detail       string
	}{
		{"GET", "/api/results/" + a + "/diff", 400, "against' is required"},
		{"GET", "/api/results/" + a + "/diff?against=", 400, "against' is required"},
		{"GET", "/api/results/" + a + "/diff?against=a%20b", 400, "Invalid against"},
		{"GET", "/api/results/" + a + "/diff?against=" + a + "&against=" + b, 400, "once"},
		{"GET", "/api/results/" + a + "/diff?against=" + strings.Repeat("x", 300), 400, "Invalid against"},
		{"GET", "/api/results/task_999/diff?against=" + a, 404, "task_999"},
		{"GET", "/api/results/" + a + "/diff?against=task_999", 404, "task_999"},
		{"GET", "/api/results/" + a + "/diff?against=" + failed, 409, failed + " has no result"},
		{"GET", "/api/results/" + failed + "/diff?against=" + a, 409, failed + " has no result"},
		{"POST", "/api/backtests/" + failed + "/reproduce", 409, "only a completed run"},
	} {
		code, body := e.do(t, c.method, c.path, "")
		if code != c.status || !strings.Contains(fmt.Sprint(body), c.detail) {
			t.Errorf("%s %s: %d %v, want %d with %q", c.method, c.path, code, body, c.status, c.detail)
		}
	}
}
