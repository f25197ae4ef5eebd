package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/procstat"
)

// heavyBars is the size of the result the heavy-reads benchmark reads: the issue's
// 300,000-bar result.
const heavyBars = 300_000

// heavyReads stores a 300,000-bar result (imports the bars, runs the SMA crossover over
// them through the API), then fires n concurrent full-resolution candlestick chart
// requests (max_points=0) at it while GET /health is sampled every 10 ms. It reports the
// API process's peak resident memory during the burst (pid: the process's id; its peak is
// reset through /proc/<pid>/clear_refs first, so the import and the run do not count),
// what each request got (status, bytes, Retry-After), and the /health latencies.
func (b *bench) heavyReads(n, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("-pid: the API process's id is needed to read its memory")
	}
	task, err := b.heavyResult()
	if err != nil {
		return err
	}
	path := "/api/results/" + task + "/chart?chart_type=candlestick&max_points=0"
	// One read first, alone: the answer's size, and the bars in PostgreSQL's cache.
	one, err := b.heavyGet(path)
	if err != nil {
		return err
	}
	fmt.Printf("heavyreads: %s alone: %s\n", path, one)
	time.Sleep(2 * time.Second) // let the collector return what the single read freed
	before, err := procstat.RSS(pid)
	if err != nil {
		return err
	}
	// Reset the process's peak resident size (VmHWM), so it measures the burst only.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak of %d: %w", pid, err)
	}
	stop := make(chan struct{})
	var health []time.Duration
	var healthErrs []string
	var sampled uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // /health on a connection of its own, every 10 ms
		defer wg.Done()
		c := &http.Client{Timeout: 30 * time.Second}
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			t0 := time.Now()
			res, err := c.Get(b.api + "/health")
			if err != nil {
				healthErrs = append(healthErrs, err.Error())
				continue
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			health = append(health, time.Since(t0))
			if res.StatusCode != http.StatusOK {
				healthErrs = append(healthErrs, res.Status)
			}
		}
	}()
	wg.Add(1)
	go func() { // resident memory every 5 ms, in case VmHWM cannot be read
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if r, err := procstat.RSS(pid); err == nil && r > sampled {
				sampled = r
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // /health's figures before the burst
	t0 := time.Now()
	got := make([]heavyAnswer, n)
	var burst sync.WaitGroup
	for i := range n {
		burst.Add(1)
		go func() {
			defer burst.Done()
			a, err := b.heavyGet(path)
			if err != nil {
				a.err = err
			}
			got[i] = a
		}()
	}
	burst.Wait()
	took := time.Since(t0)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	peak, err := peakRSS(pid)
	if err != nil {
		peak = sampled
	}
	codes := map[int]int{}
	failed := 0
	for i, a := range got {
		fmt.Printf("  request %d: %s\n", i+1, a)
		if a.err != nil {
			failed++
			continue
		}
		codes[a.status]++
	}
	fmt.Printf("heavyreads: %d concurrent full-resolution candlestick charts of a %d-bar result in %s: statuses %v, %d dropped\n",
		n, heavyBars, took.Round(time.Millisecond), codes, failed)
	fmt.Printf("  API resident memory: %.0f MB before, peak %.0f MB during (sampled every 5 ms: %.0f MB)\n",
		float64(before)/1e6, float64(peak)/1e6, float64(sampled)/1e6)
	fmt.Printf("  GET /health every 10 ms during it: %s\n", stats(health))
	if len(healthErrs) > 0 {
		fmt.Printf("  /health failures: %d (first: %s)\n", len(healthErrs), healthErrs[0])
	}
	return nil
}

// heavyAnswer is what one heavy read got.
type heavyAnswer struct {
	status     int
	bytes      int64
	retryAfter string
	detail     string
	took       time.Duration
	err        error
}

func (a heavyAnswer) String() string {
	if a.err != nil {
		return fmt.Sprintf("failed after %s: %v", a.took.Round(time.Millisecond), a.err)
	}
	s := fmt.Sprintf("%d, %.1f MB in %s", a.status, float64(a.bytes)/1e6, a.took.Round(time.Millisecond))
	if a.retryAfter != "" {
		s += ", Retry-After " + a.retryAfter
	}
	if a.detail != "" {
		s += ": " + a.detail
	}
	return s
}

// heavyGet reads path to its end on a connection of its own (the answer uncompressed, as
// most clients take it: Go's transport asks for gzip and inflates it).
func (b *bench) heavyGet(path string) (heavyAnswer, error) {
	c := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	t0 := time.Now()
	res, err := c.Get(b.api + path)
	if err != nil {
		return heavyAnswer{took: time.Since(t0)}, err
	}
	defer res.Body.Close()
	a := heavyAnswer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
	var tail [64]byte
	var last []byte
	if res.StatusCode == http.StatusOK {
		buf := make([]byte, 256<<10)
		for {
			k, err := res.Body.Read(buf)
			a.bytes += int64(k)
			if k > 0 {
				last = append(tail[:0], buf[max(0, k-len(tail)):k]...)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				a.took = time.Since(t0)
				return a, fmt.Errorf("after %d bytes: %w", a.bytes, err)
			}
		}
		if !bytes.HasSuffix(bytes.TrimSpace(last), []byte("}}")) {
			return a, fmt.Errorf("the answer (%d bytes) ends %q, not with the envelope's end", a.bytes, last)
		}
	} else {
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			return a, err
		}
		a.bytes, a.detail = int64(len(raw)), strings.TrimSpace(string(raw))
	}
	a.took = time.Since(t0)
	return a, nil
}

// heavyResult imports heavyBars one-minute bars (about 208 days from 2020-01-01) as
// BENCH300K and stores a run of the SMA crossover over them; it returns the task's id.
func (b *bench) heavyResult() (string, error) {
	bars := engine.RandomWalk(heavyBars, 7)
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]map[string]any, len(bars))
	for i, x := range bars {
		bars[i].Time = start.Add(time.Duration(i) * time.Minute)
		rows[i] = map[string]any{"datetime": bars[i].Time.Format(time.RFC3339), "open": x.Open, "high": x.High, "low": x.Low, "close": x.Close, "volume": x.Volume}
	}
	if err := b.call("POST", "/api/data/"+b.source+"/BENCH300K/bars?timeframe=1m&name=bench-300k", rows, nil); err != nil {
		return "", err
	}
	var t struct {
		TaskID string `json:"task_id"`
	}
	if err := b.call("POST", "/api/backtests", map[string]any{
		"strategy_id": b.sma, "data_source": b.source, "symbol": "BENCH300K",
		"timeframe": "1m", "start_date": bars[0].Time.Format(time.DateOnly), "end_date": bars[len(bars)-1].Time.Format(time.DateOnly),
	}, &t); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var st struct{ Status, Error string }
		if err := b.call("GET", "/api/backtests/"+t.TaskID, nil, &st); err != nil {
			return "", err
		}
		switch st.Status {
		case "completed":
			fmt.Printf("heavyreads: %s is a stored %d-bar result\n", t.TaskID, heavyBars)
			return t.TaskID, nil
		case "failed", "cancelled":
			return "", fmt.Errorf("the %d-bar run %s ended %s: %s", heavyBars, t.TaskID, st.Status, st.Error)
		}
	}
	return "", fmt.Errorf("the %d-bar run %s did not complete in 5 minutes", heavyBars, t.TaskID)
}

// peakRSS is process pid's peak resident size (VmHWM) in bytes.
func peakRSS(pid int) (uint64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
