package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// boundCase is one request of the bounds tests: its status and, for refusals, the exact
// detail.
type boundCase struct {
	name, method, path, contentType, body string
	status                                int
	detail                                string
}

func checkBoundCases(t *testing.T, do func(t *testing.T, c boundCase) (int, any), cases []boundCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(t, c)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, body)
			}
			if c.detail != "" && field(body, "detail") != c.detail {
				t.Errorf("detail %q, want %q", field(body, "detail"), c.detail)
			}
		})
	}
}

// TestPagingBounds checks skip and limit on every route that pages: skip from 0 to
// 2147483647, limit from 1 to the route's maximum, anything else (not a number, out of
// range) a 400 from the one query parser with the same text.
func TestPagingBounds(t *testing.T) {
	t.Parallel()
	d := setupData(t, true)
	bars := engine.RandomWalk(300, 5)
	if _, err := marketdata.NewService(d.store, nil).Import(d.ctx, "builtin", "RW", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	storeRun(t, d, "task_1", "RW", bars, `{"fast":5,"slow":20,"size":10}`)
	e := newTaskEnv(t, 0)
	e.submit(t, "")

	skipErr := func(v string) string { return "Invalid skip '" + v + "': expected an integer from 0 to 2147483647" }
	limitErr := func(v string, hi string) string {
		return "Invalid limit '" + v + "': expected an integer from 1 to " + hi
	}
	dataCases := []boundCase{
		{name: "symbols limit max", path: "/api/data/builtin/symbols?limit=1000", status: 200},
		{name: "symbols limit 1", path: "/api/data/builtin/symbols?limit=1", status: 200},
		{name: "symbols limit blank", path: "/api/data/builtin/symbols?limit=", status: 200},
		{name: "symbols limit over max", path: "/api/data/builtin/symbols?limit=1001", status: 400, detail: limitErr("1001", "1000")},
		{name: "symbols limit zero", path: "/api/data/builtin/symbols?limit=0", status: 400, detail: limitErr("0", "1000")},
		{name: "symbols limit not a number", path: "/api/data/builtin/symbols?limit=x", status: 400, detail: limitErr("x", "1000")},
		{name: "symbols limit fraction", path: "/api/data/builtin/symbols?limit=1.5", status: 400, detail: limitErr("1.5", "1000")},
		{name: "trades default", path: "/api/results/task_1/trades", status: 200},
		{name: "trades limit max", path: "/api/results/task_1/trades?limit=1000", status: 200},
		{name: "trades skip max", path: "/api/results/task_1/trades?skip=2147483647&limit=1", status: 200},
		{name: "trades round trips", path: "/api/results/task_1/trades?kind=round_trips&skip=1&limit=1", status: 200},
		{name: "trades limit zero", path: "/api/results/task_1/trades?limit=0", status: 400, detail: limitErr("0", "1000")},
		{name: "trades limit over max", path: "/api/results/task_1/trades?limit=1001", status: 400, detail: limitErr("1001", "1000")},
		{name: "trades skip negative", path: "/api/results/task_1/trades?skip=-1", status: 400, detail: skipErr("-1")},
		{name: "trades skip over int4", path: "/api/results/task_1/trades?skip=2147483648", status: 400, detail: skipErr("2147483648")},
		{name: "trades skip not a number", path: "/api/results/task_1/trades?skip=x", status: 400, detail: skipErr("x")},
		{name: "trades skip huge", path: "/api/results/task_1/trades?skip=99999999999999999999", status: 400, detail: skipErr("99999999999999999999")},
	}
	checkBoundCases(t, func(t *testing.T, c boundCase) (int, any) { return d.call(t, "GET", c.path, "", nil) }, dataCases)

	taskCases := []boundCase{
		{name: "tasks limit max", path: "/api/backtests?limit=1000", status: 200},
		{name: "tasks skip max", path: "/api/backtests?skip=2147483647", status: 200},
		{name: "tasks skip and limit spaced", path: "/api/backtests?skip=%200&limit=5%20", status: 200},
		{name: "tasks limit zero", path: "/api/backtests?limit=0", status: 400, detail: limitErr("0", "1000")},
		{name: "tasks limit over max", path: "/api/backtests?limit=1001", status: 400, detail: limitErr("1001", "1000")},
		{name: "tasks limit negative", path: "/api/backtests?limit=-5", status: 400, detail: limitErr("-5", "1000")},
		{name: "tasks skip negative", path: "/api/backtests?skip=-1", status: 400, detail: skipErr("-1")},
		{name: "tasks skip over int4", path: "/api/backtests?skip=2147483648", status: 400, detail: skipErr("2147483648")},
		{name: "logs limit max", path: "/api/backtests/task_1/logs?limit=10000", status: 200},
		{name: "logs attempt 1", path: "/api/backtests/task_1/logs?attempt=1&skip=0&limit=1", status: 200},
		{name: "logs limit over max", path: "/api/backtests/task_1/logs?limit=10001", status: 400, detail: limitErr("10001", "10000")},
		{name: "logs limit zero", path: "/api/backtests/task_1/logs?limit=0", status: 400, detail: limitErr("0", "10000")},
		{name: "logs skip negative", path: "/api/backtests/task_1/logs?skip=-1", status: 400, detail: skipErr("-1")},
		{name: "logs attempt zero", path: "/api/backtests/task_1/logs?attempt=0", status: 400, detail: "Invalid attempt '0': expected an integer from 1 to 2147483647"},
		{name: "logs attempt not a number", path: "/api/backtests/task_1/logs?attempt=first", status: 400, detail: "Invalid attempt 'first': expected an integer from 1 to 2147483647"},
	}
	checkBoundCases(t, func(t *testing.T, c boundCase) (int, any) { return e.do(t, "GET", c.path, "") }, taskCases)
}

// TestRequestBounds checks initial_cash, commission and the dates of a backtest request,
// and the prices and dates of a bar import, through the API: 400 with the detail outside
// the bounds, accepted at the edges.
func TestRequestBounds(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	body := func(extra string) string {
		return `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"` + extra + `}`
	}
	const outOfRange = " is out of range: dates must be from 1900-01-01 to 2200-01-01"
	const commOver = "commission must be less than 1: it is a fraction of the traded value (0.001 is 0.1%), got "
	create := []boundCase{
		{name: "reference values", body: body(`,"initial_cash":10000,"commission":0.001`), status: 200},
		{name: "cash at maximum", body: body(`,"initial_cash":1e12`), status: 200},
		{name: "cash tiny", body: body(`,"initial_cash":0.01`), status: 200},
		{name: "cash over maximum", body: body(`,"initial_cash":1e13`), status: 400, detail: "initial_cash must be at most 1e12 (1,000,000,000,000), got 1e+13"},
		{name: "cash zero", body: body(`,"initial_cash":0`), status: 400, detail: "initial_cash must be a positive number, got 0"},
		{name: "cash negative", body: body(`,"initial_cash":-100`), status: 400, detail: "initial_cash must be a positive number, got -100"},
		{name: "commission zero", body: body(`,"commission":0`), status: 200},
		{name: "commission just under 1", body: body(`,"commission":0.99`), status: 200},
		{name: "commission one", body: body(`,"commission":1`), status: 400, detail: commOver + "1"},
		{name: "commission as percent", body: body(`,"commission":5`), status: 400, detail: commOver + "5"},
		{name: "commission negative", body: body(`,"commission":-0.01`), status: 400, detail: "commission must be a fraction from 0 up to 1, got -0.01"},
		{name: "dates at the edges", body: `{"strategy_id":"str_1","start_date":"1900-01-01","end_date":"2200-01-01"}`, status: 200},
		{name: "start before 1900", body: `{"strategy_id":"str_1","start_date":"1899-12-31","end_date":"1979-12-31"}`, status: 400, detail: "start_date 1899-12-31" + outOfRange},
		{name: "end after 2200", body: `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"2200-01-02"}`, status: 400, detail: "end_date 2200-01-02" + outOfRange},
	}
	for _, path := range []string{"/api/backtests", "/backtest"} {
		for i := range create {
			create[i].method, create[i].path = "POST", path
		}
		t.Run(path, func(t *testing.T) {
			checkBoundCases(t, func(t *testing.T, c boundCase) (int, any) { return e.do(t, c.method, c.path, c.body) }, create)
		})
	}

	const positive = " is not positive (prices must be greater than 0)"
	const dates = "dates must be from 1900-01-01 to 2200-01-01"
	imports := []boundCase{
		{name: "csv edges", path: "/api/data/testsrc/EDGE/bars", contentType: "text/csv",
			body: "date,open,high,low,close,volume\n1900-01-01,1,1,1,1,0\n2200-01-01,1,1,1,1,0\n", status: 200},
		{name: "csv zero close", path: "/api/data/testsrc/BAD/bars", contentType: "text/csv",
			body: "date,open,high,low,close,volume\n2024-01-02,1,1,1,1,0\n2024-01-03,1,1,1,0,0\n", status: 400,
			detail: "Invalid CSV at line 3: close 0" + positive},
		{name: "csv negative prices", path: "/api/data/testsrc/BAD/bars", contentType: "text/csv",
			body: "date,open,high,low,close,volume\n2024-01-02,-2,-1,-3,-2,0\n", status: 400,
			detail: "Invalid CSV at line 2: open -2" + positive},
		{name: "csv before 1900", path: "/api/data/testsrc/BAD/bars", contentType: "text/csv",
			body: "date,open,high,low,close,volume\n1899-12-31,1,1,1,1,0\n", status: 400,
			detail: "Invalid CSV at line 2: the date is out of range (" + dates + ")"},
		{name: "json edges", path: "/api/data/testsrc/EDGEJ/bars", contentType: "application/json",
			body: `[{"datetime":"1900-01-01","open":1,"high":1,"low":1,"close":1},{"datetime":"2200-01-01","open":1,"high":1,"low":1,"close":1}]`, status: 200},
		{name: "json zero open", path: "/api/data/testsrc/BAD/bars", contentType: "application/json",
			body: `[{"datetime":"2024-01-02","open":0,"high":1,"low":0.5,"close":1}]`, status: 400,
			detail: "Invalid bar at index 0: open 0" + positive},
		{name: "json after 2200", path: "/api/data/testsrc/BAD/bars", contentType: "application/json",
			body: `[{"datetime":"2024-01-02","open":1,"high":1,"low":1,"close":1},{"datetime":"2200-01-02","open":1,"high":1,"low":1,"close":1}]`, status: 400,
			detail: "Invalid bar at index 1: datetime 2200-01-02 is out of range (" + dates + ")"},
	}
	checkBoundCases(t, func(t *testing.T, c boundCase) (int, any) {
		req := strings.NewReader(c.body)
		resp, err := e.srv.Client().Post(e.srv.URL+c.path, c.contentType, req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}, imports)
	if status, body := e.do(t, "GET", "/api/data/testsrc/symbols?search=BAD", ""); status != 200 || len(field(body, "data").([]any)) != 0 {
		t.Errorf("refused imports registered a symbol: %d %v", status, body)
	}
}

// TestAsyncStrategyRefused checks that strategy code with an async lifecycle method is a
// 400 naming the method, with its line and column.
func TestAsyncStrategyRefused(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	code := "class Waits extends Strategy {\n  init() {}\n  async next() { await null; this.buy({ size: 1 }); }\n}\n"
	payload, _ := json.Marshal(map[string]string{"name": "Waits", "code": code})
	status, body := e.do(t, "POST", "/api/strategies", string(payload))
	want := "Invalid strategy code: Failed to load strategy: next() must not be async: the engine calls it synchronously"
	if status != 400 || field(body, "detail") != want || field(body, "line") != 3.0 || field(body, "column") != 3.0 {
		t.Fatalf("%d %v, want 400 %q at 3:3", status, body, want)
	}
	payload, _ = json.Marshal(map[string]string{"name": "Waits", "code": strings.Replace(code, "async next() { await null;", "next() {", 1)})
	status, body = e.do(t, "POST", "/api/strategies", string(payload))
	if status != 200 {
		t.Fatalf("the same code without async: %d %v", status, body)
	}
}
