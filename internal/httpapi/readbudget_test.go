package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
)

// heavyBars is the length of the long result of the heavy-read tests: its full-resolution
// candlestick chart is about 11 MB of JSON, more than a client's socket buffers hold, and
// is estimated at 12 MB of memory.
const heavyBars = 60_000

// heavyEnv is a database with a long result (task_big, heavyBars daily bars) and a short
// one (task_small, 700 bars), and a function that serves the API over it with cfg.
type heavyEnv struct {
	*dataBundle
	serve func(t *testing.T, cfg Config) *httptest.Server
}

func setupHeavy(t *testing.T) heavyEnv {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, pgtest.NewDatabase(t))
	if err := marketdata.EnsureBuiltin(ctx, st, false); err != nil {
		t.Fatal(err)
	}
	b := &dataBundle{ctx: ctx, store: st}
	big, small := engine.RandomWalk(heavyBars, 5), engine.RandomWalk(700, 6)
	for sym, bars := range map[string][]engine.Bar{"BIG": big, "SMALL": small} {
		if _, err := marketdata.NewService(st, nil).Import(ctx, "builtin", sym, "", "1d", time.UTC, bars); err != nil {
			t.Fatal(err)
		}
	}
	storeRun(t, b, "task_big", "BIG", big, `{"fast":5,"slow":20,"size":10}`)
	storeRun(t, b, "task_big2", "BIG", big, `{"fast":10,"slow":30,"size":10}`)
	storeRun(t, b, "task_small", "SMALL", small, `{"fast":5,"slow":20,"size":10}`)
	return heavyEnv{dataBundle: b, serve: func(t *testing.T, cfg Config) *httptest.Server {
		srv := httptest.NewServer(New(cfg, Deps{Store: st, Logger: quietLogger()}))
		t.Cleanup(srv.Close)
		return srv
	}}
}

// get reads path from srv to its end: status, Retry-After and body; a transport error (a
// dropped connection) fails the test.
func get(t *testing.T, srv *httptest.Server, path string) (int, string, []byte) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Errorf("GET %s: %v", path, err)
		return 0, "", nil
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Errorf("GET %s: reading the answer: %v", path, err)
	}
	return res.StatusCode, res.Header.Get("Retry-After"), body
}

// stall sends GET path on a connection of its own and reads only the answer's headers:
// the handler is then writing the answer, and holds its share of the budget while the
// client takes no more. The connection's receive buffer is small (its window does not grow
// while nothing is read), so an answer of a few MB cannot all wait in the sockets' buffers.
// It returns the status line and the connection.
func stall(t *testing.T, srv *httptest.Server, path string) (string, net.Conn) {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) }); cerr != nil {
			return cerr
		}
		return err
	}}
	c, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, u.Host)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReaderSize(c, 512)
	status, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("stalled GET %s: %v", path, err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stalled GET %s: headers: %v", path, err)
		}
		if line == "\r\n" {
			break
		}
	}
	return strings.TrimSpace(status), c
}

