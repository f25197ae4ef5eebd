package report_test

import (
	"encoding/json"
	"io"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/montecarlo"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// peakHeap runs read with the collector running almost continuously and returns how far
// the live heap rose above where it started, sampled every 200 µs.
func peakHeap(read func()) uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapAlloc, m.HeapAlloc
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	read()
	close(stop)
	<-done
	return peak - base
}

// TestReadCostsCoverReads holds the estimates the API admits heavy reads by to what the
// reads hold: for every chart, export and a comparison of an intraday result of 50,000
// bars, the estimate is at least the rise of the live heap during the read, encoding
// included. Not parallel: it measures the whole process's heap.
func TestReadCostsCoverReads(t *testing.T) {
	const n = 50_000
	b := resultstest.Setup(t)
	bars := resultstest.FiveMinuteWalk(n, 3, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	b.Bars(t, "RW", bars)
	b.Completed(t, "task_1", "RW", bars, map[string]any{"fast": 2, "slow": 5, "size": 10}) // many fills
	b.Completed(t, "task_2", "RW", bars, map[string]any{"fast": 3, "slow": 5, "size": 10})
	svc := service(b)
	defer debug.SetGCPercent(debug.SetGCPercent(2))
	type read struct {
		name string
		cost func() (int64, error)
		run  func() error
	}
	var reads []read
	for _, ct := range report.ChartTypes {
		reads = append(reads, read{"chart " + ct, func() (int64, error) { return svc.ChartCost(b.Ctx, "task_1", ct) }, func() error {
			c, err := svc.Chart(b.Ctx, "task_1", ct, "", report.View{})
			if err == nil {
				err = c.WriteJSON(io.Discard, "", "")
			}
			return err
		}})
	}
	reads = append(reads,
		read{"JSON export", func() (int64, error) { return svc.ExportCost(b.Ctx, "task_1", "json") }, func() error {
			e, err := svc.LoadJSONExport(b.Ctx, "task_1")
			if err == nil {
				err = e.WriteJSON(io.Discard)
			}
			return err
		}},
		read{"CSV export", func() (int64, error) { return svc.ExportCost(b.Ctx, "task_1", "csv") }, func() error {
			text, err := svc.ExportCSV(b.Ctx, "task_1")
			if err == nil {
				err = json.NewEncoder(io.Discard).Encode(text)
			}
			return err
		}},
		read{"HTML export", func() (int64, error) { return svc.ExportCost(b.Ctx, "task_1", "html") }, func() error {
			_, err := svc.ExportHTML(b.Ctx, "task_1")
			return err
		}},
		read{"comparison", func() (int64, error) { return svc.CompareCost(b.Ctx, []string{"task_1", "task_2"}) }, func() error {
			c, err := svc.Compare(b.Ctx, []string{"task_1", "task_2"})
			if err == nil {
				err = json.NewEncoder(io.Discard).Encode(c)
			}
			return err
		}},
		read{"drawdowns", func() (int64, error) { return svc.DrawdownsCost(b.Ctx, "task_1") }, func() error {
			_, err := svc.Drawdowns(b.Ctx, "task_1", 10)
			return err
		}},
		read{"Monte Carlo, block", func() (int64, error) { return svc.MonteCarloCost(b.Ctx, "task_1", 0) }, func() error {
			a, err := svc.MonteCarlo(b.Ctx, "task_1", montecarlo.Options{Method: montecarlo.Block})
			if err == nil {
				err = json.NewEncoder(io.Discard).Encode(a)
			}
			return err
		}},
		read{"Monte Carlo, bootstrap", func() (int64, error) { return svc.MonteCarloCost(b.Ctx, "task_1", 0) }, func() error {
			a, err := svc.MonteCarlo(b.Ctx, "task_1", montecarlo.Options{Method: montecarlo.Bootstrap})
			if err == nil {
				err = json.NewEncoder(io.Discard).Encode(a)
			}
			return err
		}},
	)
	for _, r := range reads {
		cost, err := r.cost()
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		var rerr error
		held := peakHeap(func() { rerr = r.run() })
		if rerr != nil {
			t.Fatalf("%s: %v", r.name, rerr)
		}
		t.Logf("%-24s estimate %6.1f B/bar, held %6.1f B/bar", r.name, float64(cost)/n, float64(held)/n)
		if uint64(cost) < held {
			t.Errorf("%s: estimated %d bytes, held %d", r.name, cost, held)
		}
	}
}
