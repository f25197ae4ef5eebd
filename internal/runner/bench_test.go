package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
)

// The cost of isolation: one 5,000-bar SMA-crossover run in this process against the same
// run in a runner process (a warm one: started ahead, as in the service).
//
//	go test -run x -bench Run5k -benchtime 100x ./internal/runner/
func BenchmarkRun5kInProcess(b *testing.B) {
	cfg := jsrt.RunConfig{Code: smaCross, Feeds: feeds(5000)}
	for b.Loop() {
		if _, err := jsrt.Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRun5kInRunner(b *testing.B) {
	p, err := runner.New(runner.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	cfg := jsrt.RunConfig{Code: smaCross, Feeds: feeds(5000)}
	for b.Loop() {
		if _, err := p.Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun5kInWarmRunner pauses between runs (off the clock), so every run finds a
// child started and warmed up, as on an idle service.
func BenchmarkRun5kInWarmRunner(b *testing.B) {
	p, err := runner.New(runner.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	cfg := jsrt.RunConfig{Code: smaCross, Feeds: feeds(5000)}
	for b.Loop() {
		b.StopTimer()
		time.Sleep(300 * time.Millisecond)
		b.StartTimer()
		if _, err := p.Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectInRunner(b *testing.B) {
	p, err := runner.New(runner.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		if _, err := p.Inspect(context.Background(), smaCross); err != nil {
			b.Fatal(err)
		}
	}
}
