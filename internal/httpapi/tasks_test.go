package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/lookahead"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/pricepaths"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tasks"
)

const taskTestStrategy = `
/** Crossover. fast: fast period. slow: slow period. */
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) { this.buy({ size: 10 }); this.log('buy', 'INFO'); }
    else if (this.position.size > 0 && this.cross[0] < 0) { this.close(); this.log('sell', 'WARNING'); }
  }
}`

type taskEnv struct {
	ctx   context.Context
	srv   *httptest.Server
	st    *store.Store
	hub   *events.Hub
	strat string
	token string // with accounts on, root's API token sent with every request
}

// newTaskEnv serves the API over a fresh database holding a default source "testsrc" with
// symbol AAA (3,000 daily bars from 1970) and strategy str_1, with River workers.
func newTaskEnv(t *testing.T, workers int) *taskEnv { return newTaskEnvAccounts(t, workers, false) }

// newTaskEnvAccounts is newTaskEnv with accounts on when accounts is set: requests carry
// the API token of root, an admin, and str_1 is root's.
func newTaskEnvAccounts(t *testing.T, workers int, accounts bool) *taskEnv {
	t.Helper()
	return newTaskEnvShare(t, workers, accounts, 0)
}

// newTaskEnvShare is newTaskEnvAccounts with a fair share: userMax units of work of one
// user at once (USER_MAX_RUNNING; 0: none).
func newTaskEnvShare(t *testing.T, workers int, accounts bool, userMax int) *taskEnv {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, url, 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	exec(`INSERT INTO data_sources (name, description, is_default) VALUES ('testsrc', 'test', true)`)
	exec(`INSERT INTO symbols (source, symbol, name, is_default) VALUES ('testsrc', 'AAA', 'A', true)`)
	bars := engine.RandomWalk(3000, 3)
	rows := make([][]any, len(bars))
	for i, x := range bars {
		rows[i] = []any{"testsrc", "AAA", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
	}
	if _, err := st.Pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	info, err := jsrt.Inspect(ctx, taskTestStrategy)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(info.Params)
	// The id comes from the sequence (str_1 in a fresh database), as the API's would.
	exec(`INSERT INTO strategies (id, name, current_version) VALUES ('str_' || nextval('strategy_seq'), 'SmaCross', 1)`)
	exec(`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 1, 'SmaCross', $1, 'SmaCross', $2, 'api', 'h')`, taskTestStrategy, params)

	pool := runnertest.Pool(t)
	svc := tasks.New(tasks.Config{RunTimeout: 30 * time.Second, Runner: pool, UserMaxRunning: userMax}, st, quietLogger())
	stud := studies.New(studies.Config{Runner: pool, RunTimeout: 30 * time.Second, UserMaxRunning: userMax}, st, svc, quietLogger())
	paths := pricepaths.New(pricepaths.Config{Runner: pool, RunTimeout: 30 * time.Second, UserMaxRunning: userMax, Logger: quietLogger()}, st, svc)
	client, err := jobs.NewClient(st.Pool, jobs.Config{Workers: workers, RunTimeout: 30 * time.Second, Logger: quietLogger(),
		Register: func(w *river.Workers) { stud.AddWorker(w); paths.AddWorker(w) }}, svc)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetQueue(client)
	stud.SetQueue(client)
	paths.SetQueue(client)
	if workers > 0 {
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.StopAndCancel(c)
		})
	}
	hub := events.NewHub()
	lctx, cancel := context.WithCancel(ctx)
	l := events.NewListener(url, hub, quietLogger())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(lctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-l.Ready()
	reg := prometheus.NewRegistry()
	reg.MustRegister(svc.Collector())
	deps := Deps{Store: st, Logger: quietLogger(), Tasks: svc, Studies: stud, Paths: paths, Hub: hub, Strategies: StrategiesForTest(t, st), Metrics: reg,
		Lookahead: lookahead.New(lookahead.Config{Runner: pool, RunTimeout: 30 * time.Second}, st, svc)}
	e := &taskEnv{ctx: ctx, st: st, hub: hub, strat: "str_1"}
	if accounts {
		deps.Auth, e.token = AccountsForTest(t, st)
		exec(`UPDATE strategies SET created_by = 'root'`)
	}
	e.srv = httptest.NewServer(New(Config{}, deps))
	t.Cleanup(e.srv.Close)
	return e
}

