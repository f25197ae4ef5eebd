package jsrt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// A batch's runs, many at once on several goroutines, give what each run alone gives:
// what one run's code leaves behind (a global, a changed prototype, state in a closure)
// does not reach another, and the columns and indicators they share are computed once.
func TestBatchRunsAsAlone(t *testing.T) {
	t.Parallel()
	// Each run counts its runs in a global and on Array.prototype and buys that many
	// shares more: in a runtime shared with another run, the count would grow.
	const code = `globalThis.runs = (globalThis.runs || 0) + 1;
Array.prototype.seen = (Array.prototype.seen || 0) + 1;
let calls = 0;
class C extends Strategy {
  static params = { fast: 5, slow: 20 };
  init() {
    this.x = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.EMA(this.data.close, this.p.slow));
    this.extra = globalThis.runs + [].seen - 2;
  }
  next() {
    calls++;
    if (this.position.size === 0 && this.x[0] > 0) this.buy({ size: 10 + this.extra + (calls > 1e9 ? 1 : 0) });
    else if (this.position.size > 0 && this.x[0] < 0) this.close();
  }
}`
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(800, 5)}}
	cfg := RunConfig{Code: code, Feeds: feeds, Commission: 0.001, OnLog: func(engine.LogEntry) {}}
	var params []map[string]any
	for fast := 2; fast <= 9; fast++ {
		for _, slow := range []int{15, 30, 45} {
			params = append(params, map[string]any{"fast": fast, "slow": slow})
		}
	}
	want := make([]*engine.Result, len(params))
	for i, p := range params {
		c := cfg
		c.Params = p
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res
	}
	b := NewBatch(cfg)
	got := make([]*engine.Result, len(params))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(params); i += 4 {
				res, err := b.Run(context.Background(), params[i])
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = res
			}
		})
	}
	wg.Wait()
	for i, p := range params {
		if got[i] == nil {
			continue
		}
		if want[i].Summary.TotalTrades == 0 {
			t.Errorf("%v: no trade; the test needs some", p)
		}
		if !reflect.DeepEqual(got[i].Summary, want[i].Summary) || !reflect.DeepEqual(got[i].Trades, want[i].Trades) ||
			!reflect.DeepEqual(got[i].Equity, want[i].Equity) || !reflect.DeepEqual(got[i].Executions, want[i].Executions) {
			t.Errorf("%v: the batch's run %+v, alone %+v", p, got[i].Summary, want[i].Summary)
		}
	}
	// One close column, 8 SMAs and 3 EMAs, each computed once for the 24 runs.
	if n := b.cfg.Memo.Len(); n != 1+8+3 {
		t.Errorf("memo holds %d series, want %d", n, 1+8+3)
	}
}

// A batch's run that fails fails as alone, and the batch's other runs go on.
func TestBatchFailures(t *testing.T) {
	t.Parallel()
	const code = `class C extends Strategy {
  static params = { n: 1 };
  next() { if (this.p.n === 3) throw new Error("three"); }
}`
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(50, 1)}}
	b := NewBatch(RunConfig{Code: code, Feeds: feeds})
	for n := 1; n <= 4; n++ {
		_, err := b.Run(context.Background(), map[string]any{"n": n})
		_, alone := Run(context.Background(), RunConfig{Code: code, Feeds: feeds, Params: map[string]any{"n": n}})
		if fmt.Sprint(err) != fmt.Sprint(alone) || (n == 3) != (err != nil) {
			t.Errorf("n=%d: %v, alone %v", n, err, alone)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Run(ctx, nil); err == nil {
		t.Error("a cancelled context: no error")
	}
}

// BenchmarkStudyCombination is the cost of one combination of a study (SMA crossover on
// 2,500 bars, fast and slow cycling through 50 × 20 values): a plain Run each time (as
// `backtestd sweep` ran them before batches), or a Batch's Run (the code compiled once,
// columns and indicators shared).
//
//	go test -run x -bench StudyCombination -benchtime 1000x ./internal/jsrt/
func BenchmarkStudyCombination(b *testing.B) {
	code, err := os.ReadFile(filepath.Join(repoRoot(b), "examples", "sma_cross.js"))
	if err != nil {
		b.Fatal(err)
	}
	cfg := RunConfig{Code: string(code), Feeds: []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(2500, 42)}}, Commission: 0.001,
		OnLog: func(engine.LogEntry) {}}
	params := func(i int) map[string]any { return map[string]any{"fast": 2 + i%50, "slow": 60 + 10*(i/50%20)} }
	b.Run("run", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c := cfg
			c.Params = params(i)
			if _, err := Run(context.Background(), c); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("batch", func(b *testing.B) {
		batch := NewBatch(cfg)
		i := 0
		for b.Loop() {
			if _, err := batch.Run(context.Background(), params(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
