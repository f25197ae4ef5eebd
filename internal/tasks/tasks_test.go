package tasks_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/tasks"
)

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	sma := b.strategy(t, smaCross)
	with := func(f func(*tasks.Request)) tasks.Request {
		r := req(sma)
		f(&r)
		return r
	}
	cases := []struct {
		name   string
		req    tasks.Request
		kind   apperr.Kind
		detail string
	}{
		{"missing strategy", with(func(r *tasks.Request) { r.StrategyID = nil }), apperr.KindUnprocessable, "Field 'strategy_id' is required"},
		{"missing start", with(func(r *tasks.Request) { r.StartDate = nil }), apperr.KindUnprocessable, "Field 'start_date' is required"},
		{"missing end", with(func(r *tasks.Request) { r.EndDate = nil }), apperr.KindUnprocessable, "Field 'end_date' is required"},
		{"unknown strategy", with(func(r *tasks.Request) { r.StrategyID = sp("str_999") }), apperr.KindNotFound, "Strategy not found: str_999"},
		{"bad start", with(func(r *tasks.Request) { r.StartDate = sp("2020-13-01") }), apperr.KindInvalid, "Invalid start_date '2020-13-01': expected a date as YYYY-MM-DD"},
		{"bad end", with(func(r *tasks.Request) { r.EndDate = sp("31/12/2020") }), apperr.KindInvalid, "Invalid end_date '31/12/2020': expected a date as YYYY-MM-DD"},
		{"end before start", with(func(r *tasks.Request) { r.StartDate, r.EndDate = sp("1975-01-02"), sp("1975-01-01") }), apperr.KindInvalid, "start_date 1975-01-02 is after end_date 1975-01-01"},
		{"zero cash", with(func(r *tasks.Request) { r.InitialCash = fp(0) }), apperr.KindInvalid, "initial_cash must be a positive number, got 0"},
		{"negative commission", with(func(r *tasks.Request) { r.Commission = fp(-0.1) }), apperr.KindInvalid, "commission must be a fraction from 0 up to 1, got -0.1"},
		{"unknown source", with(func(r *tasks.Request) { r.DataSource = sp("yahoo") }), apperr.KindInvalid, "Unsupported data source: yahoo"},
		{"source without symbols", with(func(r *tasks.Request) { r.DataSource = sp("empty") }), apperr.KindInvalid, "Data source empty has no symbols: give symbol"},
		{"unknown symbol", with(func(r *tasks.Request) { r.Symbol = sp("ZZZ") }), apperr.KindInvalid, "Unknown symbol ZZZ in data source testsrc"},
		{"no bars in range", with(func(r *tasks.Request) { r.StartDate, r.EndDate = sp("2030-01-01"), sp("2030-12-31") }), apperr.KindInvalid, "No data for AAA in data source testsrc between 2030-01-01 and 2030-12-31"},
		{"symbol without bars", with(func(r *tasks.Request) { r.Symbol = sp("BBB") }), apperr.KindInvalid, "No data for BBB in data source testsrc between 1970-01-01 and 1983-12-31"},
		{"unknown param", with(func(r *tasks.Request) { r.StrategyParams = map[string]any{"nope": 1} }), apperr.KindInvalid, "Unknown parameter: nope"},
		{"wrong param type", with(func(r *tasks.Request) { r.StrategyParams = map[string]any{"fast": "ten"} }), apperr.KindInvalid, "Parameter 'fast': expected int, got str"},
		{"empty symbols", with(func(r *tasks.Request) { r.Symbols = []string{} }), apperr.KindInvalid, "symbols is empty: give at least one symbol"},
		{"too many symbols", with(func(r *tasks.Request) { r.Symbols = make([]string, tasks.MaxFeeds+1) }), apperr.KindInvalid, "symbols has 21 entries: at most 20 feeds per backtest"},
		{"blank symbol", with(func(r *tasks.Request) { r.Symbols = []string{"AAA", " "} }), apperr.KindInvalid, "symbols contains an empty symbol"},
		{"symbol twice", with(func(r *tasks.Request) { r.Symbols = []string{"AAA", "AAA"} }), apperr.KindInvalid, "symbols names AAA twice: each feed once"},
		{"unknown symbols", with(func(r *tasks.Request) { r.Symbols = []string{"ZZZ", "AAA", "YYY"} }), apperr.KindInvalid, "Unknown symbol ZZZ, YYY in data source testsrc"},
		{"symbols without bars", with(func(r *tasks.Request) { r.Symbols = []string{"AAA", "BBB"} }), apperr.KindInvalid, "No data for BBB in data source testsrc between 1970-01-01 and 1983-12-31"},
		{"symbol and symbols", with(func(r *tasks.Request) { r.Symbol, r.Symbols = sp("BBB"), []string{"AAA"} }), apperr.KindInvalid, "Give symbol or symbols, not both (symbol BBB is not the first of symbols)"},
		{"unknown timeframe", with(func(r *tasks.Request) { r.Timeframe = sp("2d") }), apperr.KindInvalid, "Unsupported timeframe '2d' (use one of 1m, 5m, 15m, 1h, 4h, 1d, 1w, 1M)"},
		{"timeframe finer than stored", with(func(r *tasks.Request) { r.Timeframe = sp("1h") }), apperr.KindInvalid, "timeframe 1h is finer than the stored bars of AAA (finest stored: 1d)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.svc.Create(b.ctx, c.req)
			apiErr(t, err, c.kind, c.detail)
		})
	}
	if n := b.count(t, `SELECT count(*) FROM tasks`); n != 0 {
		t.Fatalf("%d tasks stored by refused requests", n)
	}
	if n := b.count(t, `SELECT count(*) FROM river_job`); n != 0 {
		t.Fatalf("%d jobs enqueued by refused requests", n)
	}
}

