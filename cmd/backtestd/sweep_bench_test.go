package main

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/backtestd/backtestd/internal/reftest"
)

// BenchmarkSweepStudy is the study of docs/performance.md (fast 2..51 × slow 60..250/10 on
// orcl 2000–2009, 1,000 combinations) with BENCH_JOBS jobs (default 1), the overfitting
// statistics included: go test -run x -bench SweepStudy -benchtime 1x -cpuprofile cpu.prof ./cmd/backtestd/
func BenchmarkSweepStudy(b *testing.B) {
	data := reftest.Path(b, "data", "orcl.csv")
	jobs := 1
	if s := os.Getenv("BENCH_JOBS"); s != "" {
		jobs, _ = strconv.Atoi(s)
	}
	args := []string{"--strategy", "../../examples/sma_cross.js", "--data", data, "--from", "2000-01-01", "--to", "2009-12-31",
		"--param", "fast=2:51:1", "--param", "slow=60:250:10", "--jobs", strconv.Itoa(jobs), "--json"}
	for b.Loop() {
		if err := runSweep(context.Background(), args, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