// TestHeavyReadsShareABudget: charts, exports and comparisons of long results are admitted
// into a shared memory budget. Reads within it all answer, in full and correctly, also
// when more arrive at once than fit together (they wait their turn); a read larger than the
// whole budget is a 413 that says how large a budget would serve it; one that finds the
// budget held past its wait is a 503 with Retry-After; a client that stops reading is cut
// off and its share freed. /health answers throughout, and no connection is dropped.
func TestHeavyReadsShareABudget(t *testing.T) {
	t.Parallel()
	e := setupHeavy(t)
	const chart = "/api/results/task_big/chart?chart_type=candlestick&max_points=0"
	size := int64(heavyBars) * 200 // ChartCost of the candlestick chart of task_big
	if c, err := report.New(results.NewService(e.store.Pool), nil).ChartCost(e.ctx, "task_big", "candlestick"); err != nil || c != size {
		t.Fatalf("ChartCost = %d, %v; want %d", c, err, size)
	}

	t.Run("reads within the budget all answer in full", func(t *testing.T) {
		t.Parallel()
		// Room for two charts at once: the others wait their turn (as long as it takes: the
		// race detector makes a chart slow).
		srv := e.serve(t, Config{ReadMemory: 2*size + size/2, ReadWait: 10 * time.Minute})
		status, _, want := get(t, srv, chart)
		if status != 200 || !bytes.HasPrefix(want, []byte(`{"code":"ok","message":"success","data":{"title":"K-Line Chart"`)) ||
			!bytes.HasSuffix(want, []byte("}}\n")) || bytes.Count(want, []byte("],[")) < heavyBars-1 {
			t.Fatalf("one chart alone: %d, %d bytes: %.200s", status, len(want), want)
		}
		healthDone := watchHealth(t, srv)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, retry, got := get(t, srv, chart)
				if status != 200 || !bytes.Equal(got, want) {
					t.Errorf("read %d: %d (Retry-After %q), %d bytes, want 200 and the %d bytes read alone: %.200s", i, status, retry, len(got), len(want), got)
				}
			}()
		}
		for _, p := range []string{"/api/results/compare?task_ids=task_big,task_small", "/api/results/task_big/chart?chart_type=equity"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if status, _, got := get(t, srv, p); status != 200 || !bytes.HasPrefix(got, []byte("{")) {
					t.Errorf("%s: %d %.200s", p, status, got)
				}
			}()
		}
		wg.Add(1)
		go func() { // the JSON export, written as it goes
			defer wg.Done()
			status, _, got := get(t, srv, "/api/results/task_big/export?format=json")
			var doc struct {
				TaskID      string `json:"task_id"`
				EquityCurve []struct {
					Date  string  `json:"date"`
					Value float64 `json:"value"`
				} `json:"equity_curve"`
				Drawdown []json.RawMessage `json:"drawdown"`
			}
			if err := json.Unmarshal(got, &doc); status != 200 || err != nil || doc.TaskID != "task_big" ||
				len(doc.EquityCurve) != heavyBars || len(doc.Drawdown) != heavyBars || doc.EquityCurve[heavyBars-1].Value <= 0 {
				t.Errorf("JSON export: %d, %v, %d points: %.200s", status, err, len(doc.EquityCurve), got)
			}
		}()
		wg.Wait()
		healthDone()
	})

	t.Run("a read larger than the whole budget is a 413", func(t *testing.T) {
		t.Parallel()
		srv := e.serve(t, Config{ReadMemory: size / 2})
		for _, p := range []string{chart, "/api/results/task_big/export?format=json", "/api/results/task_big/export?format=html",
			"/api/results/compare?task_ids=task_big,task_big2"} {
			status, _, body := get(t, srv, p)
			if status != 413 || !strings.Contains(string(body), "more than the 6 MiB that large reads may hold at once: a service with READ_MEMORY_MB=") {
				t.Errorf("%s: %d %.300s, want 413 naming the budget it needs", p, status, body)
			}
		}
		// What fits is served; what does not exist is still a 404.
		if status, _, body := get(t, srv, "/api/results/task_small/chart"); status != 200 {
			t.Errorf("a short result's chart: %d %.200s", status, body)
		}
		if status, _, body := get(t, srv, "/api/results/task_99/chart"); status != 404 || !strings.Contains(string(body), "Result not found: task_99") {
			t.Errorf("unknown result: %d %s", status, body)
		}
	})

	t.Run("a read that finds the budget held is a 503 with Retry-After", func(t *testing.T) {
		t.Parallel()
		// Room for two charts; their clients read the headers, then nothing more.
		// The stall limit is long enough that a slow machine still sends the third chart
		// while the first two hold their shares.
		// Two slots or more, so that memory, not the slots (TestHealthApartFromHeavyReads), is
		// what holds the third chart back.
		srv := e.serve(t, Config{ReadMemory: 2*size + size/2, ReadWait: 300 * time.Millisecond, ReadStall: 15 * time.Second, ReadConcurrency: 3})
		healthDone := watchHealth(t, srv)
		var conns []net.Conn
		for range 2 {
			status, c := stall(t, srv, chart)
			if status != "HTTP/1.1 200 OK" {
				t.Fatalf("stalled read: %s", status)
			}
			conns = append(conns, c)
		}
		status, retry, body := get(t, srv, chart)
		if status != 503 || retry != "5" || !strings.Contains(string(body), "busy with other large reads") {
			t.Errorf("a third chart: %d, Retry-After %q, %.300s; want 503, Retry-After 5", status, retry, body)
		}
		// Cheap reads are not held up; a short result's chart fits beside the two.
		if status, _, _ := get(t, srv, "/api/results/task_big/summary"); status != 200 {
			t.Errorf("summary: %d", status)
		}
		if status, _, _ := get(t, srv, "/api/results/task_small/chart"); status != 200 {
			t.Errorf("a short result's chart: %d", status)
		}
		// The stalled clients are cut off after ReadStall, and their shares freed: a chart
		// answers again.
		for deadline := time.Now().Add(90 * time.Second); ; {
			status, retry, body := get(t, srv, chart)
			if status == 200 {
				break
			}
			if status != 503 || retry != "5" || time.Now().After(deadline) {
				t.Fatalf("a chart while the stalled clients hold the budget: %d, Retry-After %q, %.200s", status, retry, body)
			}
		}
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
				t.Errorf("stalled connection: %v, want it closed by the server", err)
			}
		}
		healthDone()
	})
}

