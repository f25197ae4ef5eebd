package httpapi

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// swingStrategy buys when the close crosses above its moving average and sells a few bars
// later: on the test data, many short trades, flat at the end.
const swingStrategy = `
class Swing extends Strategy {
  static params = { period: 10, hold: 3 };
  init() { this.cross = ind.CrossOver(this.data.close, ind.SMA(this.data.close, this.p.period)); this.bought = 0; }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) { this.buy({ size: 10 }); this.bought = this.data.length; }
    else if (this.position.size > 0 && this.data.length - this.bought >= this.p.hold) this.close();
  }
}`

// holdStrategy buys once and holds to the end: no closed trade, and the open position is
// the whole result.
const holdStrategy = `
class Hold extends Strategy {
  static params = { size: 10, wait: 5, unused: 1 };
  next() { if (this.position.size === 0 && this.data.length > this.p.wait) this.buy({ size: this.p.size }); }
}`

// TestFindings runs backtests through the service and reads their findings: a clean
// many-trade swing strategy has no warning; a buy-and-hold of three parameters has too few
// trades and an open position carrying its result; a version that reads tomorrow's close is
// critical once checked; bi_findings says what the route says; an unknown result is a 404.
func TestFindings(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	for v, code := range map[int]string{2: lookaheadTestStrategy, 3: holdStrategy, 4: swingStrategy} {
		params := map[int]string{2: "[]", 3: `[{"name":"size","default":10},{"name":"wait","default":5},{"name":"unused","default":1}]`,
			4: `[{"name":"period","default":10},{"name":"hold","default":3}]`}[v]
		if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
			VALUES ('str_1', $1, 'V', $2, 'V', $3, 'api', $4)`, v, code, params, "h"+string(rune('0'+v))); err != nil {
			t.Fatal(err)
		}
	}
	run := func(extra string) string {
		t.Helper()
		id := e.submit(t, extra)["task_id"].(string)
		e.waitStatus(t, id, "completed")
		return id
	}
	findings := func(id string) []map[string]any {
		t.Helper()
		code, body := e.do(t, "GET", "/api/results/"+id+"/findings", "")
		if code != 200 {
			t.Fatalf("findings of %s: %d %v", id, code, body)
		}
		raw, _ := json.Marshal(body.(map[string]any)["data"])
		var out []map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	byID := func(fs []map[string]any) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, f := range fs {
			m[f["id"].(string)] = f
		}
		return m
	}

	// A regular wave, which the swing strategy trades at a profit every time.
	if _, err := e.st.Pool.Exec(e.ctx, `INSERT INTO symbols (source, symbol, name) VALUES ('testsrc', 'WAVE', 'W')`); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	day := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2000 {
		c := 100 + 10*math.Sin(2*math.Pi*float64(i)/20)
		o := 100 + 10*math.Sin(2*math.Pi*(float64(i)-0.5)/20)
		rows = append(rows, []any{"testsrc", "WAVE", "1d", day.AddDate(0, 0, i), o, math.Max(o, c) + 0.5, math.Min(o, c) - 0.5, c, int64(1000)})
	}
	if _, err := e.st.Pool.CopyFrom(e.ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	clean := run(`,"strategy_version":4,"symbol":"WAVE"`)
	fs := findings(clean)
	for _, f := range fs {
		if f["severity"] != "info" {
			t.Errorf("clean crossover: %v", f)
		}
	}
	got := byID(fs)
	if got["time_in_market"] == nil || got["time_in_market"]["value"].(float64) <= 0 || got["time_in_market"]["value"].(float64) >= 100 {
		t.Errorf("clean crossover's time in market: %v", got["time_in_market"])
	}
	if got["lookahead"] == nil || got["lookahead"]["title"] != "Look-ahead never checked" {
		t.Errorf("unchecked version: %v", got["lookahead"])
	}

	hold := byID(findings(run(`,"strategy_version":3`)))
	if f := hold["trades_per_parameter"]; f == nil || f["severity"] != "warning" || f["value"] != 0.0 || f["threshold"] != 30.0 {
		t.Errorf("buy and hold, 3 parameters: %v", f)
	}
	if f := hold["open_position_at_end"]; f == nil || f["severity"] != "warning" || f["value"].(float64) <= 50 {
		t.Errorf("buy and hold's open position: %v", f)
	}

	future := run(`,"strategy_version":2`)
	if f := byID(findings(future))["lookahead"]; f["severity"] != "info" {
		t.Errorf("before the check: %v", f)
	}
	if code, body := e.do(t, "POST", "/api/strategies/str_1/versions/2/lookahead", `{"start_date":"1970-01-01","end_date":"1979-12-31"}`); code != 200 {
		t.Fatalf("check: %d %v", code, body)
	}
	fs = findings(future)
	got = byID(fs)
	if f := got["lookahead"]; f["severity"] != "critical" || f["title"] != "The strategy reads the future" {
		t.Errorf("after a check found look-ahead: %v", f)
	}
	if got["warmup"] == nil {
		t.Errorf("a check that measured warm-up: no warmup finding in %v", fs)
	}

	// bi_findings: the stored findings and the look-ahead verdict, as the route gives them.
	for _, id := range []string{clean, future} {
		want := findings(id)
		rows, err := e.st.Pool.Query(e.ctx, `SELECT finding, severity, title FROM bi_findings WHERE task_id = $1 ORDER BY seq`, id)
		if err != nil {
			t.Fatal(err)
		}
		var view []map[string]any
		for rows.Next() {
			var f, s, ti string
			if err := rows.Scan(&f, &s, &ti); err != nil {
				t.Fatal(err)
			}
			view = append(view, map[string]any{"id": f, "severity": s, "title": ti})
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		var api []map[string]any
		for _, f := range want {
			if f["id"] == "warmup" {
				continue // the check's detail, not in the view
			}
			api = append(api, map[string]any{"id": f["id"], "severity": f["severity"], "title": f["title"]})
		}
		a, _ := json.Marshal(api)
		v, _ := json.Marshal(view)
		if string(a) != string(v) {
			t.Errorf("bi_findings of %s:\n view %s\n api  %s", id, v, a)
		}
	}

	if code, body := e.do(t, "GET", "/api/results/task_999/findings", ""); code != 404 {
		t.Errorf("unknown result: %d %v", code, body)
	}
}
