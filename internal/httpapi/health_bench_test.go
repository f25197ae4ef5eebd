package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// BenchmarkHealthUnderHeavyReads measures what issue 46 saw: GET /health while six
// full-resolution candlestick charts of a 300,000-bar result are read at once, with the
// service's defaults and serve's memory settings (GOGC 400, a 320 MiB GOMEMLIMIT). It
// reports /health's latency (p50, p99, max, in ms) and, sampled at the same moments, that of
// a ping through the service's connection pool (what /health did before it checked on a
// connection of its own). scripts/health-under-load.sh runs it on this build and on an
// earlier one, alternately (docs/performance.md, "Health under heavy reads"):
//
//	go test -run x -bench HealthUnderHeavyReads -benchtime 1x ./internal/httpapi
func BenchmarkHealthUnderHeavyReads(b *testing.B) {
	const bars, charts = 300_000, 6
	ctx := context.Background()
	st := openStore(b, pgtest.NewDatabase(b))
	if err := marketdata.EnsureBuiltin(ctx, st, false); err != nil {
		b.Fatal(err)
	}
	d := &dataBundle{ctx: ctx, store: st}
	walk := resultstest.FiveMinuteWalk(bars, 46, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := marketdata.NewService(st, nil).Import(ctx, "builtin", "LONG", "", "5m", time.UTC, walk); err != nil {
		b.Fatal(err)
	}
	storeRun(b, d, "task_long", "LONG", walk, `{"fast":5,"slow":20,"size":10}`)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(320 << 20))
	srv := httptest.NewServer(New(Config{}, Deps{Store: st, Logger: quietLogger()}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: charts + 2}}

	b.ResetTimer()
	for range b.N {
		var health, pool []time.Duration
		stop := make(chan struct{})
		var probes sync.WaitGroup
		probe := func(out *[]time.Duration, f func() error) {
			probes.Add(1)
			go func() {
				defer probes.Done()
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					t0 := time.Now()
					if err := f(); err != nil {
						b.Errorf("probe: %v", err)
						return
					}
					*out = append(*out, time.Since(t0))
				}
			}()
		}
		probe(&health, func() error {
			res, err := client.Get(srv.URL + "/health")
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, res.Body)
			return res.Body.Close()
		})
		probe(&pool, func() error {
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			return st.Pool.Ping(c)
		})
		t0 := time.Now()
		var reads sync.WaitGroup
		statuses := make([]int, charts)
		for i := range charts {
			reads.Go(func() {
				res, err := client.Get(srv.URL + "/api/results/task_long/chart?chart_type=candlestick&max_points=0")
				if err != nil {
					b.Errorf("chart %d: %v", i, err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses[i] = res.StatusCode
			})
		}
		reads.Wait()
		close(stop)
		probes.Wait()
		b.Logf("%d charts of %d bars in %s, statuses %v; %d /health probes", charts, bars, time.Since(t0).Round(time.Millisecond), statuses, len(health))
		for _, m := range []struct {
			name string
			d    []time.Duration
		}{{"health", health}, {"poolping", pool}} {
			if len(m.d) == 0 {
				b.Fatalf("no %s probe finished", m.name)
			}
			slices.Sort(m.d)
			q := func(p float64) float64 { return float64(m.d[min(len(m.d)-1, int(p*float64(len(m.d))))]) / 1e6 }
			b.ReportMetric(q(0.5), m.name+"_p50_ms")
			b.ReportMetric(q(0.99), m.name+"_p99_ms")
			b.ReportMetric(float64(m.d[len(m.d)-1])/1e6, m.name+"_max_ms")
		}
	}
}