// isReset says whether err is the connection being reset (how a closed connection with
// unread data ends).
func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

// watchHealth asks GET /health every 20 ms until the returned function is called, and
// fails the test on any answer but 200 (how fast is not asserted).
func watchHealth(t *testing.T, srv *httptest.Server) func() {
	t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	n := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			res, err := srv.Client().Get(srv.URL + "/health")
			if err != nil {
				t.Errorf("/health: %v", err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			// 503 is /health's own answer when the database took over 2 s to reply, which a
			// loaded CI machine can make happen; what the reads must never do is stop the
			// API answering or drop its connection.
			if res.StatusCode != 200 && res.StatusCode != 503 {
				t.Errorf("/health: %d", res.StatusCode)
			}
			n++
		}
	}()
	return func() {
		close(stop)
		<-done
		if n == 0 {
			t.Error("/health was never answered")
		}
	}
}

// TestReadBudgetWaiters: while the budget is held, at most maxReadWaiters reads wait for
// it; the next is told at once to come back (503, Retry-After), and the waiting ones are
// admitted, in turn, as the budget is freed.
func TestReadBudgetWaiters(t *testing.T) {
	t.Parallel()
	b := newReadBudget(Config{ReadMemory: 10, ReadWait: time.Hour})
	ctx := context.Background()
	hold, err := b.admit(ctx, httptest.NewRecorder(), 10, "all of it")
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan func(), maxReadWaiters)
	for range maxReadWaiters {
		go func() {
			release, err := b.admit(ctx, httptest.NewRecorder(), 10, "a waiting read")
			if err != nil {
				t.Error(err)
				release = func() {}
			}
			admitted <- release
		}()
	}
	for deadline := time.Now().Add(time.Minute); b.waiters.Load() < maxReadWaiters; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, want %d", b.waiters.Load(), maxReadWaiters)
		}
	}
	w := httptest.NewRecorder()
	if _, err := b.admit(ctx, w, 1, "one more"); !strings.Contains(fmt.Sprint(err), "busy with other large reads") || w.Header().Get("Retry-After") != "5" {
		t.Errorf("one more than may wait: %v, Retry-After %q; want the 503 at once", err, w.Header().Get("Retry-After"))
	}
	if _, err := b.admit(ctx, httptest.NewRecorder(), 11, "too much"); !strings.Contains(fmt.Sprint(err), "READ_MEMORY_MB=1 or more") {
		t.Errorf("more than the budget: %v", err)
	}
	hold()
	for range maxReadWaiters { // each admitted read frees the budget for the next
		release := <-admitted
		release()
		release() // twice is once
	}
	if !b.sem.TryAcquire(10) {
		t.Error("the budget was not all given back")
	}
}
