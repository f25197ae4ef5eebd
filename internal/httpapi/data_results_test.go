package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/report"

	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
)

type dataBundle struct {
	ctx   context.Context
	store *store.Store
	srv   *httptest.Server
}

func setupData(t *testing.T, sample bool) *dataBundle {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, pgtest.NewDatabase(t))
	if err := marketdata.EnsureBuiltin(ctx, st, sample); err != nil {
		t.Fatal(err)
	}
	// An insert-only client queues the update jobs; no worker runs them here.
	queue, err := jobs.NewClient(st.Pool, jobs.Config{Register: func(w *river.Workers) {
		marketdata.AddWorkers(w, marketdata.Deps{Store: st})
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{}, Deps{Store: st, Logger: quietLogger(), Data: marketdata.NewService(st, queue)}))
	t.Cleanup(srv.Close)
	return &dataBundle{ctx: ctx, store: st, srv: srv}
}

// call does one request and decodes a JSON answer (any shape).
func (b *dataBundle) call(t *testing.T, method, path, contentType string, body io.Reader) (int, any) {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return resp.StatusCode, string(raw)
	}
	return resp.StatusCode, v
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func sharedPath(t *testing.T, parts ...string) string {
	t.Helper()
	return reftest.Path(t, parts...)
}

func TestDataRoutes(t *testing.T) {
	t.Parallel()
	b := setupData(t, true)
	tests := []struct {
		name, method, path string
		status             int
		detail             string
	}{
		{"sources", "GET", "/api/data/sources", 200, ""},
		{"symbols", "GET", "/api/data/builtin/symbols", 200, ""},
		{"symbols unknown source", "GET", "/api/data/nope/symbols", 404, "Data source not found: nope"},
		{"symbols limit too big", "GET", "/api/data/builtin/symbols?limit=1001", 400, "Invalid limit '1001': expected an integer from 1 to 1000"},
		{"symbols limit zero", "GET", "/api/data/builtin/symbols?limit=0", 400, "Invalid limit '0': expected an integer from 1 to 1000"},
		{"symbols limit not a number", "GET", "/api/data/builtin/symbols?limit=x", 400, "Invalid limit 'x': expected an integer from 1 to 1000"},
		{"bars", "GET", "/api/data/builtin/ACME?start_date=2020-01-01&end_date=2020-01-31", 200, ""},
		{"bars unknown source", "GET", "/api/data/nope/ACME?start_date=2020-01-01&end_date=2020-01-31", 404, "Data source not found: nope"},
		{"bars missing start", "GET", "/api/data/builtin/ACME?end_date=2020-01-31", 400, "Data retrieval failed: start_date is required (YYYY-MM-DD)"},
		{"bars bad date", "GET", "/api/data/builtin/ACME?start_date=2020-13-01&end_date=2020-01-31", 400, "Data retrieval failed: start_date '2020-13-01' is not a date in YYYY-MM-DD form"},
		{"bars finer timeframe", "GET", "/api/data/builtin/ACME?start_date=2020-01-01&end_date=2020-01-31&timeframe=5m", 400, "Data retrieval failed: timeframe 5m is finer than the stored bars of ACME (finest stored: 1d)"},
		{"bars unknown symbol", "GET", "/api/data/builtin/NOPE?start_date=2020-01-01&end_date=2020-01-31", 400, "Data retrieval failed: unknown symbol 'NOPE' in data source 'builtin'"},
		{"chart", "GET", "/api/data/builtin/ACME/chart?start_date=2020-01-01&end_date=2020-01-31&timeframe=1w", 200, ""},
		{"chart missing end", "GET", "/api/data/builtin/ACME/chart?start_date=2020-01-01", 400, "Data retrieval failed: end_date is required (YYYY-MM-DD)"},
		{"chart unknown symbol", "GET", "/api/data/builtin/NOPE/chart?start_date=2020-01-01&end_date=2020-01-31", 400, "Data retrieval failed: unknown symbol 'NOPE' in data source 'builtin'"},
		{"update", "POST", "/api/data/builtin/update?symbol=ACME", 200, ""},
		{"update unknown source", "POST", "/api/data/nope/update?symbol=ACME", 404, "Data source not found: nope"},
		{"update without symbol", "POST", "/api/data/builtin/update", 422, "Query parameter 'symbol' is required"},
		{"update bad force", "POST", "/api/data/builtin/update?symbol=ACME&force=maybe", 422, "Query parameter 'force': expected true or false, got 'maybe'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := b.call(t, tc.method, tc.path, "", nil)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			if tc.detail != "" && field(body, "detail") != tc.detail {
				t.Errorf("detail %q, want %q", field(body, "detail"), tc.detail)
			}
			if tc.status == 200 && field(body, "code") != "ok" {
				t.Errorf("not an ok envelope: %v", body)
			}
		})
	}

	_, body := b.call(t, "GET", "/api/data/sources", "", nil)
	if src := field(body, "data").([]any)[0].(map[string]any); src["name"] != "builtin" || src["description"] == "" {
		t.Errorf("sources %v", body)
	}
	_, body = b.call(t, "GET", "/api/data/builtin/symbols?search=glob", "", nil)
	if syms := field(body, "data").([]any); len(syms) != 1 || syms[0].(map[string]any)["symbol"] != "GLOBEX" {
		t.Errorf("search glob: %v", syms)
	}
	_, body = b.call(t, "GET", "/api/data/builtin/symbols?limit=2", "", nil)
	if syms := field(body, "data").([]any); len(syms) != 2 {
		t.Errorf("limit 2: %d symbols", len(syms))
	}
	_, body = b.call(t, "GET", "/api/data/builtin/ACME?start_date=2020-01-01&end_date=2020-01-31&timeframe=1w", "", nil)
	weeks := field(body, "data", "bars").([]any)
	_, body = b.call(t, "GET", "/api/data/builtin/ACME?start_date=2020-01-01&end_date=2020-01-31", "", nil)
	days := field(body, "data", "bars").([]any)
	if field(body, "data", "symbol") != "ACME" || field(body, "data", "timeframe") != "1d" || len(days) != 23 || len(weeks) != 5 {
		t.Fatalf("January 2020: %d days, %d weeks", len(days), len(weeks))
	}
	// The chart of the same weeks: price, MA5/10/20 and volume on the bars' own dates.
	_, body = b.call(t, "GET", "/api/data/builtin/ACME/chart?start_date=2020-01-01&end_date=2020-01-31&timeframe=1w", "", nil)
	series := field(body, "data", "series").([]any)
	price := series[0].(map[string]any)
	if field(body, "data", "type") != "candlestick" || len(series) != 5 || len(price["data"].([]any)) != len(weeks) ||
		price["data"].([]any)[0].([]any)[0] != weeks[0].(map[string]any)["datetime"] {
		t.Errorf("chart of the weeks: %v", field(body, "data"))
	}
	d0 := days[0].(map[string]any)
	for _, k := range []string{"datetime", "open", "high", "low", "close", "volume"} {
		if _, ok := d0[k]; !ok {
			t.Errorf("bar lacks %s: %v", k, d0)
		}
	}
	if d0["datetime"] != "2020-01-01" || weeks[0].(map[string]any)["open"] != d0["open"] {
		t.Errorf("first day %v, first week %v", d0, weeks[0])
	}
	_, body = b.call(t, "POST", "/api/data/builtin/update?symbol=ACME&force=true", "", nil)
	if !strings.HasPrefix(field(body, "message").(string), "Update task") {
		t.Errorf("update message %v", body)
	}
}