func TestCreateDefaultsAndEnqueues(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	sma := b.strategy(t, smaCross)
	r := req(sma)
	r.StrategyParams = map[string]any{"fast": "5", "slow": 20.0}
	task := b.create(t, r)
	if task.TaskID != "task_1" || task.Status != "pending" || task.Attempt != 1 || task.StrategyVersion != 1 {
		t.Fatalf("task = %+v", task)
	}
	if task.DataSource != "testsrc" || task.Symbol != "AAA" || task.SessionID != "task_1" {
		t.Fatalf("defaults: source %q symbol %q session %q", task.DataSource, task.Symbol, task.SessionID)
	}
	if task.InitialCash != 10000 || task.Commission != 0.001 || task.Progress != 0 || task.Error != nil || task.StartedAt != nil {
		t.Fatalf("defaults: %+v", task)
	}
	var params map[string]any
	// The values given, coerced, and the one not given at its default: what the run takes.
	if err := json.Unmarshal(task.StrategyParams, &params); err != nil || params["fast"] != 5.0 || params["slow"] != 20.0 || params["size"] != 10.0 || len(params) != 3 {
		t.Fatalf("effective params = %s, want fast 5, slow 20 and size at its default 10", task.StrategyParams)
	}
	if st, _ := b.jobState(t, b.jobID(t, task.TaskID)); st != "available" {
		t.Fatalf("job state %q, want available", st)
	}
	r2 := req(sma)
	r2.SessionID = sp("my-session")
	if got := b.create(t, r2); got.TaskID != "task_2" || got.SessionID != "my-session" {
		t.Fatalf("second task = %+v", got)
	}
	got, err := b.svc.Get(b.ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attempts) != 1 || got.Attempts[0].Status != "pending" {
		t.Fatalf("attempts = %+v", got.Attempts)
	}
}

func TestRunCompletesWithResultLogsAndEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := setup(t, opts{workers: 2, logDir: dir})
	sma := b.strategy(t, smaCross)
	taskSub, sessSub := events.NewSub(), events.NewSub()
	b.hub.SubscribeTask(taskSub, "task_1")
	b.hub.SubscribeSession(sessSub, events.Session{ID: "sess"}) // the task has no owner
	// Subscribers read as they go, as WebSocket writers do.
	collect := func(sub *events.Sub, until string) chan []string {
		out := make(chan []string, 1)
		go func() {
			var got []string
			timeout := time.After(30 * time.Second)
			for {
				select {
				case f := <-sub.C:
					got = append(got, string(f))
					if until == "" || strings.Contains(string(f), until) {
						out <- got
						return
					}
				case <-timeout:
					out <- got
					return
				}
			}
		}()
		return out
	}
	taskFrames, sessFrames := collect(taskSub, `"event":"complete"`), collect(sessSub, "")
	r := req(sma)
	r.SessionID = sp("sess")
	task := b.create(t, r)
	done := b.wait(t, task.TaskID, "completed", "failed")
	if done.Status != "completed" || done.Progress != 100 || done.CompletedAt == nil || done.StartedAt == nil || done.Error != nil {
		t.Fatalf("task = %+v", done)
	}
	if done.CurrentBar != 5000 || done.TotalBars != 5000 {
		t.Fatalf("bars %d/%d", done.CurrentBar, done.TotalBars)
	}
	if len(done.Attempts) != 1 || done.Attempts[0].Status != "completed" || done.Attempts[0].CompletedAt == nil {
		t.Fatalf("attempts = %+v", done.Attempts)
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE task_id = $1`, task.TaskID); n != 1 {
		t.Fatalf("%d result rows", n)
	}
	if n := b.count(t, `SELECT count(*) FROM result_equity WHERE task_id = $1`, task.TaskID); n != 5000 {
		t.Fatalf("%d equity rows", n)
	}

	// Logs: the strategy's lines and the engine's order events, filterable and paged.
	all, err := b.svc.Logs(b.ctx, task.TaskID, tasks.LogFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	var strat, eng, debug int
	for _, l := range all {
		switch {
		case l.Source == "strategy" && l.Message == "buy signal":
			strat++
		case l.Source == "engine" && strings.Contains(l.Message, "filled"):
			eng++
		}
		if l.Level == "DEBUG" {
			debug++
		}
	}
	if strat == 0 || eng == 0 || debug == 0 {
		t.Fatalf("logs: %d strategy buys, %d fills, %d debug of %d", strat, eng, debug, len(all))
	}
	if n := b.count(t, `SELECT count(*) FROM result_executions WHERE task_id = $1`, task.TaskID); eng != n {
		t.Fatalf("%d 'filled' log lines for %d executions", eng, n)
	}
	onlyDebug, _ := b.svc.Logs(b.ctx, task.TaskID, tasks.LogFilter{Levels: []string{"DEBUG"}, Limit: 100000})
	if len(onlyDebug) != debug {
		t.Fatalf("level filter: %d, want %d", len(onlyDebug), debug)
	}
	page, _ := b.svc.Logs(b.ctx, task.TaskID, tasks.LogFilter{Skip: 1, Limit: 2})
	if len(page) != 2 || page[0].ID != all[1].ID {
		t.Fatalf("paging: %+v", page)
	}
	none, err := b.svc.Logs(b.ctx, "task_404", tasks.LogFilter{Limit: 10})
	if err != nil || len(none) != 0 {
		t.Fatalf("unknown task logs: %v, %v", none, err)
	}

	// Events: progress, log and complete reached the task's subscriber, log_message the session's.
	kinds := map[string]int{}
	var complete struct {
		Data struct {
			TaskID string         `json:"task_id"`
			Status string         `json:"status"`
			Result map[string]any `json:"result"`
		} `json:"data"`
	}
	for _, f := range <-taskFrames {
		var m struct{ Event string }
		_ = json.Unmarshal([]byte(f), &m)
		kinds[m.Event]++
		if m.Event == "complete" {
			_ = json.Unmarshal([]byte(f), &complete)
		}
	}
	if kinds["progress"] == 0 || kinds["log"] == 0 || kinds["complete"] != 1 {
		t.Fatalf("events: %v", kinds)
	}
	if complete.Data.TaskID != task.TaskID || complete.Data.Status != "completed" || complete.Data.Result["final_value"] == nil {
		t.Fatalf("complete = %+v", complete.Data)
	}
	sess := <-sessFrames
	if len(sess) == 0 {
		t.Fatal("no log_message on the session channel")
	}
	var m struct {
		Event string
		Data  map[string]any
	}
	_ = json.Unmarshal([]byte(sess[0]), &m)
	for _, k := range []string{"name", "levelname", "message", "timestamp", "pathname", "lineno"} {
		if _, ok := m.Data[k]; !ok || m.Event != "log_message" {
			t.Fatalf("session frame %s lacks %s", sess[0], k)
		}
	}

	// The session's log file.
	text, err := os.ReadFile(filepath.Join(dir, "sess.log"))
	if err != nil || !strings.Contains(string(text), "buy signal") {
		t.Fatalf("log file: %v %q", err, text)
	}

	// A late joiner's final state is the complete event with the stored summary.
	isComplete, _, frame, err := b.svc.FinalState(b.ctx, task.TaskID)
	if err != nil || !isComplete || !strings.Contains(string(frame), `"final_value"`) {
		t.Fatalf("final state: %v %s %v", isComplete, frame, err)
	}
}

func TestStrategyErrorFailsOnceWithoutRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	task := b.create(t, req(b.strategy(t, throws)))
	done := b.wait(t, task.TaskID, "failed", "completed")
	if done.Status != "failed" || done.Error == nil || !strings.Contains(*done.Error, "boom at bar 6") || done.CompletedAt == nil {
		t.Fatalf("task = %+v", done)
	}
	if a := b.waitJob(t, b.jobID(t, task.TaskID), "cancelled"); a != 1 {
		t.Fatalf("job ran %d times, want 1", a)
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE task_id = $1`, task.TaskID); n != 0 {
		t.Fatalf("failed task has a result")
	}
	if done.Attempts[0].Status != "failed" || done.Attempts[0].Error == nil {
		t.Fatalf("attempts = %+v", done.Attempts)
	}
	// The log ends with the failure, as an ERROR line.
	logs, err := b.svc.Logs(b.ctx, task.TaskID, tasks.LogFilter{Limit: 100000})
	if err != nil || len(logs) == 0 {
		t.Fatalf("logs: %v, %v", logs, err)
	}
	if last := logs[len(logs)-1]; last.Level != "ERROR" || last.Message != *done.Error {
		t.Errorf("last log line %+v; want ERROR %q", last, *done.Error)
	}
}