// do sends a JSON request and decodes any JSON answer.
func (e *taskEnv) do(t *testing.T, method, path, body string) (int, any) {
	t.Helper()
	return e.doAs(t, e.token, method, path, body)
}

// doAs is do with the API token given ("" for none).
func (e *taskEnv) doAs(t *testing.T, token, method, path, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (e *taskEnv) submit(t *testing.T, extra string) map[string]any {
	t.Helper()
	code, body := e.do(t, "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"`+extra+`}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, body)
	}
	return body.(map[string]any)
}

func (e *taskEnv) waitStatus(t *testing.T, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := e.do(t, "GET", "/api/backtests/"+id, "")
		m := body.(map[string]any)
		for _, w := range want {
			if m["status"] == w {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %v, want %v", id, m["status"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTaskRoutes runs the task routes without accounts and, with accounts on, as an
// admin with an API token: the same answers either way.
func TestTaskRoutes(t *testing.T) {
	t.Parallel()
	for _, accounts := range []bool{false, true} {
		t.Run(fmt.Sprintf("accounts=%v", accounts), func(t *testing.T) {
			t.Parallel()
			testTaskRoutes(t, newTaskEnvAccounts(t, 0, accounts)) // no workers: tasks stay pending until cancelled
		})
	}
}

func testTaskRoutes(t *testing.T, e *taskEnv) {
	first := e.submit(t, `,"strategy_params":{"fast":"5"}`)
	for k, want := range map[string]any{"task_id": "task_1", "status": "pending", "progress": 0.0, "current_bar": 0.0,
		"total_bars": 0.0, "error": nil, "started_at": nil, "completed_at": nil, "strategy_id": "str_1",
		"strategy_version": 1.0, "attempt": 1.0, "data_source": "testsrc", "symbol": "AAA", "session_id": "task_1"} {
		if fmt.Sprint(first[k]) != fmt.Sprint(want) {
			t.Errorf("created task %s = %v, want %v", k, first[k], want)
		}
	}
	e.submit(t, `,"session_id":"s"`)

	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // substring of the JSON answer
	}{
		{"list newest first", "GET", "/api/backtests", "", 200, `"task_id":"task_2"`},
		{"list by status", "GET", "/api/backtests?status=running", "", 200, `[]`},
		{"list bad status", "GET", "/api/backtests?status=done", "", 400, `Invalid status 'done'`},
		{"list bad limit", "GET", "/api/backtests?limit=0", "", 400, `Invalid limit '0'`},
		{"list bad skip", "GET", "/api/backtests?skip=x", "", 400, `Invalid skip 'x'`},
		{"list bad sort", "GET", "/api/backtests?sort=luck", "", 400, `Invalid sort 'luck': use one of created_at, total_return, max_drawdown, sharpe_ratio, total_trades`},
		{"list bad order", "GET", "/api/backtests?order=up", "", 400, `Invalid order 'up': use asc or desc`},
		{"list bad count", "GET", "/api/backtests?count=maybe", "", 400, `Invalid count 'maybe': use true or false`},
		{"list by symbol", "GET", "/api/backtests?symbol=aaa&sort=created_at&order=asc", "", 200, `"task_id":"task_1"`},
		{"list other symbol", "GET", "/api/backtests?symbol=ZZZ", "", 200, `[]`},
		{"delete pending", "POST", "/api/backtests/task_1/delete", "", 409, `Task task_1 is pending: cancel it before deleting it`},
		{"delete unknown", "POST", "/api/backtests/task_99/delete", "", 404, `Task not found: task_99`},
		{"get with attempts", "GET", "/api/backtests/task_1", "", 200, `"runs":0,"started_at":null,"status":"pending","worker":null}],`},
		{"get unknown", "GET", "/api/backtests/task_99", "", 404, `"detail":"Task not found: task_99"`},
		{"progress", "GET", "/api/backtests/task_1/progress", "", 200, `"data":{"current_bar":0,"progress":0,"status":"pending","task_id":"task_1","total_bars":0}`},
		{"progress unknown", "GET", "/api/backtests/task_99/progress", "", 404, `Task not found: task_99`},
		{"logs unknown id", "GET", "/api/backtests/task_99/logs", "", 200, `"code":"ok","data":[],"message":"success"`},
		{"logs bad level", "GET", "/api/backtests/task_1/logs?level=LOUD", "", 400, `Invalid level 'LOUD'`},
		{"retry pending", "POST", "/api/backtests/task_1/retry", "", 409, `Task task_1 is pending: only failed or cancelled tasks can be retried`},
		{"retry unknown", "POST", "/api/backtests/task_99/retry", "", 404, `Task not found: task_99`},
		{"cancel pending", "DELETE", "/api/backtests/task_1", "", 200, `"code":"ok","data":{"status":"cancelled","task_id":"task_1"},"message":"Task task_1 cancelled"`},
		{"cancel again unchanged", "DELETE", "/api/backtests/task_1", "", 200, `"code":"ok","data":{"status":"cancelled","task_id":"task_1"},"message":"Task task_1 is cancelled; nothing to cancel"`},
		{"cancel unknown", "DELETE", "/api/backtests/task_99", "", 404, `Task not found: task_99`},
		{"retry cancelled", "POST", "/api/backtests/task_1/retry", "", 200, `"attempt":2`},
		{"cancel second", "DELETE", "/api/backtests/task_2", "", 200, `"message":"Task task_2 cancelled"`},
		{"delete cancelled", "POST", "/api/backtests/task_2/delete", "", 200, `"code":"ok","data":{"task_id":"task_2"},"message":"Task task_2 deleted"`},
		{"deleted is gone", "GET", "/api/backtests/task_2", "", 404, `Task not found: task_2`},
		{"create bad json", "POST", "/api/backtests", `{"strategy_id":`, 400, `Malformed JSON`},
		{"create wrong type", "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01","initial_cash":"lots"}`, 422, `Field 'initial_cash'`},
		{"create missing dates", "POST", "/api/backtests", `{"strategy_id":"str_1"}`, 422, `Field 'start_date' is required`},
		{"create unknown strategy", "POST", "/api/backtests", `{"strategy_id":"str_9","start_date":"1970-01-01","end_date":"1971-01-01"}`, 404, `Strategy not found: str_9`},
		{"create bad date", "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-1-1","end_date":"1971-01-01"}`, 400, `Invalid start_date '1970-1-1'`},
		{"create unsupported source", "POST", "/api/backtests", `{"strategy_id":"str_1","data_source":"yahoo","start_date":"1970-01-01","end_date":"1971-01-01"}`, 400, `Unsupported data source: yahoo`},
		{"create unknown param", "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01","strategy_params":{"x":1}}`, 400, `Unknown parameter: x`},
		{"create bad param", "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01","strategy_params":{"fast":[1]}}`, 400, `Parameter 'fast': expected int, got list`},
		{"secondary submit", "POST", "/backtest", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1971-01-01"}`, 200, `"task_id":"task_3"`},
		{"secondary get", "GET", "/backtest/task_3", "", 200, `"result":null`},
		{"secondary get unknown", "GET", "/backtest/task_99", "", 404, `Task not found: task_99`},
		{"secondary strategies", "GET", "/strategies", "", 200, `"id":"str_1"`},
		{"secondary analyzers", "GET", "/analyzers", "", 200, `"name":"drawdown"`},
	}
	for _, c := range cases { // in order: later cases see the earlier ones' effects
		code, body := e.do(t, c.method, c.path, c.body)
		text, _ := json.Marshal(body)
		if code != c.status || !strings.Contains(string(text), c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, code, text, c.status, c.want)
		}
	}
}