func TestBarImportRoute(t *testing.T) {
	t.Parallel()
	b := setupData(t, false)
	csvBytes, err := os.ReadFile(sharedPath(t, "data", "orcl.csv"))
	if err != nil {
		t.Fatal(err)
	}
	status, body := b.call(t, "POST", "/api/data/builtin/ORCL/bars?name=Oracle", "text/csv", bytes.NewReader(csvBytes))
	if status != 200 || field(body, "data", "inserted") != 5036.0 || field(body, "data", "timeframe") != "1d" {
		t.Fatalf("import: %d %v", status, body)
	}
	status, body = b.call(t, "POST", "/api/data/builtin/ORCL/bars", "text/csv", bytes.NewReader(csvBytes))
	if status != 200 || field(body, "data", "inserted") != 0.0 || field(body, "data", "unchanged") != 5036.0 {
		t.Fatalf("re-import: %d %v", status, body)
	}
	_, body = b.call(t, "GET", "/api/data/builtin/symbols?search=orcl", "", nil)
	if syms := field(body, "data").([]any); len(syms) != 1 || syms[0].(map[string]any)["name"] != "Oracle" {
		t.Errorf("registered symbol: %v", syms)
	}
	bad := []struct{ name, ct, body, detail string }{
		{"non-numeric", "text/csv", "date,open,high,low,close,volume\n2024-01-02,1,2,0.5,1,10\n2024-01-03,abc,2,0.5,1,10\n", "Invalid CSV at line 3: open \"abc\" is not a number"},
		{"high below low", "text/csv", "date,open,high,low,close,volume\n2024-01-02,1,0.4,0.5,1,10\n", "Invalid CSV at line 2: high 0.4 is below low 0.5"},
		{"duplicate date", "text/csv", "date,open,high,low,close,volume\n2024-01-02,1,2,0.5,1,10\n2024-01-02,1,2,0.5,1,10\n", "Invalid CSV at line 3: duplicate date 2024-01-02"},
		{"bad date", "text/csv", "date,open,high,low,close,volume\n02/01/2024,1,2,0.5,1,10\n", "Invalid CSV at line 2"},
		{"json bad bar", "application/json", `[{"datetime":"2024-01-02","open":1,"high":0.1,"low":0.5,"close":1}]`, "Invalid bar at index 0: high 0.1 is below low 0.5"},
		{"empty", "text/csv", "date,open,high,low,close,volume\n", "No bars to import: the input has a header but no rows"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			status, body := b.call(t, "POST", "/api/data/builtin/NEWSYM/bars", tc.ct, strings.NewReader(tc.body))
			if status != 400 || !strings.HasPrefix(field(body, "detail").(string), tc.detail) {
				t.Errorf("%d %v, want 400 %q", status, body, tc.detail)
			}
		})
	}
	if _, body := b.call(t, "GET", "/api/data/builtin/symbols?search=newsym", "", nil); len(field(body, "data").([]any)) != 0 {
		t.Errorf("a refused import registered the symbol")
	}
	status, body = b.call(t, "POST", "/api/data/builtin/INTRA/bars", "application/json",
		strings.NewReader(`{"bars":[{"datetime":"2024-01-02T14:30:00Z","open":1,"high":2,"low":0.5,"close":1.5,"volume":10},{"datetime":"2024-01-02T14:35:00Z","open":1.5,"high":3,"low":1,"close":2,"volume":5}]}`))
	if status != 200 || field(body, "data", "timeframe") != "5m" || field(body, "data", "inserted") != 2.0 {
		t.Fatalf("json import: %d %v", status, body)
	}
	_, body = b.call(t, "GET", "/api/data/builtin/INTRA?start_date=2024-01-02&end_date=2024-01-02&timeframe=1h", "", nil)
	hour := field(body, "data", "bars").([]any)
	if len(hour) != 1 || hour[0].(map[string]any)["high"] != 3.0 || hour[0].(map[string]any)["volume"] != 15.0 || hour[0].(map[string]any)["datetime"] != "2024-01-02T14:00:00Z" {
		t.Errorf("hourly aggregate %v", hour)
	}
	if status, body := b.call(t, "POST", "/api/data/nope/X/bars", "text/csv", strings.NewReader("date,open,high,low,close\n")); status != 404 {
		t.Errorf("unknown source import: %d %v", status, body)
	}

	// Times without an offset are read in the zone given, which the symbol keeps.
	ny := "date,open,high,low,close,volume\n2024-07-01 09:30,1,2,0.5,1.5,10\n2024-07-01 09:35,1.5,3,1,2,5\n"
	status, body = b.call(t, "POST", "/api/data/builtin/NYSE5/bars?timezone=America/New_York", "text/csv", strings.NewReader(ny))
	if status != 200 || field(body, "data", "timezone") != "America/New_York" || field(body, "data", "first") != "2024-07-01T13:30:00Z" {
		t.Fatalf("import in New York time: %d %v", status, body)
	}
	_, body = b.call(t, "GET", "/api/data/builtin/NYSE5?start_date=2024-07-01&end_date=2024-07-01&timeframe=5m", "", nil)
	if field(body, "data", "timezone") != "America/New_York" || len(field(body, "data", "bars").([]any)) != 2 {
		t.Errorf("bars of a New York symbol: %v", body)
	}
	if _, body := b.call(t, "GET", "/api/data/builtin/symbols?search=NYSE5", "", nil); field(body, "data").([]any)[0].(map[string]any)["timezone"] != "America/New_York" {
		t.Errorf("symbol list: %v", body)
	}
	status, body = b.call(t, "POST", "/api/data/builtin/NYSE5/bars?timezone=Europe/London", "text/csv", strings.NewReader(ny))
	if status != 409 || !strings.Contains(field(body, "detail").(string), "America/New_York") {
		t.Errorf("import in another zone: %d %v, want 409 naming the symbol's zone", status, body)
	}
	status, body = b.call(t, "POST", "/api/data/builtin/NYSE6/bars?timezone=Nowhere/Special", "text/csv", strings.NewReader(ny))
	if status != 400 || !strings.HasPrefix(field(body, "detail").(string), "Unknown time zone 'Nowhere/Special'") {
		t.Errorf("unknown zone: %d %v, want 400", status, body)
	}
}

