package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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
func (b *bench) cost(backtestd string, submitters, pid int) error {
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
	var sweepCPU []time.Duration
	sweepOnce := func() (time.Duration, map[string]float64, error) {
		t0 := time.Now()
		cmd := exec.Command(backtestd, sweepArgs...)
		out, err := cmd.Output()
		d := time.Since(t0)
		if cmd.ProcessState != nil {
			sweepCPU = append(sweepCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
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
	cpu0 := b.cpuNow(pid)
	fl, err := b.runFlood(len(grid), submitters, func(i int) map[string]any { return grid[i] })
	if err != nil {
		return err
	}
	time.Sleep(4 * time.Second) // idle runner processes exit and are counted with the service's children
	cpu1 := b.cpuNow(pid)
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
	fmt.Printf("  CPU: sweep %s;", fmtDurs(sweepCPU))
	if pid > 0 {
		fmt.Printf(" the flood: service %.2f s, its runner processes %.2f s", (cpu1.self - cpu0.self).Seconds(), (cpu1.children - cpu0.children).Seconds())
	}
	if b.db != "" {
		fmt.Printf(", PostgreSQL backends %.2f s", cpu1.pgDelta(cpu0).Seconds())
	}
	fmt.Println(" (-pid and -db give the service's and the database's)")
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

func fmtDurs(ds []time.Duration) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%.2f s", d.Seconds())
	}
	return out
}

// cpuUse is CPU time used so far: the service's own, its runner processes' (those it
// waited for and those still running) and each PostgreSQL backend's of its database.
type cpuUse struct {
	self, children time.Duration
	pg             map[int]time.Duration
}

// pgDelta is the backends' CPU since before: a backend started since counts from zero.
func (u cpuUse) pgDelta(before cpuUse) time.Duration {
	var d time.Duration
	for pid, t := range u.pg {
		d += t - before.pg[pid]
	}
	return d
}

func (b *bench) cpuNow(pid int) cpuUse {
	var u cpuUse
	if pid > 0 {
		if f := procFields(pid); len(f) > 14 {
			u.self = ticks(f[11]) + ticks(f[12])
			u.children = ticks(f[13]) + ticks(f[14])
		}
		if dirs, err := os.ReadDir("/proc"); err == nil {
			for _, d := range dirs {
				c, err := strconv.Atoi(d.Name())
				if err != nil {
					continue
				}
				if f := procFields(c); len(f) > 12 && f[1] == strconv.Itoa(pid) {
					u.children += ticks(f[11]) + ticks(f[12])
				}
			}
		}
	}
	if b.db != "" {
		u.pg = map[int]time.Duration{}
		if pool, err := pgxpool.New(context.Background(), b.db); err == nil {
			rows, err := pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			if err == nil {
				for rows.Next() {
					var p int
					if rows.Scan(&p) == nil {
						if f := procFields(p); len(f) > 12 {
							u.pg[p] = ticks(f[11]) + ticks(f[12])
						}
					}
				}
				rows.Close()
			}
			pool.Close()
		}
	}
	return u
}

// procFields are the fields of /proc/pid/stat after the command name (state first).
func procFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	return strings.Fields(string(rest))
}

func ticks(s string) time.Duration {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Duration(n) * 10 * time.Millisecond
}
