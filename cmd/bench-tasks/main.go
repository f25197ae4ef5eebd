// Command bench-tasks measures the task service from the outside, against a running
// `backtestd serve` (and, for the event benchmark, its database):
//
//	latency  submit → completed of a 5,000-bar daily backtest on an idle service
//	events   event latency from a worker's NOTIFY to a WebSocket client of the API (p50/p99),
//	         and of strategy log lines end to end (this.log → browser)
//	flood    1,000 tasks submitted at once; all must complete, none lost; task reads
//	         (GET one, GET list) are timed while they run
//	conns    many WebSocket connections on one task all receive its events (not in the
//	         default set; each connection is a file descriptor on both ends: raise ulimit -n)
//	soak     -duration (30m) of mixed load: submissions, cancels, retries, WebSocket watchers,
//	         imports and reads; prints the service's memory, goroutines, connections and open
//	         files at the start and the end (not in the default set)
//	study    a 1,000-combination study (SMA crossover, fast 2..51 x slow 60..250 by 10) on
//	         2,515 daily bars, POST /api/studies → every combination stored; with
//	         -backtrader, backtrader's optstrategy on the same grid in the same run (not in
//	         the default set)
//	hostile  /health latency while 6 hostile runs execute (three never-yielding regular
//	         expressions, three allocation loops), each failing at its limit (not in the
//	         default set: start the service with a short RUN_TIMEOUT, e.g. 10s)
//	signin   bursts of -signins (200) sign-ins at once: wrong passwords for one name from one
//	         address, unknown names from 200 loopback addresses, 60 KB names; the status
//	         codes and the API process's (-pid) peak resident memory (not in the default
//	         set: a service with accounts on, AUTH=on, on 127.0.0.1; it needs no user, and
//	         uploads nothing)
//	year     -results (100,000) completed results in the database: -seeds (300) real runs
//	         through the API cloned in SQL, then the runs list's pages (every sort, filter,
//	         depth; paging to the end by cursor), the BI queries of docs/sql.md and the bytes
//	         per result (not in the default set; -fill=false measures a database filled before)
//	cost     the service's own cost per run (issue 35): the same 1,000 runs of 5,000 bars
//	         (fast 2..51 × slow 60..250 by 10) through the API all at once and in
//	         `backtestd sweep` (-backtestd, default built here), in one run: both times, the
//	         ratio, reads p99 during the flood, and every run's final value compared (not in
//	         the default set)
//	heavyreads  -heavy (8) concurrent full-resolution candlestick charts (max_points=0) of
//	         a stored 300,000-bar result: the API's peak resident memory (-pid: its process
//	         id) and /health latency during them (not in the default set)
//
// Usage:
//
//	WORKERS=100 DATABASE_URL=postgres://... backtestd serve &
//	go run ./cmd/bench-tasks -api http://localhost:8080 -db postgres://... [-only latency,events,flood]
//
// It loads a 5,000-bar symbol BENCH5K into the default data source and uploads two
// strategies through the API; nothing else in the service is touched.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
)

const smaCode = `
/** Moving-average crossover (bench). fast: fast period. slow: slow period. */
class BenchSma extends Strategy {
  static params = { fast: 10, slow: 30 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}`

