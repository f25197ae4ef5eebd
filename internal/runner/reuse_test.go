package runner_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
)

// A child that completed a run serves further runs of the same code for the same owner
// only: other code, or another owner's run, gets
// another process, a failed run ends the child, and an unused child ends after a while.
// Results do not depend on which child ran them.
func TestReuseOnlyForSameCode(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	ctx := context.Background()
	const code = `class R extends Strategy {
  static params = { fail: false };
  init() { this.sma = ind.SMA(this.data.close, 20); }
  next() {
    if (this.p.fail && this.data.close.length === 100) throw new Error('asked to fail');
    if (this.position.size === 0 && this.data.close[0] > this.sma[0]) this.buy({ size: 5 });
    else if (this.position.size > 0 && this.data.close[0] < this.sma[0]) this.close();
  }
}`
	run := func(code string, params map[string]any) (float64, error) {
		res, err := p.Run(ctx, jsrt.RunConfig{Code: code, Params: params, Feeds: feeds(1000), Cash: 10000})
		if err != nil {
			return 0, err
		}
		return res.FinalValue, nil
	}
	first, err := run(code, nil)
	if err != nil {
		t.Fatal(err)
	}
	idle := p.IdlePIDs()
	if len(idle) != 1 {
		t.Fatalf("after a completed run, %d children wait for the same code, want 1", len(idle))
	}
	a := idle[0]

	again, err := run(code, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("the same run in a reused child ended at %v, first at %v", again, first)
	}
	if idle := p.IdlePIDs(); !slices.Equal(idle, []int{a}) {
		t.Fatalf("after a second run of the same code, waiting: %v, want the same child %d", idle, a)
	}

	other := code + "\n// another strategy"
	if _, err := run(other, nil); err != nil {
		t.Fatal(err)
	}
	idle = p.IdlePIDs()
	if len(idle) != 2 || idle[0] != a || idle[1] == a {
		t.Fatalf("after other code ran, waiting: %v, want %d (first code) and another process", idle, a)
	}

	// The same code for another user: another process too (a child serves one owner). The
	// children before may have ended meanwhile (idle for 3 s on a slow machine), but bob's
	// run must have left a process that is neither of them waiting.
	before := idle
	if _, err := p.Run(ctx, jsrt.RunConfig{Code: code, Feeds: feeds(1000), Cash: 10000, Owner: "bob"}); err != nil {
		t.Fatal(err)
	}
	if idle := p.IdlePIDs(); !slices.ContainsFunc(idle, func(pid int) bool { return !slices.Contains(before, pid) }) {
		t.Fatalf("after bob's run of the same code, waiting: %v, want a process other than %v", idle, before)
	}

	if _, err := run(code, map[string]any{"fail": true}); err == nil {
		t.Fatal("a run asked to fail completed")
	}
	if idle := p.IdlePIDs(); slices.Contains(idle, a) {
		t.Fatalf("the child whose run failed still waits for work: %v", idle)
	}

	deadline := time.Now().Add(time.Minute)
	for len(p.IdlePIDs()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("children still waiting a minute later: %v", p.IdlePIDs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
