package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// costGrid is the parameter set of -only cost: fast 2..51 × slow 60..250 by 10, 1,000
// combinations, each run once through the API and once by `backtestd sweep`.
const (
	costFastFrom, costFastTo = 2, 51
	costSlowFrom, costSlowTo = 60, 250
	costSlowStep             = 10
)

// cost measures the service's own cost per run (issue 35): the same 1,000 runs (SMA
// crossover over the 5,000 bars of BENCH5K, the grid above) submitted at once through the
// API, then run by `backtestd sweep` on the same machine, in the same process of this
// command. It prints both times, their ratio, the API reads' p99 during the flood and
// whether every run's final value is the same in both.
func (b *bench) cost(backtestd string, submitters int) error {
	work, err := os.MkdirTemp("", "bench-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if backtestd == "" {
		backtestd = filepath.Join(work, "backtestd")
		if out, err := exec.Command("go", "build", "-o", backtestd, "./cmd/backtestd").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/backtestd: %w: %s", err, out)
		}
	}
	// The same bars and code as the service's BENCH5K and bench-sma.
	var csv bytes.Buffer
	csv.WriteString("datetime,open,high,low,close,volume\n")
	for _, x := range engine.RandomWalk(5000, 42) {
		fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,%d\n", x.Time.Format(time.DateOnly), ff(x.Open), ff(x.High), ff(x.Low), ff(x.Close), x.Volume)
	}
	data, code := filepath.Join(work, "BENCH5K.csv"), filepath.Join(work, "bench_sma.js")
	if err := os.WriteFile(data, csv.Bytes(), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(code, []byte(smaCode), 0o600); err != nil {
		return err
	}
	var grid []map[string]any
	for f := costFastFrom; f <= costFastTo; f++ {
		for s := costSlowFrom; s <= costSlowTo; s += costSlowStep {
			grid = append(grid, map[string]any{"fast": f, "slow": s})
		}
	}
	sweepArgs := []string{"sweep", "--strategy", code, "--data", data, "--symbol", "BENCH5K",
		"--from", "1970-01-01", "--to", "1990-01-01", "--cash", "10000", "--commission", "0.001",
		"--param", fmt.Sprintf("fast=%d:%d:1", costFastFrom, costFastTo),
		"--param", fmt.Sprintf("slow=%d:%d:%d", costSlowFrom, costSlowTo, costSlowStep), "--json"}
	sweepOnce := func() (time.Duration, map[string]float64, error) {
		t0 := time.Now()
		out, err := exec.Command(backtestd, sweepArgs...).Output()
		d := time.Since(t0)
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return 0, nil, fmt.Errorf("backtestd sweep: %w: %s", err, ee.Stderr)
			}
			return 0, nil, fmt.Errorf("backtestd sweep: %w", err)
		}
		var rep struct {
			Trials []struct {
				Params  map[string]any `json:"params"`
				Summary struct {
					FinalValue float64 `json:"final_value"`
				} `json:"summary"`
				Error string `json:"error"`
			} `json:"trials"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return 0, nil, fmt.Errorf("backtestd sweep --json: %w", err)
		}
		final := map[string]float64{}
		for _, t := range rep.Trials {
			if t.Error != "" {
				return 0, nil, fmt.Errorf("sweep trial %v: %s", t.Params, t.Error)
			}
			final[paramKey(t.Params)] = t.Summary.FinalValue
		}
		return d, final, nil
	}

	// The sweep before and after the flood: the ratio is over the quicker (the engine at
	// its best), and the two show how much the machine's load moved meanwhile.
	sweep1, finals, err := sweepOnce()
	if err != nil {
		return err
	}
	if len(finals) != len(grid) {
		return fmt.Errorf("sweep ran %d combinations, want %d", len(finals), len(grid))
	}
	fl, err := b.runFlood(len(grid), submitters, func(i int) map[string]any { return grid[i] })
	if err != nil {
		return err
	}
	sweep2, _, err := sweepOnce()
	if err != nil {
		return err
	}
	best := min(sweep1, sweep2)

	// Every run through the API ended with the sweep's final value for its parameters.
	differ := 0
	for i, id := range fl.ids {
		var t struct {
			Data struct {
				FinalValue float64 `json:"final_value"`
			} `json:"data"`
		}
		if err := b.call("GET", "/api/results/"+id+"/summary", nil, &t); err != nil {
			return err
		}
		if t.Data.FinalValue != finals[paramKey(grid[i])] {
			differ++
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("cost: %d runs of bench-sma over 5,000 daily bars (fast %d..%d × slow %d..%d by %d)\n",
		len(grid), costFastFrom, costFastTo, costSlowFrom, costSlowTo, costSlowStep)
	fmt.Printf("  API (%d submitters, all at once → all finished): %.2f s; completed %d; most running at once %d\n",
		submitters, fl.total.Seconds(), fl.counts["completed"], fl.maxRunning)
	fmt.Printf("  backtestd sweep (all cores): %.2f s before the flood, %.2f s after\n", sweep1.Seconds(), sweep2.Seconds())
	fmt.Printf("  ratio API / sweep: %.2f× (target ≤ 3×)\n", fl.total.Seconds()/best.Seconds())
	fmt.Printf("  reads during the flood: GET /api/backtests/{id} %s\n", stats(fl.getOne))
	fmt.Printf("                          GET /api/backtests?limit=100 %s\n", stats(fl.getList))
	fmt.Printf("  final values differing from the sweep's: %d of %d; load average at the end: %s", differ, len(grid), load)
	if differ > 0 {
		return fmt.Errorf("%d runs ended with another final value than the sweep's", differ)
	}
	return nil
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// paramKey names a combination of the grid whatever its numbers' types (JSON gives float64).
func paramKey(p map[string]any) string {
	return fmt.Sprintf("%v/%v", p["fast"], p["slow"])
}