// tickerCode logs the wall clock every `every` bars, spinning in between so the lines are
// spread over about a second.
const tickerCode = `
/** Logs Date.now() (bench). */
class BenchTicker extends Strategy {
  static params = { every: 10, spin: 20000 };
  next() {
    let x = 0; for (let i = 0; i < this.p.spin; i++) x += i;
    if (this.data.close.length % this.p.every === 0) this.log(String(Date.now()), 'INFO');
  }
}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-tasks:", err)
		os.Exit(1)
	}
}

type bench struct {
	api    string
	db     string
	source string
	sma    string
	ticker string
	// client keeps a connection per concurrent caller alive, as an API client pool does
	// (http.DefaultClient keeps two, so 50 submitters would open a connection per request).
	client *http.Client
}

func run() error {
	b := bench{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}}
	var only string
	var runs, nEvents, flood, submitters, conns, heavy, pid int
	var gap time.Duration
	var distinct bool
	var soak time.Duration
	var studyCSV, backtrader string
	var signins, yearResults, yearSeeds, yearSamples int
	var yearFill bool
	var backtestd string
	flag.StringVar(&b.api, "api", "http://localhost:8080", "base URL of a running backtestd serve")
	flag.StringVar(&b.db, "db", os.Getenv("DATABASE_URL"), "its database (for the event benchmark)")
	flag.StringVar(&only, "only", "latency,events,flood", "which benchmarks to run")
	flag.IntVar(&runs, "runs", 30, "latency samples")
	flag.DurationVar(&gap, "gap", 300*time.Millisecond, "pause between latency samples (0: back to back)")
	flag.BoolVar(&distinct, "distinct", false, "latency: every sample runs a strategy of its own (no runner process is reused)")
	flag.IntVar(&nEvents, "events", 2000, "events to publish")
	flag.IntVar(&flood, "flood", 1000, "tasks in the flood")
	flag.IntVar(&submitters, "submitters", 50, "concurrent submitters in the flood")
	flag.IntVar(&conns, "conns", 5000, "WebSocket connections for -only conns")
	flag.IntVar(&heavy, "heavy", 8, "concurrent chart reads for -only heavyreads")
	flag.DurationVar(&soak, "duration", 30*time.Minute, "how long -only soak drives load")
	flag.StringVar(&studyCSV, "study-data", "../shared/reference/data/orcl.csv", "CSV bars of -only study")
	flag.StringVar(&backtrader, "backtrader", "", "-only study: backtrader's source directory, to time its optstrategy on the same grid")
	flag.IntVar(&signins, "signins", 200, "sign-ins at once for -only signin")
	flag.IntVar(&pid, "pid", 0, "-only signin, heavyreads, cost: the API process, whose memory is read from /proc")
	flag.IntVar(&yearResults, "results", 100000, "-only year: completed results to fill the database with")
	flag.IntVar(&yearSeeds, "seeds", 300, "-only year: real runs the clones copy")
	flag.IntVar(&yearSamples, "samples", 40, "-only year: requests timed per runs-list page")
	flag.BoolVar(&yearFill, "fill", true, "-only year: run and clone first (false: measure the database as it is)")
	flag.StringVar(&backtestd, "backtestd", "", "-only cost: the backtestd binary whose sweep is timed (default: built from ./cmd/backtestd)")
	flag.Parse()
	b.api = strings.TrimRight(b.api, "/")
	want := strings.Split(only, ",")
	if slices.ContainsFunc(want, func(m string) bool { return m != "signin" }) {
		if err := b.setup(); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	if slices.Contains(want, "signin") {
		if err := b.signin(signins, pid, "bench-admin"); err != nil {
			return fmt.Errorf("signin: %w", err)
		}
	}
	if slices.Contains(want, "latency") {
		if err := b.latency(runs, gap, distinct); err != nil {
			return fmt.Errorf("latency: %w", err)
		}
	}
	if slices.Contains(want, "events") {
		if err := b.events(nEvents); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	if slices.Contains(want, "conns") {
		if err := b.conns(conns); err != nil {
			return fmt.Errorf("conns: %w", err)
		}
	}
	if slices.Contains(want, "hostile") {
		if err := b.hostile(6, 5*time.Second); err != nil {
			return fmt.Errorf("hostile: %w", err)
		}
	}
	if slices.Contains(want, "heavyreads") {
		if err := b.heavyReads(heavy, pid); err != nil {
			return fmt.Errorf("heavyreads: %w", err)
		}
	}
	if slices.Contains(want, "study") {
		if err := b.study(studyCSV, backtrader, false); err != nil {
			return fmt.Errorf("study: %w", err)
		}
	}
	if slices.Contains(want, "walkforward") {
		if err := b.study(studyCSV, "", true); err != nil {
			return fmt.Errorf("walk-forward: %w", err)
		}
	}
	if slices.Contains(want, "soak") {
		if err := b.soak(soak); err != nil {
			return fmt.Errorf("soak: %w", err)
		}
	}
	if slices.Contains(want, "year") {
		if err := b.year(yearResults, yearSeeds, yearSamples, yearFill); err != nil {
			return fmt.Errorf("year: %w", err)
		}
	}
	if slices.Contains(want, "flood") {
		if err := b.flood(flood, submitters); err != nil {
			return fmt.Errorf("flood: %w", err)
		}
	}
	if slices.Contains(want, "cost") {
		if err := b.cost(backtestd, submitters, pid); err != nil {
			return fmt.Errorf("cost: %w", err)
		}
	}
	return nil
}

func (b *bench) call(method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.api+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// hostile starts n hostile runs and samples GET /health every 10 ms for d while they run.
func (b *bench) hostile(n int, d time.Duration) error {
	codes := []string{
		`class Regex extends Strategy { next() { /^(\w+)(\w+)+\1y/.test("a".repeat(40)); } }`,
		`class Bomb extends Strategy { next() { this.a = []; for (;;) this.a.push(new Float64Array(1 << 20).fill(1)); } }`,
	}
	var ids []string
	for i := range n {
		var out struct{ ID string }
		if err := b.call("POST", "/api/strategies", map[string]string{"name": fmt.Sprintf("hostile-%d", i), "code": codes[i%len(codes)]}, &out); err != nil {
			return err
		}
		id, err := b.submit(out.ID, nil)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	time.Sleep(500 * time.Millisecond) // the runs are under way
	var lat []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		t0 := time.Now()
		if err := b.call("GET", "/health", nil, nil); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
	}
	fmt.Printf("hostile: GET /health while %d hostile runs execute: %s\n", n, stats(lat))
	for _, id := range ids {
		for {
			var t struct{ Status, Error string }
			if err := b.call("GET", "/api/backtests/"+id, nil, &t); err != nil {
				return err
			}
			if t.Status == "failed" {
				fmt.Printf("hostile: %s failed: %s\n", id, t.Error)
				break
			}
			if t.Status == "completed" || t.Status == "cancelled" {
				return fmt.Errorf("hostile run %s ended %s", id, t.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func (b *bench) setup() error {
	var sources struct {
		Data []struct{ Name string } `json:"data"`
	}
	if err := b.call("GET", "/api/data/sources", nil, &sources); err != nil {
		return err
	}
	if len(sources.Data) == 0 {
		return errors.New("the service has no data source")
	}
	b.source = sources.Data[0].Name
	if err := b.importBars("BENCH5K", "bench", engine.RandomWalk(5000, 42)); err != nil {
		return err
	}
	for _, s := range []struct {
		name, code string
		id         *string
	}{{"bench-sma", smaCode, &b.sma}, {"bench-ticker", tickerCode, &b.ticker}} {
		var out struct{ ID string }
		if err := b.call("POST", "/api/strategies", map[string]string{"name": s.name, "code": s.code}, &out); err != nil {
			return err
		}
		*s.id = out.ID
	}
	fmt.Printf("setup: source %s, symbol BENCH5K (5000 daily bars), strategies %s %s\n", b.source, b.sma, b.ticker)
	return nil
}

// importBars posts bars as symbol of the bench's data source (POST .../bars).
func (b *bench) importBars(symbol, name string, bars []engine.Bar) error {
	rows := make([]map[string]any, len(bars))
	for i, x := range bars {
		rows[i] = map[string]any{"datetime": x.Time.Format(time.DateOnly), "open": x.Open, "high": x.High, "low": x.Low, "close": x.Close, "volume": x.Volume}
	}
	return b.call("POST", "/api/data/"+b.source+"/"+symbol+"/bars?timeframe=1d&name="+name, rows, nil)
}

func (b *bench) submit(strategy string, params map[string]any) (string, error) {
	var t struct {
		TaskID string `json:"task_id"`
	}
	err := b.call("POST", "/api/backtests", map[string]any{
		"strategy_id": strategy, "data_source": b.source, "symbol": "BENCH5K",
		"start_date": "1970-01-01", "end_date": "1990-01-01", "strategy_params": params,
	}, &t)
	return t.TaskID, err
}

func (b *bench) dial(path string) (*websocket.Conn, error) {
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.api, "http")+path, nil)
	return c, err
}

type frame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

func readFrame(c *websocket.Conn, within time.Duration) (frame, time.Time, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, msg, err := c.ReadMessage()
	now := time.Now()
	var f frame
	if err == nil {
		err = json.Unmarshal(msg, &f)
	}
	return f, now, err
}

// latency: submit → complete event on a WebSocket, sequentially on an idle service.
func (b *bench) latency(runs int, gap time.Duration, distinct bool) error {
	strategies := make([]string, runs+3)
	for i := range strategies {
		strategies[i] = b.sma
		if distinct {
			// The same strategy, different code: a runner process serves further runs of
			// the same code only.
			var out struct{ ID string }
			code := fmt.Sprintf("%s\n// variant %d", smaCode, i)
			if err := b.call("POST", "/api/strategies", map[string]string{"name": fmt.Sprintf("bench-sma-%d", i), "code": code}, &out); err != nil {
				return err
			}
			strategies[i] = out.ID
		}
	}
	var client, server []time.Duration
	for i := 0; i < runs+3; i++ {
		time.Sleep(gap) // an idle service between samples: runners started after the last one are ready
		t0 := time.Now()
		id, err := b.submit(strategies[i], nil)
		if err != nil {
			return err
		}
		c, err := b.dial("/ws/" + id)
		if err != nil {
			return err
		}
		var done time.Time
		for done.IsZero() {
			f, at, err := readFrame(c, 30*time.Second)
			if err != nil {
				c.Close()
				return err
			}
			if f.Event == "complete" {
				if !bytes.Contains(f.Data, []byte(`"completed"`)) {
					c.Close()
					return fmt.Errorf("task %s: %s", id, f.Data)
				}
				done = at
			}
		}
		c.Close()
		var t struct {
			CreatedAt   time.Time  `json:"created_at"`
			CompletedAt *time.Time `json:"completed_at"`
		}
		if err := b.call("GET", "/api/backtests/"+id, nil, &t); err != nil {
			return err
		}
		if i < 3 {
			continue // warm-up
		}
		client = append(client, done.Sub(t0))
		if t.CompletedAt != nil {
			server = append(server, t.CompletedAt.Sub(t.CreatedAt))
		}
	}
	what := "the same strategy each time"
	if distinct {
		what = "a strategy of its own each time"
	}
	fmt.Printf("latency: 5,000-bar daily SMA crossover, submit → completed, %d runs %v apart, %s\n", runs, gap, what)
	fmt.Printf("  client (POST → complete event): %s\n", stats(client))
	fmt.Printf("  server (created_at → completed_at): %s\n", stats(server))
	return nil
}

// events: the bench publishes progress events as a worker does (NOTIFY) and a WebSocket
// client of the API measures when each arrives; then strategy log lines end to end.
func (b *bench) events(n int) error {
	if b.db != "" {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, b.db)
		if err != nil {
			return err
		}
		defer pool.Close()
		pub := events.NewPublisher(pool)
		task := fmt.Sprintf("bench_%d", rand.Int64())
		c, err := b.dial("/ws/" + task)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, _, err := readFrame(c, 5*time.Second); err != nil { // connected
			return err
		}
		sent := make([]int64, n)
		lat := make([]time.Duration, 0, n)
		errc := make(chan error, 1)
		go func() {
			for i := 0; i < n; i++ {
				atomic.StoreInt64(&sent[i], time.Now().UnixNano())
				if err := pub.Publish(ctx, events.Message{Event: events.KindProgress, Task: task,
					Progr: &events.Progress{TaskID: task, CurrentBar: i, TotalBars: n, Progress: float64(i) * 100 / float64(n)}}); err != nil {
					errc <- err
					return
				}
				time.Sleep(time.Millisecond)
			}
			errc <- nil
		}()
		for len(lat) < n {
			f, at, err := readFrame(c, 10*time.Second)
			if err != nil {
				return fmt.Errorf("after %d events: %w", len(lat), err)
			}
			var p events.Progress
			_ = json.Unmarshal(f.Data, &p)
			lat = append(lat, time.Duration(at.UnixNano()-atomic.LoadInt64(&sent[p.CurrentBar])))
		}
		if err := <-errc; err != nil {
			return err
		}
		fmt.Printf("events: %d progress events, worker NOTIFY → WebSocket client: %s\n", n, stats(lat))
	} else {
		fmt.Println("events: -db not given; skipping the NOTIFY → WebSocket measurement")
	}

	// Strategy log lines, this.log (Date.now() in the worker) → WebSocket client.
	// The ids are sequential: subscribe to the next one before submitting.
	var list []struct {
		TaskID string `json:"task_id"`
	}
	if err := b.call("GET", "/api/backtests?limit=1", nil, &list); err != nil {
		return err
	}
	next := "task_1"
	if len(list) > 0 {
		k, _ := strconv.Atoi(strings.TrimPrefix(list[0].TaskID, "task_"))
		next = fmt.Sprintf("task_%d", k+1)
	}
	c, err := b.dial("/ws/" + next)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, _, err := readFrame(c, 5*time.Second); err != nil {
		return err
	}
	id, err := b.submit(b.ticker, map[string]any{"every": 5, "spin": 20000})
	if err != nil {
		return err
	}
	if id != next {
		return fmt.Errorf("another client submitted a task meanwhile (%s, expected %s); run on an idle service", id, next)
	}
	var lat []time.Duration
	for {
		f, at, err := readFrame(c, 60*time.Second)
		if err != nil {
			return err
		}
		if f.Event == "complete" {
			break
		}
		if f.Event != "log" {
			continue
		}
		var l struct{ Message string }
		_ = json.Unmarshal(f.Data, &l)
		if ms, err := strconv.ParseInt(l.Message, 10, 64); err == nil {
			lat = append(lat, at.Sub(time.UnixMilli(ms)))
		}
	}
	fmt.Printf("events: %d strategy log lines, this.log → WebSocket client (incl. batching): %s\n", len(lat), stats(lat))
	return nil
}

// flood submits n tasks at once and waits until every one is finished.
func (b *bench) flood(n, submitters int) error {
	fl, err := b.runFlood(n, submitters, func(i int) map[string]any { return map[string]any{"fast": 5 + i%10} })
	if err != nil {
		return err
	}
	counts := fl.counts
	fmt.Printf("flood: %d tasks submitted in %s by %d clients; all finished after %s (%.0f tasks/s)\n",
		n, fl.submitted.Round(time.Millisecond), submitters, fl.total.Round(time.Millisecond), float64(n)/fl.total.Seconds())
	fmt.Printf("  completed %d, failed %d, cancelled %d, lost %d; most seen running at once: %d\n",
		counts["completed"], counts["failed"], counts["cancelled"], n-counts["completed"]-counts["failed"]-counts["cancelled"], fl.maxRunning)
	fmt.Printf("  reads while it ran: GET /api/backtests/{id} %s; slowest started %s in\n", stats(fl.getOne), fl.slowestAt.Round(time.Millisecond))
	fmt.Printf("                      GET /api/backtests?limit=100 %s\n", stats(fl.getList))
	if counts["completed"] != n {
		return fmt.Errorf("%d of %d tasks completed", counts["completed"], n)
	}
	return nil
}

// floodResult is what runFlood measured.
type floodResult struct {
	ids              []string
	submitted, total time.Duration
	counts           map[string]int
	maxRunning       int
	getOne, getList  []time.Duration
	slowestAt        time.Duration // when the slowest GET of one task started
}

// runFlood submits n tasks of bench-sma at once (task i with params(i)) and waits until
// every one is finished, timing task reads meanwhile. It fails unless all n completed.
func (b *bench) runFlood(n, submitters int, params func(i int) map[string]any) (floodResult, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var first atomic.Value // the first task's id, for the reads
	var wg sync.WaitGroup
	errc := make(chan error, submitters)
	t0 := time.Now()
	for w := 0; w < submitters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id, err := b.submit(b.sma, params(i))
				if err != nil {
					errc <- err
					return
				}
				ids[i] = id
				if i == 0 {
					first.Store(id)
				}
			}
		}()
	}
	// Reads while the flood runs: one task and the first page of the list.
	stopReads := make(chan struct{})
	readsDone := make(chan struct{})
	var getOne, getList []time.Duration
	var slowest, slowestAt time.Duration // the slowest single read and when it started
	go func() {
		defer close(readsDone)
		for i := 0; ; i++ {
			select {
			case <-stopReads:
				return
			case <-time.After(20 * time.Millisecond):
			}
			id, _ := first.Load().(string)
			if id == "" {
				continue
			}
			t := time.Now()
			if b.call("GET", "/api/backtests/"+id, nil, nil) == nil {
				getOne = append(getOne, time.Since(t))
				if d := time.Since(t); d > slowest {
					slowest, slowestAt = d, t.Sub(t0)
				}
			}
			t = time.Now()
			if b.call("GET", "/api/backtests?limit=100", nil, nil) == nil {
				getList = append(getList, time.Since(t))
			}
		}
	}()
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		close(stopReads)
		return floodResult{}, err
	}
	submitted := time.Since(t0)
	// Progress is polled with one count in the database when it is given (a list of 1,000
	// tasks through the API every 100 ms would load the service being measured), else
	// through the API.
	count := b.apiCounts
	if b.db != "" {
		pool, err := pgxpool.New(context.Background(), b.db)
		if err != nil {
			close(stopReads)
			return floodResult{}, err
		}
		defer pool.Close()
		count = func(ids []string) (map[string]int, error) { return dbCounts(pool, ids) }
	}
	maxRunning := 0
	var counts map[string]int
	for {
		var err error
		if counts, err = count(ids); err != nil {
			close(stopReads)
			return floodResult{}, err
		}
		maxRunning = max(maxRunning, counts["running"])
		if counts["completed"]+counts["failed"]+counts["cancelled"] == n {
			break
		}
		if time.Since(t0) > 30*time.Minute {
			close(stopReads)
			return floodResult{}, fmt.Errorf("not finished after 30 minutes: %v", counts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	total := time.Since(t0)
	close(stopReads)
	<-readsDone
	return floodResult{ids: ids, submitted: submitted, total: total, counts: counts, maxRunning: maxRunning,
		getOne: getOne, getList: getList, slowestAt: slowestAt}, nil
}

// apiCounts counts the tasks of ids by status through the API.
func (b *bench) apiCounts(ids []string) (map[string]int, error) {
	var list []struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}
	if err := b.call("GET", fmt.Sprintf("/api/backtests?limit=%d", min(len(ids)+100, 1000)), nil, &list); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	counts := map[string]int{}
	for _, t := range list {
		if want[t.TaskID] {
			counts[t.Status]++
		}
	}
	return counts, nil
}

// dbCounts counts the tasks of ids by status in the database.
func dbCounts(pool *pgxpool.Pool, ids []string) (map[string]int, error) {
	rows, err := pool.Query(context.Background(), `SELECT status, count(*) FROM tasks WHERE id = ANY($1) GROUP BY status`, ids)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		counts[status] = n
	}
	return counts, rows.Err()
}

// conns opens n WebSocket connections on one task, publishes events as a worker does and
// checks that every connection receives every event.
func (b *bench) conns(n int) error {
	if b.db == "" {
		return errors.New("-db is required")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, b.db)
	if err != nil {
		return err
	}
	defer pool.Close()
	task := fmt.Sprintf("bench_%d", rand.Int64())
	t0 := time.Now()
	cs := make([]*websocket.Conn, n)
	for i := range cs {
		c, err := b.dial("/ws/" + task)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		defer c.Close()
		if _, _, err := readFrame(c, 10*time.Second); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		cs[i] = c
	}
	fmt.Printf("conns: %d WebSocket connections open in %s\n", n, time.Since(t0).Round(time.Millisecond))
	const k = 20
	gap := time.Duration(n/10) * time.Millisecond // room for the fan-out of each event
	pub := events.NewPublisher(pool)
	var sent [k]atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	missing := atomic.Int64{}
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got := 0; got < k; got++ {
				f, at, err := readFrame(c, 30*time.Second)
				if err != nil {
					missing.Add(int64(k - got))
					return
				}
				var p events.Progress
				_ = json.Unmarshal(f.Data, &p)
				d := time.Duration(at.UnixNano() - sent[p.CurrentBar].Load())
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < k; i++ {
		sent[i].Store(time.Now().UnixNano())
		if err := pub.Publish(ctx, events.Message{Event: events.KindProgress, Task: task,
			Progr: &events.Progress{TaskID: task, CurrentBar: i, TotalBars: k, Progress: float64(i) * 100 / k}}); err != nil {
			return err
		}
		time.Sleep(gap)
	}
	wg.Wait()
	fmt.Printf("conns: %d events %s apart to each of %d connections: %d delivered, %d missing; latency %s\n", k, gap, n, len(lat), missing.Load(), stats(lat))
	if missing.Load() > 0 {
		return fmt.Errorf("%d events not delivered", missing.Load())
	}
	return nil
}

func stats(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	r := func(x time.Duration) string { return x.Round(10 * time.Microsecond).String() }
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s (n=%d)", r(q(0.50)), r(q(0.90)), r(q(0.99)), r(s[len(s)-1]), len(s))
}
