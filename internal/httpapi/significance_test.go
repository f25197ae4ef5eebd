package httpapi

import (
	"fmt"
	"testing"
)

// coinStrategy enters by a coin of its own (a hash of the bar and its seed) and holds 5 bars.
const coinStrategy = `
class Coin extends Strategy {
  static params = { seed: 1 };
  init() { this.at = 0; }
  next() {
    const n = this.data.length;
    if (this.position.size === 0) {
      const h = Math.imul(n ^ Math.imul(this.p.seed, 2654435761), 2246822519) >>> 0;
      if ((h >>> 16) % 2 === 0) { this.buy({ size: 10 }); this.at = n; }
    } else if (n - this.at >= 5) this.close();
  }
}`

// TestSignificanceRoute: a strategy that reads tomorrow's close beats random entries
// (p < 0.01) and the t test; one entering by coin flip does not for most of its coins
// (p > 0.05); the same seed gives the same answer; bad input is a 400, an unknown result a
// 404.
func TestSignificanceRoute(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	for v, code := range map[int]string{2: lookaheadTestStrategy, 3: coinStrategy} {
		params := map[int]string{2: `[]`, 3: `[{"name":"seed","default":1}]`}[v]
		if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
			VALUES ('str_1', $1, 'V', $2, 'V', $3, 'api', $4)`, v, code, params, fmt.Sprint("h", v)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(extra string) string {
		t.Helper()
		id := e.submit(t, extra)["task_id"].(string)
		e.waitStatus(t, id, "completed")
		return id
	}
	sig := func(id, query string) map[string]any {
		t.Helper()
		code, body := e.do(t, "GET", "/api/results/"+id+"/significance"+query, "")
		if code != 200 {
			t.Fatalf("significance of %s%s: %d %v", id, query, code, body)
		}
		return body.(map[string]any)["data"].(map[string]any)
	}

	future := run(`,"strategy_version":2`)
	a := sig(future, "?runs=500&seed=3")
	if a["method"] != "random_entries" || a["runs"] != 500.0 || a["seed"] != 3.0 || a["metric"] != "mean_trade_return_pct" || a["p_value"].(float64) >= 0.01 {
		t.Errorf("random entries against a strategy that reads the future: %v", a)
	}
	if p := a["percentiles"].(map[string]any); a["observed"].(float64) <= p["p95"].(float64) {
		t.Errorf("observed %v not above the random runs' 95th percentile %v", a["observed"], p["p95"])
	}
	if b := sig(future, "?runs=500&seed=3"); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same seed: %v then %v", a, b)
	}
	if tt := sig(future, "?method=ttest"); tt["p_value"].(float64) >= 0.01 || tt["df"].(float64) != a["trades"].(float64)-1 {
		t.Errorf("t test of a strategy that reads the future: %v", tt)
	}

	above := 0
	for seed := 1; seed <= 5; seed++ {
		coin := run(fmt.Sprintf(`,"strategy_version":3,"strategy_params":{"seed":%d}`, seed))
		if a := sig(coin, ""); a["p_value"].(float64) > 0.05 {
			above++
		} else {
			t.Logf("coin %d: %v", seed, a)
		}
	}
	if above < 4 {
		t.Errorf("coin-flip entries: %d of 5 coins above p 0.05, want most", above)
	}

	for _, c := range []struct {
		query string
		code  int
	}{
		{"?method=coin", 400}, {"?runs=0", 400}, {"?runs=10001", 400}, {"?runs=x", 400}, {"?seed=-1", 400},
		{"?seed=9007199254740992", 400},
	} {
		if code, body := e.do(t, "GET", "/api/results/"+future+"/significance"+c.query, ""); code != c.code {
			t.Errorf("%s: %d %v, want %d", c.query, code, body, c.code)
		}
	}
	if code, _ := e.do(t, "GET", "/api/results/task_999/significance", ""); code != 404 {
		t.Errorf("unknown result: %d", code)
	}
}
