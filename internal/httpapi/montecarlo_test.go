package httpapi

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// TestMonteCarloRoute simulates a real stored result over HTTP: each method answers, the
// same seed gives the same answer, the shuffle keeps the closed trades' final value, and
// bad input is a 400 that says why, an unknown result a 404.
func TestMonteCarloRoute(t *testing.T) {
	t.Parallel()
	b := setupData(t, false)
	bars := engine.RandomWalk(700, 9)
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", "RW", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	res := storeRun(t, b, "task_1", "RW", bars, `{"fast":5,"slow":20,"size":10}`)
	closedValue := res.InitialCash
	closed := 0
	for _, tr := range res.Trades {
		if !tr.IsOpen {
			closedValue += tr.PnLNet
			closed++
		}
	}
	if closed < 3 {
		t.Fatalf("the run closed %d trades", closed)
	}

	type answer struct {
		Method     string             `json:"method"`
		Runs       int                `json:"runs"`
		Seed       uint64             `json:"seed"`
		Steps      int                `json:"steps"`
		Unit       string             `json:"unit"`
		FinalValue map[string]float64 `json:"final_value"`
		MaxDD      map[string]float64 `json:"max_drawdown_pct"`
		Longest    map[string]float64 `json:"longest_drawdown"`
		CAGR       map[string]float64 `json:"cagr"`
		Losses     []struct {
			Loss, Probability float64
		} `json:"loss_probability"`
		Fan struct {
			Steps []int     `json:"steps"`
			P50   []float64 `json:"p50"`
		} `json:"fan"`
		Hist []struct{ Count int } `json:"final_value_histogram"`
	}
	get := func(t *testing.T, query string) (answer, json.RawMessage) {
		t.Helper()
		status, body := b.call(t, "GET", "/api/results/task_1/montecarlo"+query, "", nil)
		if status != 200 {
			t.Fatalf("%s: %d %v", query, status, body)
		}
		raw, _ := json.Marshal(field(body, "data"))
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		return a, raw
	}

	t.Run("shuffle by default keeps the final value", func(t *testing.T) {
		a, _ := get(t, "")
		if a.Method != "shuffle" || a.Runs != 1000 || a.Seed != 1 || a.Unit != "trades" || a.Steps != closed {
			t.Errorf("defaults: %+v", a)
		}
		for _, p := range []string{"p5", "p25", "p50", "p75", "p95"} {
			if math.Abs(a.FinalValue[p]-closedValue) > 1e-6 {
				t.Errorf("final value %s %v, the closed trades end at %v", p, a.FinalValue[p], closedValue)
			}
		}
		if a.MaxDD["p5"] > a.MaxDD["p50"] || a.MaxDD["p50"] > a.MaxDD["p95"] || a.Longest["p95"] < 1 {
			t.Errorf("drawdown percentiles %v, longest %v", a.MaxDD, a.Longest)
		}
		if len(a.Losses) != 3 || a.Losses[2].Loss != 0.5 || len(a.Fan.Steps) != len(a.Fan.P50) || a.Fan.Steps[len(a.Fan.Steps)-1] != closed {
			t.Errorf("losses %+v, fan steps %v", a.Losses, a.Fan.Steps)
		}
	})
	t.Run("the same seed gives the same answer", func(t *testing.T) {
		for _, m := range []string{"shuffle", "bootstrap", "block"} {
			_, one := get(t, "?method="+m+"&runs=200&seed=42&loss=0.05")
			_, two := get(t, "?method="+m+"&runs=200&seed=42&loss=0.05")
			_, other := get(t, "?method="+m+"&runs=200&seed=43&loss=0.05")
			if string(one) != string(two) {
				t.Errorf("%s: seed 42 answered differently twice", m)
			}
			if reflect.DeepEqual(one, other) {
				t.Errorf("%s: seeds 42 and 43 gave the same answer", m)
			}
		}
	})
	t.Run("block resamples the bars", func(t *testing.T) {
		a, _ := get(t, "?method=block&runs=300&block=10&seed=3")
		n := 0
		for _, h := range a.Hist {
			n += h.Count
		}
		if a.Unit != "bars" || a.Steps != len(res.Equity) || n != 300 || a.CAGR == nil || a.FinalValue["p5"] >= a.FinalValue["p95"] {
			t.Errorf("unit %s steps %d (bars %d), histogram counts %d, cagr %v, final %v", a.Unit, a.Steps, len(res.Equity), n, a.CAGR, a.FinalValue)
		}
	})

	for _, tc := range []struct {
		name, query string
		status      int
		detail      string
	}{
		{"unknown method", "?method=walk", 400, "Unknown Monte Carlo method 'walk' (use shuffle, bootstrap, block or price_paths)"},
		{"runs zero", "?runs=0", 400, "Invalid runs '0': expected an integer from 1 to 10000"},
		{"runs too many", "?runs=10001", 400, "Invalid runs '10001': expected an integer from 1 to 10000"},
		{"runs not a number", "?runs=many", 400, "Invalid runs 'many': expected an integer from 1 to 10000"},
		{"seed negative", "?seed=-1", 400, "Invalid seed '-1': expected an integer from 0 to 9007199254740991"},
		{"seed too large", "?seed=9007199254740992", 400, "Invalid seed '9007199254740992': expected an integer from 0 to 9007199254740991"},
		{"seed not a number", "?seed=x", 400, "Invalid seed 'x': expected an integer from 0 to 9007199254740991"},
		{"loss over 1", "?loss=0.5,2", 400, "Invalid loss '0.5,2': comma-separated shares of the capital above 0 and at most 1 (0.5 is half)"},
		{"loss not a number", "?loss=half", 400, "Invalid loss 'half': comma-separated shares of the capital above 0 and at most 1 (0.5 is half)"},
		{"block for trades", "?method=bootstrap&block=5", 400, "block is the block method's length; the bootstrap method takes none"},
		{"block longer than the run", "?method=block&block=100000", 400, "Invalid block 100000: from 1 to the result's 700 bars"},
		{"unknown result", "", 404, "Result not found: task_99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/api/results/task_1/montecarlo" + tc.query
			if tc.status == 404 {
				path = "/api/results/task_99/montecarlo"
			}
			status, body := b.call(t, "GET", path, "", nil)
			if status != tc.status || field(body, "detail") != tc.detail {
				t.Errorf("%d %v, want %d %q", status, field(body, "detail"), tc.status, tc.detail)
			}
		})
	}
}
