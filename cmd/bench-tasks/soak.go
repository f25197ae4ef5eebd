package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/engine"
)

// gauges are the service's own figures (GET /health?detail=1) and its database's
// connection count.
type gauges struct {
	Goroutines int   `json:"goroutines"`
	HeapBytes  int64 `json:"heap_bytes"`
	RSSBytes   int64 `json:"rss_bytes"`
	DBConns    int   `json:"db_conns"`
	WebSockets int   `json:"websockets"`
	OpenFiles  int   `json:"open_files"`
	PGBackends int   `json:"-"`
}

func (g gauges) String() string {
	return fmt.Sprintf("rss %.1f MB, heap %.1f MB, goroutines %d, pool connections %d, database backends %d, open files %d, websockets %d",
		float64(g.RSSBytes)/1e6, float64(g.HeapBytes)/1e6, g.Goroutines, g.DBConns, g.PGBackends, g.OpenFiles, g.WebSockets)
}

func (b *bench) gauges(ctx context.Context, db *pgxpool.Pool) (gauges, error) {
	var g gauges
	res, err := http.Get(b.api + "/health?detail=1")
	if err != nil {
		return g, err
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&g); err != nil {
		return g, fmt.Errorf("health detail: %w", err)
	}
	err = db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&g.PGBackends)
	return g, err
}

// soak drives mixed load for d — submissions (short and longer runs), cancels, retries,
// WebSocket watchers (some leaving early), bar imports and reads — then waits for every
// task to end and compares the service's gauges at the start and the end (after a minute
// idle): memory, goroutines, connections and open files must stay flat.
func (b *bench) soak(d time.Duration) error {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, b.db)
	if err != nil {
		return err
	}
	defer db.Close()
	before, err := b.gauges(ctx, db)
	if err != nil {
		return err
	}
	fmt.Printf("soak: %s of mixed load\n  start: %s\n", d, before)

	var submitted, cancelled, retried, imported, watched, reads, failures atomic.Int64
	fail := func(what string, err error) {
		if failures.Add(1) <= 10 {
			fmt.Printf("  error (%s): %v\n", what, err)
		}
	}
	lctx, stop := context.WithTimeout(ctx, d)
	defer stop()
	var wg sync.WaitGroup
	every := func(period time.Duration, fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-lctx.Done():
					return
				case <-t.C:
					fn()
				}
			}
		}()
	}
	// Submissions: mostly short runs, some of a few seconds; a third watched live.
	every(300*time.Millisecond, func() {
		spin := 0
		if rand.IntN(5) == 0 {
			spin = 2000
		}
		id, err := b.submit(b.ticker, map[string]any{"spin": spin, "every": 50})
		if err != nil {
			fail("submit", err)
			return
		}
		submitted.Add(1)
		if rand.IntN(3) == 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := b.watch(id, rand.IntN(4) == 0); err != nil {
					fail("watch", err)
				}
				watched.Add(1)
			}()
		}
		if rand.IntN(10) == 0 { // cancel soon, then retry
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
				var res struct {
					Data struct {
						Status string `json:"status"`
					} `json:"data"`
				}
				if err := b.call("DELETE", "/api/backtests/"+id, nil, &res); err != nil {
					fail("cancel", err)
					return
				}
				if res.Data.Status != "cancelled" {
					return // it finished first: nothing was cancelled
				}
				cancelled.Add(1)
				time.Sleep(time.Second)
				if err := b.call("POST", "/api/backtests/"+id+"/retry", nil, nil); err != nil {
					fail("retry", err)
					return
				}
				retried.Add(1)
			}()
		}
	})
	// Imports: 500 bars into one of five symbols, every 10 s.
	n := 0
	every(10*time.Second, func() {
		n++
		if err := b.importBars(fmt.Sprintf("SOAK%d", n%5), "soak", engine.RandomWalk(500, uint64(n))); err != nil {
			fail("import", err)
			return
		}
		imported.Add(1)
	})
	// Reads: the list, and the chart of a completed task.
	every(200*time.Millisecond, func() {
		var list []struct {
			TaskID string `json:"task_id"`
			Status string `json:"status"`
		}
		if err := b.call("GET", "/api/backtests?limit=20", nil, &list); err != nil {
			fail("list", err)
			return
		}
		for _, t := range list {
			if t.Status == "completed" {
				if err := b.call("GET", "/api/results/"+t.TaskID+"/chart?chart_type=equity", nil, nil); err != nil {
					fail("chart", err)
				}
				break
			}
		}
		reads.Add(1)
	})
	wg.Wait()

	// Every task ends; then a minute idle, so the gauges show what stays.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var open int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE status IN ('pending', 'running')`).Scan(&open); err != nil {
			return err
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d tasks still pending or running 5 minutes after the load stopped", open)
		}
		time.Sleep(time.Second)
	}
	time.Sleep(time.Minute)
	after, err := b.gauges(ctx, db)
	if err != nil {
		return err
	}
	var byStatus bytes.Buffer
	rows, err := db.Query(ctx, `SELECT status, count(*) FROM tasks GROUP BY status ORDER BY status`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var st string
		var c int
		if err := rows.Scan(&st, &c); err != nil {
			return err
		}
		fmt.Fprintf(&byStatus, " %s %d", st, c)
	}
	fmt.Printf("  end:   %s\n", after)
	fmt.Printf("  load: %d submitted, %d cancelled and retried %d, %d watched, %d imports, %d read rounds, %d errors; tasks:%s\n",
		submitted.Load(), cancelled.Load(), retried.Load(), watched.Load(), imported.Load(), reads.Load(), failures.Load(), byStatus.String())
	return nil
}

// watch follows a task's events on a WebSocket until its completion or, when early, for a
// moment only.
func (b *bench) watch(id string, early bool) error {
	c, err := b.dial("/ws/" + id)
	if err != nil {
		return err
	}
	defer c.Close()
	until := time.Now().Add(5 * time.Minute)
	if early {
		until = time.Now().Add(time.Duration(rand.IntN(300)) * time.Millisecond)
	}
	for time.Now().Before(until) {
		f, _, err := readFrame(c, time.Until(until))
		if err != nil {
			if early {
				return nil
			}
			return err
		}
		if f.Event == "complete" {
			return nil
		}
	}
	return nil
}