func TestTimeLimitFailsTask(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1, runTimeout: 300 * time.Millisecond})
	task := b.create(t, req(b.strategy(t, forever)))
	done := b.wait(t, task.TaskID, "failed", "completed")
	if done.Error == nil || !strings.Contains(*done.Error, "time limit") {
		t.Fatalf("task = %+v", done)
	}
}

func TestCancelPendingRemovesJob(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{}) // no workers: the task stays pending
	task := b.create(t, req(b.strategy(t, smaCross)))
	job := b.jobID(t, task.TaskID)
	got, changed, err := b.svc.Cancel(b.ctx, auth.Local(), task.TaskID)
	if err != nil || !changed || got.Status != "cancelled" || got.CompletedAt == nil {
		t.Fatalf("cancel: %+v %v %v", got, changed, err)
	}
	if st, _ := b.jobState(t, job); st != "" {
		t.Fatalf("job still there in state %q", st)
	}
	// Cancelling again changes nothing and still succeeds.
	again, changed, err := b.svc.Cancel(b.ctx, auth.Local(), task.TaskID)
	if err != nil || changed || again.Status != "cancelled" {
		t.Fatalf("second cancel: %+v %v %v", again, changed, err)
	}
	_, _, err = b.svc.Cancel(b.ctx, auth.Local(), "task_999")
	apiErr(t, err, apperr.KindNotFound, "Task not found: task_999")
}

func TestCancelRunningStopsTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	r := req(b.strategy(t, slow))
	r.StrategyParams = map[string]any{"spin": 1000000} // minutes of work
	task := b.create(t, r)
	b.wait(t, task.TaskID, "running")
	if _, changed, err := b.svc.Cancel(b.ctx, auth.Local(), task.TaskID); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	b.waitJob(t, b.jobID(t, task.TaskID), "cancelled")
	got, _ := b.svc.Get(b.ctx, task.TaskID)
	if got.Status != "cancelled" || got.Attempts[0].Status != "cancelled" {
		t.Fatalf("task = %+v", got)
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE task_id = $1`, task.TaskID); n != 0 {
		t.Fatalf("cancelled task has a result")
	}
}

func TestFinishedTasksAreNotCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	ok := b.create(t, req(b.strategy(t, smaCross)))
	bad := b.create(t, req(b.strategy(t, throws)))
	b.wait(t, ok.TaskID, "completed")
	b.wait(t, bad.TaskID, "failed")
	for id, want := range map[string]tasks.Status{ok.TaskID: "completed", bad.TaskID: "failed"} {
		got, changed, err := b.svc.Cancel(b.ctx, auth.Local(), id)
		if err != nil || changed || got.Status != want {
			t.Fatalf("cancel %s: %+v %v %v", id, got, changed, err)
		}
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	sma := b.strategy(t, smaCross)

	// A failed task runs again as attempt 2, keeping the history.
	bad := b.create(t, req(b.strategy(t, throws)))
	b.wait(t, bad.TaskID, "failed")
	re, err := b.svc.Retry(b.ctx, auth.Local(), bad.TaskID)
	if err != nil || re.Status != "pending" || re.Attempt != 2 || re.Error != nil || re.CompletedAt != nil {
		t.Fatalf("retry: %+v %v", re, err)
	}
	got := b.wait(t, bad.TaskID, "failed")
	if got.Attempt != 2 || len(got.Attempts) != 2 || got.Attempts[0].Status != "failed" || got.Attempts[1].Status != "failed" {
		t.Fatalf("after retry: %+v", got)
	}

	// A cancelled task completes when retried.
	r := req(sma)
	r.StartDate = sp("2099-01-01") // refused: no data
	if _, err := b.svc.Create(b.ctx, r); err == nil {
		t.Fatal("want an error for a range without bars")
	}
	c := b.create(t, req(sma))
	b.svc.Cancel(b.ctx, auth.Local(), c.TaskID) //nolint:errcheck // whatever state it reached, the next lines check
	cur, _ := b.svc.Get(b.ctx, c.TaskID)
	if cur.Status == "cancelled" {
		if _, err := b.svc.Retry(b.ctx, auth.Local(), c.TaskID); err != nil {
			t.Fatal(err)
		}
		done := b.wait(t, c.TaskID, "completed")
		if done.Attempt != 2 || done.Attempts[0].Status != "cancelled" || done.Attempts[1].Status != "completed" {
			t.Fatalf("retried cancelled task: %+v", done)
		}
	}

	// Completed and pending tasks are refused with 409; unknown ids with 404.
	_, err = b.svc.Retry(b.ctx, auth.Local(), c.TaskID)
	apiErr(t, err, apperr.KindConflict, "Task "+c.TaskID+" is completed: only failed or cancelled tasks can be retried")
	_, err = b.svc.Retry(b.ctx, auth.Local(), "task_999")
	apiErr(t, err, apperr.KindNotFound, "Task not found: task_999")
}

func TestRetryPendingConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	task := b.create(t, req(b.strategy(t, smaCross)))
	_, err := b.svc.Retry(b.ctx, auth.Local(), task.TaskID)
	apiErr(t, err, apperr.KindConflict, "Task "+task.TaskID+" is pending: only failed or cancelled tasks can be retried")
}

func TestListNewestFirstWithFilters(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	sma, other := b.strategy(t, smaCross), b.strategy(t, slow)
	for i := 0; i < 3; i++ {
		b.create(t, req(sma))
	}
	b.create(t, req(other))
	if _, _, err := b.svc.Cancel(b.ctx, auth.Local(), "task_2"); err != nil {
		t.Fatal(err)
	}
	ids := func(page tasks.Page, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range page.Tasks {
			out = append(out, x.TaskID)
		}
		return fmt.Sprintf("%s of %d", strings.Join(out, ","), page.Total)
	}
	cases := []struct {
		f    tasks.ListFilter
		want string
	}{
		{tasks.ListFilter{Limit: 100}, "task_4,task_3,task_2,task_1 of 4"},
		{tasks.ListFilter{Limit: 2}, "task_4,task_3 of 4"},
		{tasks.ListFilter{Skip: 3, Limit: 10}, "task_1 of 4"},
		{tasks.ListFilter{Skip: 9, Limit: 10}, " of 4"},
		{tasks.ListFilter{Ascending: true, Limit: 10}, "task_1,task_2,task_3,task_4 of 4"},
		{tasks.ListFilter{Sort: "total_return", Limit: 10}, "task_4,task_3,task_2,task_1 of 4"}, // no figures: newest first
		{tasks.ListFilter{Status: "cancelled", Limit: 10}, "task_2 of 1"},
		{tasks.ListFilter{StrategyID: sma, Limit: 10}, "task_3,task_2,task_1 of 3"},
		{tasks.ListFilter{StrategyID: sma, Status: "pending", Limit: 10}, "task_3,task_1 of 2"},
		{tasks.ListFilter{Symbol: "AAA", Limit: 10}, "task_4,task_3,task_2,task_1 of 4"},
		{tasks.ListFilter{Symbol: "NONE", Limit: 10}, " of 0"},
	}
	for _, c := range cases {
		c.f.Count = true
		if got := ids(b.svc.List(b.ctx, c.f)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	// Cursor paging reaches the end in every order, each task once, in the offset order:
	// two tasks with equal figures (as stored results set them; sharpe_ratio undefined),
	// two without.
	b.exec(t, `UPDATE tasks SET fig_total_return = 1, fig_max_drawdown_pct = 2, fig_total_trades = 3, fig_final_value = 1
		WHERE id IN ('task_1', 'task_3')`)
	for _, sort := range tasks.ListSorts {
		for _, asc := range []bool{false, true} {
			f := tasks.ListFilter{Sort: sort, Ascending: asc, Limit: 100}
			want := ids(b.svc.List(b.ctx, f))
			f.Limit = 1
			var got []string
			for range 10 {
				page, err := b.svc.List(b.ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range page.Tasks {
					got = append(got, x.TaskID)
				}
				if page.Next == "" {
					break
				}
				f.Cursor = page.Next
			}
			if strings.Join(got, ",")+" of -1" != want {
				t.Errorf("sort %s asc %v by cursor: %v, want %s", sort, asc, got, want)
			}
		}
	}
	// Offset pages (the ids found first, the rows read after) are the same list, page by
	// page, across the runs with the figure and those without.
	for _, sort := range tasks.ListSorts {
		for _, asc := range []bool{false, true} {
			for _, status := range []string{"", "pending"} {
				f := tasks.ListFilter{Sort: sort, Ascending: asc, Status: status, Limit: 100}
				want := ids(b.svc.List(b.ctx, f))
				var got []string
				for skip := 0; skip < 6; skip += 2 {
					f.Skip, f.Limit = skip, 2
					page, err := b.svc.List(b.ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					for _, x := range page.Tasks {
						got = append(got, x.TaskID)
					}
				}
				if strings.Join(got, ",")+" of -1" != want {
					t.Errorf("sort %s asc %v status %q by offset: %v, want %s", sort, asc, status, got, want)
				}
			}
		}
	}
	if _, err := b.svc.List(b.ctx, tasks.ListFilter{Cursor: "bogus!", Limit: 1}); err == nil {
		t.Error("a bad cursor was accepted")
	}
	first, _ := b.svc.List(b.ctx, tasks.ListFilter{Limit: 1})
	if _, err := b.svc.List(b.ctx, tasks.ListFilter{Cursor: first.Next, Sort: "sharpe_ratio", Limit: 1}); err == nil {
		t.Error("a cursor of another sort was accepted")
	}
	if got := ids(b.svc.List(b.ctx, tasks.ListFilter{Limit: 1})); got != "task_4 of -1" {
		t.Errorf("uncounted list: %s", got)
	}
	// Delete: only a task that has ended, with everything it had.
	apiErr(t, b.svc.Delete(b.ctx, auth.Local(), "task_1"), apperr.KindConflict, "Task task_1 is pending: cancel it before deleting it")
	apiErr(t, b.svc.Delete(b.ctx, auth.Local(), "task_99"), apperr.KindNotFound, "Task not found: task_99")
	if err := b.svc.Delete(b.ctx, auth.Local(), "task_2"); err != nil {
		t.Fatal(err)
	}
	_, err := b.svc.Get(b.ctx, "task_2")
	apiErr(t, err, apperr.KindNotFound, "Task not found: task_2")
	if got := ids(b.svc.List(b.ctx, tasks.ListFilter{Limit: 10, Count: true})); got != "task_4,task_3,task_1 of 3" {
		t.Errorf("after deleting task_2: %s", got)
	}
	// The count stops at CountCap: a list polled every few seconds never counts every row.
	b.exec(t, `INSERT INTO tasks SELECT (jsonb_populate_record(NULL::tasks, to_jsonb(t) || jsonb_build_object('id', 'copy_' || g))).*
		FROM tasks t, generate_series(1, $1::int) g WHERE t.id = 'task_4'`, tasks.CountCap)
	if page, err := b.svc.List(b.ctx, tasks.ListFilter{Limit: 1, Count: true}); err != nil || page.Total != tasks.CountCap || !page.Capped {
		t.Errorf("%d tasks counted as %d (capped %v, %v), want the cap %d", tasks.CountCap+4, page.Total, page.Capped, err, tasks.CountCap)
	}
	p, err := b.svc.Progress(b.ctx, "task_1")
	if err != nil || p.Status != "pending" || p.TaskID != "task_1" {
		t.Fatalf("progress: %+v %v", p, err)
	}
	_, err = b.svc.Progress(b.ctx, "nope")
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindNotFound {
		t.Fatalf("progress of unknown: %v", err)
	}
	_, err = b.svc.Get(b.ctx, "nope")
	if !errors.As(err, new(*apperr.Error)) {
		t.Fatalf("get unknown: %v", err)
	}
}

func TestSweepFailsTasksWhoseJobEnded(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	sma := b.strategy(t, smaCross)
	orphan := b.create(t, req(sma))
	waiting := b.create(t, req(sma))
	if _, err := b.client.JobDelete(b.ctx, b.jobID(t, orphan.TaskID)); err != nil {
		t.Fatal(err)
	}
	n, err := b.svc.Sweep(b.ctx, 0)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	got, _ := b.svc.Get(b.ctx, orphan.TaskID)
	if got.Status != "failed" || got.Error == nil || *got.Error != "backtest did not finish: its job was removed" {
		t.Fatalf("orphan = %+v", got)
	}
	if got, _ := b.svc.Get(b.ctx, waiting.TaskID); got.Status != "pending" {
		t.Fatalf("a task with a live job was touched: %+v", got)
	}
}

func TestDataMissingAtRunTimeFailsTask(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	task := b.create(t, req(b.strategy(t, smaCross)))
	b.exec(t, `DELETE FROM bars WHERE symbol = 'AAA'`) // gone between submission and run
	b.startWorkers(t, 1)
	done := b.wait(t, task.TaskID, "failed", "completed")
	want := "Data retrieval failed: no data for AAA in data source testsrc between 1970-01-01 and 1983-12-31"
	if done.Error == nil || *done.Error != want || done.StartedAt == nil || done.CompletedAt == nil {
		t.Fatalf("task = %+v, want error %q", done, want)
	}
	if a := b.waitJob(t, b.jobID(t, task.TaskID), "cancelled"); a != 1 {
		t.Fatalf("job ran %d times, want once", a)
	}
}

func TestCPUSlotsTakeTurns(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 2, cpuSlots: 1})
	long := req(b.strategy(t, slow))
	long.StrategyParams = map[string]any{"spin": 1000000} // minutes of work
	l := b.create(t, long)
	b.wait(t, l.TaskID, "running")
	// With the one CPU slot held by the long run, a short run still completes: it does not
	// wait behind it.
	short := b.create(t, req(b.strategy(t, smaCross)))
	b.wait(t, short.TaskID, "completed")
	if got, _ := b.svc.Get(b.ctx, l.TaskID); got.Status != "running" {
		t.Fatalf("long task is %s", got.Status)
	}
	if _, _, err := b.svc.Cancel(b.ctx, auth.Local(), l.TaskID); err != nil {
		t.Fatal(err)
	}
	b.waitJob(t, b.jobID(t, l.TaskID), "cancelled")
}

func TestInfrastructureErrorIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	// The first attempt to store a result fails, as a lost connection would.
	b.exec(t, `CREATE SEQUENCE outage`) // sequences are not rolled back with the failed transaction
	b.exec(t, `CREATE FUNCTION outage_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('outage') = 1 THEN
				RAISE EXCEPTION 'simulated outage';
			END IF;
			RETURN NEW;
		END $$`)
	b.exec(t, `CREATE TRIGGER outage BEFORE INSERT ON results FOR EACH ROW EXECUTE FUNCTION outage_once()`)
	task := b.create(t, req(b.strategy(t, smaCross)))
	done := b.wait(t, task.TaskID, "completed", "failed")
	if done.Status != "completed" || len(done.Attempts) != 1 || done.Attempts[0].Status != "completed" {
		t.Fatalf("task = %+v", done)
	}
	if a := b.waitJob(t, b.jobID(t, task.TaskID), "completed"); a != 2 {
		t.Fatalf("job ran %d times, want 2", a)
	}
	if n := b.count(t, `SELECT last_value FROM outage`); n != 2 {
		t.Fatalf("results were inserted %d times, want 2 (one refused)", n)
	}
	// The failed run's log lines were replaced, not duplicated.
	if n := b.count(t, `SELECT count(*) - count(DISTINCT (bar_time, message)) FROM task_logs WHERE task_id = $1`, task.TaskID); n != 0 {
		t.Fatalf("%d duplicated log lines", n)
	}
}

func TestCreateRunsTheAskedStrategyVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	id := b.strategy(t, smaCross)
	// A second version with one parameter fewer; the strategy now points at it.
	b.exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		SELECT strategy_id, 2, name, code, class_name, '[]', origin, 'h2' FROM strategy_versions WHERE strategy_id = $1`, id)
	b.exec(t, `UPDATE strategies SET current_version = 2 WHERE id = $1`, id)
	ip := func(n int) *int { return &n }

	if got := b.create(t, req(id)); got.StrategyVersion != 2 {
		t.Fatalf("default version %d, want the current one, 2", got.StrategyVersion)
	}
	old := req(id)
	old.StrategyVersion = ip(1)
	old.StrategyParams = map[string]any{"fast": 5}
	if got := b.create(t, old); got.StrategyVersion != 1 {
		t.Fatalf("version %d, want 1", got.StrategyVersion)
	}
	tests := []struct {
		name    string
		id      string
		version int
		kind    apperr.Kind
		detail  string
	}{
		{"missing version", id, 7, apperr.KindNotFound, "Strategy " + id + " has no version 7"},
		{"missing strategy", "str_99", 1, apperr.KindNotFound, "Strategy not found: str_99"},
		{"zero", id, 0, apperr.KindInvalid, "strategy_version must be a version number from 1, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req(tt.id)
			r.StrategyVersion = ip(tt.version)
			_, err := b.svc.Create(b.ctx, r)
			apiErr(t, err, tt.kind, tt.detail)
		})
	}
	// The current version declares no parameters, so "fast" is only valid on version 1.
	cur := req(id)
	cur.StrategyParams = map[string]any{"fast": 5}
	_, err := b.svc.Create(b.ctx, cur)
	apiErr(t, err, apperr.KindInvalid, "Unknown parameter: fast")
}