// storeRun runs the SMA crossover over bars and stores it as a completed task.
func storeRun(t testing.TB, b *dataBundle, id, symbol string, bars []engine.Bar, params string) *engine.Result {
	t.Helper()
	code, err := os.ReadFile(filepath.Join("..", "..", "examples", "sma_cross.js"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	_ = json.Unmarshal([]byte(params), &p)
	res, err := jsrt.Run(b.ctx, jsrt.RunConfig{Code: string(code), Params: p, Feeds: []engine.Feed{{Symbol: symbol, Bars: bars}}, Cash: 10000, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		if _, err := b.store.Pool.Exec(b.ctx, sql, args...); err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	exec(`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'SmaCross', 1) ON CONFLICT DO NOTHING`)
	exec(`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash)
		VALUES ('str_1', 1, 'SmaCross', $1, 'SmaCross', 'api', 'h') ON CONFLICT DO NOTHING`, string(code))
	exec(`INSERT INTO tasks (id, strategy_id, strategy_version, status, data_source, symbol, symbols, benchmark, start_date, end_date,
		initial_cash, commission, strategy_params, session_id) VALUES ($1, 'str_1', 1, 'completed', 'builtin', $2, ARRAY[$2::text], $2, $3, $4, 10000, 0.001, $5::jsonb, 's')`,
		id, symbol, bars[0].Time, bars[len(bars)-1].Time, params)
	tx, err := b.store.Pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	if err := results.Save(b.ctx, tx, id, 1, res, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestImportRunAndReadEndToEnd goes the way a user does, over HTTP against real River
// workers: import orcl.csv through the bar-import route, create the SMA-crossover example
// through POST /api/strategies, run it through POST /api/backtests, wait for completed, and
// check the stored summary against backtrader's figures in sma_cross__orcl.json.
func TestImportRunAndReadEndToEnd(t *testing.T) {
	t.Parallel()
	csvBytes, err := os.ReadFile(sharedPath(t, "data", "orcl.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		FinalValue float64 `json:"final_value"`
		Sharpe     struct {
			DailyAnnualized float64 `json:"daily_annualized"`
		} `json:"sharpe"`
		Drawdown struct {
			MaxPct float64 `json:"max_drawdown_pct"`
		} `json:"drawdown"`
		TradeAnalyzer struct {
			Total int `json:"total"`
		} `json:"trade_analyzer"`
		Bars int `json:"bars"`
	}
	raw, err := os.ReadFile(sharedPath(t, "expected", "sma_cross__orcl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join("..", "..", "examples", "sma_cross.js"))
	if err != nil {
		t.Fatal(err)
	}

	e := newTaskEnv(t, 1) // the task tests' server: API, event listener and River workers
	if err := marketdata.EnsureBuiltin(e.ctx, e.st, false); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(e.srv.URL+"/api/data/builtin/ORCL/bars?name=Oracle", "text/csv", bytes.NewReader(csvBytes))
	if err != nil {
		t.Fatal(err)
	}
	var imported Envelope
	_ = json.NewDecoder(resp.Body).Decode(&imported)
	resp.Body.Close()
	if resp.StatusCode != 200 || field(imported.Data, "inserted") != float64(want.Bars) {
		t.Fatalf("import: %d %+v, want %d new bars", resp.StatusCode, imported, want.Bars)
	}

	upload, _ := json.Marshal(map[string]string{"name": "SmaCross", "code": string(code)})
	status, body := e.do(t, "POST", "/api/strategies", string(upload))
	id, _ := field(body, "id").(string)
	if status != 200 || id == "" {
		t.Fatalf("create strategy: %d %v", status, body)
	}
	status, body = e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+id+`","data_source":"builtin","symbol":"ORCL",
		"start_date":"1995-01-01","end_date":"2014-12-31","initial_cash":10000,"commission":0.001,
		"strategy_params":{"fast":10,"slow":30,"size":10}}`)
	taskID, _ := field(body, "task_id").(string)
	if status != 200 || taskID == "" {
		t.Fatalf("submit: %d %v", status, body)
	}
	if final := e.waitStatus(t, taskID, "completed", "failed", "cancelled"); final["status"] != "completed" {
		t.Fatalf("task %s ended %v: %v", taskID, final["status"], final["error"])
	}

	status, body = e.do(t, "GET", "/api/results/"+taskID+"/summary", "")
	if status != 200 {
		t.Fatalf("summary %d %v", status, body)
	}
	got := func(k string) float64 { v, _ := field(body, "data", k).(float64); return v }
	for _, c := range []struct {
		key          string
		got, want    float64
		relTolerance float64
	}{
		{"final_value", got("final_value"), want.FinalValue, 1e-9},
		{"sharpe_ratio", got("sharpe_ratio"), want.Sharpe.DailyAnnualized, 1e-9},
		{"max_drawdown_pct", got("max_drawdown_pct"), want.Drawdown.MaxPct, 1e-9},
		{"total_trades", got("total_trades"), float64(want.TradeAnalyzer.Total), 0},
	} {
		if math.Abs(c.got-c.want) > c.relTolerance*math.Abs(c.want) {
			t.Errorf("%s = %v, want %v (relative tolerance %g)", c.key, c.got, c.want, c.relTolerance)
		}
	}
	// The stored statistics record is served too, and agrees with the summary.
	status, body = e.do(t, "GET", "/api/results/"+taskID+"/statistics", "")
	if status != 200 || field(body, "data", "groups") == nil {
		t.Errorf("statistics %d %v", status, body)
	}
}

func TestResultRoutes(t *testing.T) {
	t.Parallel()
	b := setupData(t, false)
	bars := engine.RandomWalk(700, 9)
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "RW", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	res := storeRun(t, b, "task_1", "RW", bars, `{"fast":5,"slow":20,"size":10}`)
	storeRun(t, b, "task_2", "RW", bars[200:], `{"fast":10,"slow":30,"size":10}`)

	tests := []struct {
		name, path string
		status     int
		detail     string
	}{
		{"summary", "/api/results/task_1/summary", 200, ""},
		{"trades", "/api/results/task_1/trades?skip=1&limit=2", 200, ""},
		{"round trips", "/api/results/task_1/trades?kind=round_trips", 200, ""},
		{"trades bad skip", "/api/results/task_1/trades?skip=x", 400, "Invalid skip 'x': expected an integer from 0 to 2147483647"},
		{"chart default", "/api/results/task_1/chart", 200, ""},
		{"chart equity", "/api/results/task_1/chart?chart_type=equity", 200, ""},
		{"chart underwater", "/api/results/task_1/chart?chart_type=underwater", 200, ""},
		{"chart unsupported", "/api/results/task_1/chart?chart_type=pie", 400, "Unsupported chart type: pie"},
		{"chart own moving averages", "/api/results/task_1/chart?ma=5,20", 200, ""},
		{"chart bad moving average", "/api/results/task_1/chart?ma=5,x", 400, "Invalid ma '5,x': comma-separated periods from 2 to 1000"},
		{"chart too many moving averages", "/api/results/task_1/chart?ma=2,3,4,5,6,7", 400, "Invalid ma '2,3,4,5,6,7': at most 5 periods"},
		{"chart rolling sharpe", "/api/results/task_1/chart?chart_type=rolling_sharpe&from=1971-01-01", 200, ""},
		{"chart returns histogram", "/api/results/task_1/chart?chart_type=returns_histogram", 200, ""},
		{"drawdowns", "/api/results/task_1/drawdowns?limit=3", 200, ""},
		{"drawdowns bad limit", "/api/results/task_1/drawdowns?limit=101", 400, "Invalid limit '101': expected an integer from 1 to 100"},
		{"drawdowns missing", "/api/results/task_99/drawdowns", 404, "Result not found: task_99"},
		{"statistics", "/api/results/task_1/statistics", 200, ""},
		{"analyzers", "/api/results/task_1/analyzers", 200, ""},
		{"analyzers missing", "/api/results/task_99/analyzers", 404, "Result not found: task_99"},
		{"export csv", "/api/results/task_1/export?format=csv", 200, ""},
		{"export unsupported", "/api/results/task_1/export?format=xml", 400, "Unsupported export format: xml"},
		{"compare", "/api/results/compare?task_ids=task_1,task_2", 200, ""},
		{"compare csv", "/api/results/compare?task_ids=task_1,task_2&format=csv", 200, ""},
		{"compare one", "/api/results/compare?task_ids=task_1", 400, "Comparison needs 2 to 5 distinct task ids in task_ids (comma-separated), got 1"},
		{"compare six", "/api/results/compare?task_ids=a,b,c,d,e,f", 400, "Comparison needs 2 to 5 distinct task ids in task_ids (comma-separated), got 6"},
		{"compare unknown", "/api/results/compare?task_ids=task_1,task_99", 400, "Cannot compare task_99: task not found"},
		{"compare bad format", "/api/results/compare?task_ids=task_1,task_2&format=xml", 400, "Unsupported export format: xml"},
		{"summary missing", "/api/results/task_99/summary", 404, "Result not found: task_99"},
		{"trades missing", "/api/results/task_99/trades", 404, "Result not found: task_99"},
		{"chart missing", "/api/results/task_99/chart", 404, "Result not found: task_99"},
		{"statistics missing", "/api/results/task_99/statistics", 404, "Result not found: task_99"},
		{"export missing", "/api/results/task_99/export", 404, "Result not found: task_99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := b.call(t, "GET", tc.path, "", nil)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			if tc.detail != "" && field(body, "detail") != tc.detail {
				t.Errorf("detail %q, want %q", field(body, "detail"), tc.detail)
			}
			if tc.status == 200 && field(body, "code") != "ok" {
				t.Errorf("not an ok envelope: %v", body)
			}
		})
	}

	_, body := b.call(t, "GET", "/api/results/task_1/summary", "", nil)
	if len(field(body, "data").(map[string]any)) != 12 {
		t.Errorf("summary keys: %v", field(body, "data"))
	}
	_, body = b.call(t, "GET", "/api/results/task_1/trades?skip=1&limit=2", "", nil)
	if field(body, "data", "total") != float64(len(res.Executions)) || len(field(body, "data", "trades").([]any)) != 2 {
		t.Errorf("trades page %v", field(body, "data"))
	}
	_, body = b.call(t, "GET", "/api/results/task_1/chart", "", nil)
	if field(body, "data", "type") != "candlestick" || field(body, "data", "title") == "" {
		t.Errorf("default chart %v", field(body, "data", "title"))
	}
	_, body = b.call(t, "GET", "/api/results/task_1/chart?ma=20,5", "", nil)
	if legend := fmt.Sprint(field(body, "data", "legend", "data")); legend != "[K-Line MA20 MA5 Volume]" {
		t.Errorf("candlestick with the strategy's periods: legend %s", legend)
	}
	_, body = b.call(t, "GET", "/api/results/task_1/export?format=csv", "", nil)
	if field(body, "content_type") != "text/csv" || !strings.HasPrefix(field(body, "data").(string), "metric,value\ninitial_cash,10000\n") {
		t.Errorf("csv export %v", body)
	}
	_, body = b.call(t, "GET", "/api/results/task_1/export", "", nil)
	if field(body, "task_id") != "task_1" || field(body, "status") != "completed" || field(body, "code") != nil {
		t.Errorf("json export is not the bare result object: %v", field(body, "task_id"))
	}
	// The analyzers the run computed, stored with the result: on their route and in the export.
	if res.Analyzers.Returns.Total == nil || res.Analyzers.VWR == nil || len(res.Analyzers.PyFolio.Transactions) == 0 {
		t.Fatalf("the run has no returns, VWR or transactions to compare: %+v", res.Analyzers.Returns)
	}
	if got := field(body, "analyzers", "vwr"); got != *res.Analyzers.VWR {
		t.Errorf("json export's vwr %v, the run's %v", got, *res.Analyzers.VWR)
	}
	_, body = b.call(t, "GET", "/api/results/task_1/analyzers", "", nil)
	if got := field(body, "data", "returns", "rtot"); got != *res.Analyzers.Returns.Total {
		t.Errorf("analyzers' returns.rtot %v, the run's %v", got, *res.Analyzers.Returns.Total)
	}
	if n := len(field(body, "data", "pyfolio", "positions").([]any)); n != len(res.Equity) {
		t.Errorf("pyfolio positions: %d rows for %d equity points", n, len(res.Equity))
	}
	if n := len(field(body, "data", "pyfolio", "transactions").([]any)); n != len(res.Analyzers.PyFolio.Transactions) {
		t.Errorf("pyfolio transactions: %d, the run's %d", n, len(res.Analyzers.PyFolio.Transactions))
	}
	if n := len(field(body, "data", "time_return", "months").([]any)); n != len(res.Analyzers.TimeReturn.Months) || n == 0 {
		t.Errorf("monthly time returns: %d, the run's %d", n, len(res.Analyzers.TimeReturn.Months))
	}
	status, page := b.call(t, "GET", "/api/results/task_1/export?format=html", "", nil)
	if s, ok := page.(string); status != 200 || !ok || !strings.Contains(s, "<svg") {
		t.Errorf("html export %d", status)
	}
	_, body = b.call(t, "GET", "/api/results/task_1/statistics", "", nil)
	if groups := field(body, "data", "groups").([]any); len(groups) != 4 {
		t.Errorf("statistics groups %v", groups)
	}
	_, body = b.call(t, "GET", "/api/results/compare?task_ids=task_1,task_2", "", nil)
	if eq := field(body, "data", "equity", "series").([]any); len(eq) != 2 {
		t.Errorf("compare equity %v", eq)
	}
	// The drawdown periods are the engine's, deepest first, the deepest the Max Drawdown.
	_, body = b.call(t, "GET", "/api/results/task_1/drawdowns?limit=3", "", nil)
	dds := field(body, "data").([]any)
	want := engine.DrawdownPeriods(res.Equity, 3)
	if len(dds) != len(want) || len(want) == 0 {
		t.Fatalf("drawdowns: %v, want %d periods", dds, len(want))
	}
	for i, w := range want {
		got := dds[i].(map[string]any)
		if got["peak"] != results.FormatTime(w.Peak) || got["depth_pct"] != w.DepthPct || got["bars"] != float64(w.Bars) {
			t.Errorf("drawdown %d: %v, want %+v", i, got, w)
		}
	}
	if d := want[0].DepthPct; math.Abs(d-res.Summary.MaxDrawdownPct) > 1e-6 {
		t.Errorf("deepest drawdown %v%%, Max Drawdown %v%%", d, res.Summary.MaxDrawdownPct)
	}
	// The histogram counts every bar once.
	_, body = b.call(t, "GET", "/api/results/task_1/chart?chart_type=returns_histogram", "", nil)
	counted := 0
	for _, s := range field(body, "data", "series").([]any) {
		for _, v := range s.(map[string]any)["data"].([]any) {
			if v != nil {
				counted += int(v.(float64))
			}
		}
	}
	if counted != len(res.Equity) {
		t.Errorf("returns histogram counts %d bars, the run has %d", counted, len(res.Equity))
	}
}

// BenchmarkResultRoutes10k measures the chart and statistics routes over HTTP (handler,
// envelope, transfer of the body) on a stored 10,000-bar result. Targets: chart < 50 ms,
// statistics < 10 ms.
func BenchmarkResultRoutes10k(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(b), 4)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := marketdata.EnsureBuiltin(ctx, st, false); err != nil {
		b.Fatal(err)
	}
	bars := engine.RandomWalk(10000, 11)
	if _, err := marketdata.NewService(st, nil).Import(ctx, "builtin", "RW", "", "1d", time.UTC, bars); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{}, Deps{Store: st, Logger: quietLogger()}))
	defer srv.Close()
	storeRun(b, &dataBundle{ctx: ctx, store: st, srv: srv}, "task_1", "RW", bars, `{"fast":10,"slow":30,"size":10}`)
	paths := []string{"/api/results/task_1/statistics"}
	for _, kind := range report.ChartTypes {
		// Every point (max_points=0), as before line charts were sampled: the worst case.
		paths = append(paths, "/api/results/task_1/chart?max_points=0&chart_type="+kind)
	}
	for _, path := range paths {
		name := strings.Replace(strings.TrimPrefix(path, "/api/results/task_1/"), "?max_points=0&chart_type=", "/", 1)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n == 0 {
					b.Fatalf("%s: %d", path, resp.StatusCode)
				}
				b.SetBytes(n)
			}
		})
	}
}