// TestRunsList sorts finished runs by their key figures, pages them with the total in
// X-Total-Count, and deletes one with its result and logs.
func TestRunsList(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	var ids []string
	for _, p := range []string{`{"fast":5,"slow":20}`, `{"fast":10,"slow":30}`, `{"fast":3,"slow":60}`, `{"fast":20,"slow":50}`} {
		ids = append(ids, e.submit(t, `,"strategy_params":`+p)["task_id"].(string))
	}
	for _, id := range ids {
		waitFor(t, 2*time.Minute, func() bool {
			_, b := e.do(t, "GET", "/api/backtests/"+id, "")
			return b.(map[string]any)["status"] == "completed"
		})
	}
	list := func(query string) (figs []float64, order []string, total string) {
		t.Helper()
		resp, err := http.Get(e.srv.URL + "/api/backtests?count=true&" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tasks []struct {
			TaskID  string `json:"task_id"`
			Figures *struct {
				TotalReturn float64 `json:"total_return"`
				MaxDrawdown float64 `json:"max_drawdown_pct"`
				Trades      int     `json:"total_trades"`
			} `json:"figures"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&tasks); err != nil || resp.StatusCode != 200 {
			t.Fatalf("list ?%s: %d %v", query, resp.StatusCode, err)
		}
		for _, x := range tasks {
			if x.Figures == nil {
				t.Fatalf("completed %s listed without figures", x.TaskID)
			}
			figs = append(figs, x.Figures.TotalReturn)
			order = append(order, x.TaskID)
		}
		return figs, order, resp.Header.Get("X-Total-Count")
	}
	desc, byReturn, total := list("sort=total_return")
	if total != "4" || len(desc) != 4 || !slices.IsSortedFunc(desc, func(a, b float64) int { return cmp.Compare(b, a) }) {
		t.Fatalf("by return, highest first: %v (%v), total %s", desc, byReturn, total)
	}
	if desc[0] == desc[3] {
		t.Fatalf("the four runs returned the same %v: the sort is not tested", desc[0])
	}
	asc, _, _ := list("sort=total_return&order=asc")
	if !slices.IsSorted(asc) {
		t.Errorf("by return, lowest first: %v", asc)
	}
	page, pageIDs, total := list("sort=total_return&skip=1&limit=2")
	if total != "4" || !slices.Equal(page, desc[1:3]) || !slices.Equal(pageIDs, byReturn[1:3]) {
		t.Errorf("second page of two: %v %v (total %s), want %v", page, pageIDs, total, desc[1:3])
	}
	// Delete the best run: its result and logs go with it.
	best := byReturn[0]
	if code, body := e.do(t, "POST", "/api/backtests/"+best+"/delete", ""); code != 200 {
		t.Fatalf("delete %s: %d %v", best, code, body)
	}
	if code, _ := e.do(t, "GET", "/api/results/"+best+"/summary", ""); code != 404 {
		t.Errorf("deleted run's summary answers %d, want 404", code)
	}
	var logs int
	if err := e.st.Pool.QueryRow(e.ctx, `SELECT count(*) FROM task_logs WHERE task_id = $1`, best).Scan(&logs); err != nil || logs != 0 {
		t.Errorf("deleted run keeps %d log lines (%v)", logs, err)
	}
	if _, after, total := list("sort=total_return"); total != "3" || !slices.Equal(after, byReturn[1:]) {
		t.Errorf("after deleting %s: %v, total %s", best, after, total)
	}
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wsClient is a test WebSocket client collecting frames.
type wsClient struct {
	conn *websocket.Conn
}

func (e *taskEnv) dial(t testing.TB, path string) *wsClient {
	t.Helper()
	u := "ws" + strings.TrimPrefix(e.srv.URL, "http") + path
	conn, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{conn: conn}
}

type frame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

func (c *wsClient) next(t testing.TB) frame {
	t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, msg, err := c.conn.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f frame
	if err := json.Unmarshal(msg, &f); err != nil {
		t.Fatalf("frame %s: %v", msg, err)
	}
	return f
}

func (c *wsClient) send(t testing.TB, v string) {
	t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
		t.Fatal(err)
	}
}

func TestTaskWebSocket(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	c := e.dial(t, "/ws/task_1")
	if f := c.next(t); f.Event != "connected" || string(f.Data) != `{"task_id":"task_1"}` {
		t.Fatalf("first frame %+v", f)
	}
	c.send(t, `{"action":"dance"}`)
	c.send(t, `not json`)
	c.send(t, `{"action":"ping"}`)
	if f := c.next(t); f.Event != "pong" || string(f.Data) != "null" {
		t.Fatalf("pong frame %+v", f)
	}
	c.send(t, `{"action":"subscribe","channel":"backtest","task_id":"task_2"}`)
	time.Sleep(50 * time.Millisecond) // the subscription is in place before the tasks exist
	e.submit(t, "")
	e.submit(t, "")
	done := map[string]bool{}
	seen := map[string]int{}
	for len(done) < 2 {
		f := c.next(t)
		seen[f.Event]++
		if f.Event == "complete" {
			var d struct {
				TaskID string          `json:"task_id"`
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			}
			_ = json.Unmarshal(f.Data, &d)
			if d.Status != "completed" || !bytes.Contains(d.Result, []byte(`"final_value"`)) {
				t.Fatalf("complete %s", f.Data)
			}
			done[d.TaskID] = true
		}
		if f.Event == "log" {
			var d map[string]any
			_ = json.Unmarshal(f.Data, &d)
			for _, k := range []string{"task_id", "level", "message", "timestamp"} {
				if _, ok := d[k]; !ok {
					t.Fatalf("log frame lacks %s: %s", k, f.Data)
				}
			}
		}
	}
	if !done["task_1"] || !done["task_2"] || seen["progress"] < 2 || seen["log"] < 2 {
		t.Fatalf("events: %v, done %v", seen, done)
	}

	// The secondary surface serves the result once completed.
	code, body := e.do(t, "GET", "/backtest/task_1", "")
	text, _ := json.Marshal(body)
	if code != 200 || !strings.Contains(string(text), `"status":"completed","summary":{`) || !strings.Contains(string(text), `"final_value"`) {
		t.Fatalf("GET /backtest/task_1: %d %s", code, text)
	}

	// A late joiner gets connected and then the final state.
	late := e.dial(t, "/ws/task_1")
	if f := late.next(t); f.Event != "connected" {
		t.Fatalf("late first frame %+v", f)
	}
	if f := late.next(t); f.Event != "complete" || !bytes.Contains(f.Data, []byte(`"final_value"`)) {
		t.Fatalf("late second frame %+v", f)
	}

	// Disconnected clients leave the hub; empty sets are dropped.
	c.conn.Close()
	late.conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasksN, _, subs := e.hub.Counts()
		if tasksN == 0 && subs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub still has %d tasks, %d subscribers", tasksN, subs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTaskWebSocket200Clients(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	const n = 200
	clients := make([]*wsClient, n)
	for i := range clients {
		clients[i] = e.dial(t, "/ws/task_1")
		if f := clients[i].next(t); f.Event != "connected" {
			t.Fatalf("client %d: %+v", i, f)
		}
	}
	if _, _, subs := e.hub.Counts(); subs != n {
		t.Fatalf("hub has %d subscribers, want %d", subs, n)
	}
	e.submit(t, "")
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := map[string]int{}
			_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			for seen["complete"] == 0 {
				_, msg, err := c.conn.ReadMessage()
				if err != nil {
					errs <- fmt.Sprintf("client %d: %v after %v", i, err, seen)
					return
				}
				var f frame
				_ = json.Unmarshal(msg, &f)
				seen[f.Event]++
			}
			if seen["progress"] == 0 || seen["log"] == 0 {
				errs <- fmt.Sprintf("client %d saw %v", i, seen)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

func TestSessionLogSocket(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	c := e.dial(t, "/ws/logs")
	if f := c.next(t); f.Event != "connected" || string(f.Data) != `{"status":"ok"}` {
		t.Fatalf("first frame %+v", f)
	}
	c.send(t, `{"event":"subscribe_logs","data":{"session_id":""}}`) // ignored
	c.send(t, `{"event":"subscribe_logs","data":{"session_id":"mine"}}`)
	time.Sleep(50 * time.Millisecond)
	e.submit(t, `,"session_id":"theirs"`)
	e.submit(t, `,"session_id":"mine"`)
	e.waitStatus(t, "task_1", "completed")
	e.waitStatus(t, "task_2", "completed")
	got := 0
	for got < 3 {
		f := c.next(t)
		if f.Event != "log_message" {
			t.Fatalf("frame %+v", f)
		}
		var rec map[string]any
		_ = json.Unmarshal(f.Data, &rec)
		for _, k := range []string{"name", "levelname", "message", "timestamp", "pathname", "lineno"} {
			if _, ok := rec[k]; !ok {
				t.Fatalf("record lacks %s: %s", k, f.Data)
			}
		}
		if !strings.HasSuffix(rec["name"].(string), ".task_2") {
			t.Fatalf("record of another session: %s", f.Data)
		}
		got++
	}
	// Logs are stored too, with the level filter.
	code, body := e.do(t, "GET", "/api/backtests/task_2/logs?level=warning,INFO&limit=5", "")
	text, _ := json.Marshal(body)
	if code != 200 || !strings.Contains(string(text), `"level":"`) || strings.Contains(string(text), `"level":"DEBUG"`) {
		t.Fatalf("logs: %d %s", code, text)
	}
}
