package runner_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/runner"
	"github.com/backtestd/backtestd/internal/sweep"
)

// A batch gives, for each parameter set, the summary and returns of the same single run,
// and a strategy error fails that trial alone.
func TestRunBatch(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	ctx := context.Background()
	code := strings.Replace(smaCross, "init() {", "init() { if (this.p.fast === 13) throw new Error('no 13');", 1)
	fd := feeds(800)
	params := []map[string]any{{"fast": int64(5), "slow": int64(20)}, {"fast": int64(13), "slow": int64(20)}, {"fast": int64(8), "slow": int64(40)}}
	var got []runner.Trial
	err := p.RunBatch(ctx, jsrt.RunConfig{Code: code, Feeds: fd, Cash: 10000, Commission: 0.001}, params, "sharpe_ratio", func(tr runner.Trial) {
		got = append(got, tr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d trials, want 3", len(got))
	}
	for i, tr := range got {
		if tr.Index != i {
			t.Errorf("trial %d has index %d", i, tr.Index)
		}
		if i == 1 {
			if tr.Err == nil || tr.Err.Kind != "strategy" || !strings.Contains(tr.Err.Message, "no 13") {
				t.Errorf("trial 1: error %+v, want the strategy's", tr.Err)
			}
			continue
		}
		if tr.Err != nil {
			t.Fatalf("trial %d: %v", i, tr.Err)
		}
		res, err := p.Run(ctx, jsrt.RunConfig{Code: code, Feeds: fd, Cash: 10000, Commission: 0.001, Params: params[i]})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tr.Summary, res.Summary) {
			t.Errorf("trial %d: summary %+v, single run %+v", i, tr.Summary, res.Summary)
		}
		if !reflect.DeepEqual(tr.Returns, sweep.Returns(res.Equity)) || tr.Bars != len(res.Equity) {
			t.Errorf("trial %d: returns differ from the single run's", i)
		}
		if res.Summary.SharpeRatio != nil && (tr.Objective == nil || *tr.Objective != *res.Summary.SharpeRatio) {
			t.Errorf("trial %d: objective %v, want the Sharpe ratio %v", i, tr.Objective, *res.Summary.SharpeRatio)
		}
	}
}

// A trial that loops forever is stopped by its own time limit and the batch goes on; a
// batch whose context ends stops, after reporting the trials before.
func TestRunBatchLimits(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	code := `class L extends Strategy { static params = { n: 1 };
  next() { if (this.p.n === 2) for (;;) {} } }`
	params := []map[string]any{{"n": int64(1)}, {"n": int64(2)}, {"n": int64(3)}}
	var got []runner.Trial
	err := p.RunBatch(context.Background(), jsrt.RunConfig{Code: code, Feeds: feeds(200), WallTimeLimit: 2 * time.Second}, params, "total_return",
		func(tr runner.Trial) { got = append(got, tr) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Err != nil || got[1].Err == nil || got[1].Err.Kind != "timeout" || got[2].Err != nil {
		t.Fatalf("trials: %+v", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	got = nil
	err = p.RunBatch(ctx, jsrt.RunConfig{Code: code, Feeds: feeds(200), WallTimeLimit: time.Minute}, params, "total_return",
		func(tr runner.Trial) { got = append(got, tr); cancel() })
	var re *jsrt.RunError
	if !errors.As(err, &re) || re.Kind != "cancelled" {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if len(got) != 1 {
		t.Fatalf("%d trials reported before the cancel, want 1", len(got))
	}
}

func TestConstraintInChild(t *testing.T) {
	t.Parallel()
	p := newPool(t, runner.Config{})
	ctx := context.Background()
	keep, err := p.Constraint(ctx, "p.fast < p.slow", []map[string]any{{"fast": 1, "slow": 2}, {"fast": 3, "slow": 2}})
	if err != nil || !reflect.DeepEqual(keep, []bool{true, false}) {
		t.Fatalf("keep %v, err %v", keep, err)
	}
	for _, expr := range []string{"p.fast <", "(() => { for (;;) {} })()"} {
		_, err := p.Constraint(ctx, expr, []map[string]any{{"fast": 1}})
		var pe *jsrt.ParamError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Message, "Constraint: ") {
			t.Errorf("%q: err = %v, want a ParamError starting Constraint:", expr, err)
		}
	}
}
