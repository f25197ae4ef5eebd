package jsrt

import (
	"context"
	"reflect"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// A run given the code compiled once (as a study's batch does) gives what a run of the
// code gives, for good code and for code that does not load; a Compiled of other code is
// not used.
func TestCompiledRuns(t *testing.T) {
	t.Parallel()
	const good = `class C extends Strategy {
  static params = { fast: 5, slow: 20 };
  init() { this.x = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.x[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.x[0] < 0) this.close();
  }
}`
	const broken = "class C extends Strategy {\n  next() { this.buy( }\n}"
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(600, 3)}}
	run := func(code string, c *Compiled, params map[string]any) (*engine.Result, error) {
		return Run(context.Background(), RunConfig{Code: code, Compiled: c, Params: params, Feeds: feeds, Commission: 0.001})
	}
	tests := []struct {
		name     string
		code     string
		compiled *Compiled
	}{
		{"good", good, Compile(good)},
		{"broken", broken, Compile(broken)},
		{"compiled of other code", good, Compile(broken)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []map[string]any{{"fast": 3}, {"fast": 8, "slow": 30}} {
				want, wantErr := run(tc.code, nil, p)
				got, gotErr := run(tc.code, tc.compiled, p)
				if !reflect.DeepEqual(gotErr, wantErr) {
					t.Fatalf("%v: error %v, without Compiled %v", p, gotErr, wantErr)
				}
				if wantErr == nil && (!reflect.DeepEqual(got.Summary, want.Summary) || len(got.Trades) != len(want.Trades) || len(got.Trades) == 0) {
					t.Errorf("%v: summary %+v (%d trades), without Compiled %+v (%d trades)", p, got.Summary, len(got.Trades), want.Summary, len(want.Trades))
				}
			}
		})
	}
}

// Runs sharing a Memo compute each data column and indicator once and give what runs
// without one give.
func TestMemoSharesIndicators(t *testing.T) {
	t.Parallel()
	const code = `class C extends Strategy {
  static params = { fast: 5, slow: 20 };
  init() { this.x = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.EMA(ind.SMA(this.data.close, this.p.slow), 3)); }
  next() {
    if (this.position.size === 0 && this.x[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.x[0] < 0) this.close();
  }
}`
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(600, 3)}}
	memo := NewMemo()
	compiled := Compile(code)
	for _, p := range []map[string]any{{"fast": 5, "slow": 20}, {"fast": 8, "slow": 20}, {"fast": 5, "slow": 30}} {
		want, err := Run(context.Background(), RunConfig{Code: code, Params: p, Feeds: feeds})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Run(context.Background(), RunConfig{Code: code, Compiled: compiled, Params: p, Feeds: feeds, Memo: memo})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Summary, want.Summary) || len(got.Trades) == 0 {
			t.Errorf("%v: summary %+v with the memo, %+v without", p, got.Summary, want.Summary)
		}
	}
	// close; SMA 5, 8, 20, 30; EMA 3 of SMA 20 and of SMA 30 (CrossOver takes two inputs: not memoised)
	if n := memo.Len(); n != 7 {
		t.Errorf("the memo computed %d series, want 7", n)
	}
}
