package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
)

// TestLookaheadInChild: the check runs in a runner child, answers its report, and is held
// to the run's time limit as a whole.
func TestLookaheadInChild(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(2000, 5)}}
	future := `class F extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => c[i + 1])); }
  next() { if (this.position.size === 0 && this.sig[0] > this.data.close[0]) this.buy({ size: 1 }); else if (this.position.size > 0) this.close(); }
}`
	tests := []struct {
		name, code string
		want       bool
	}{{"biased", future, true}, {"clean", smaCross, false}}
	for _, tc := range tests {
		rep, err := p.Lookahead(context.Background(), jsrt.RunConfig{Code: tc.code, Feeds: feeds})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rep.Lookahead != tc.want || rep.Cuts != 6 || (tc.want && rep.Findings[0].What != "this.sig") {
			t.Errorf("%s: %+v", tc.name, rep)
		}
	}
	slow := `class Slow extends Strategy { next() { const t = Date.now(); while (Date.now() - t < 2) {} } }`
	_, err := p.Lookahead(context.Background(), jsrt.RunConfig{Code: slow, Feeds: feeds, WallTimeLimit: 300 * time.Millisecond})
	var re *jsrt.RunError
	if !errors.As(err, &re) || re.Kind != jsrt.KindTimeout {
		t.Fatalf("a check past its time limit: %v", err)
	}
}
