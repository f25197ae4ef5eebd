package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestSweep: a grid with a constraint, ranked by the objective; each combination's figures
// are those of the same single backtest (`backtestd run`); the overfitting statistics come
// with the leaderboard.
func TestSweep(t *testing.T) {
	t.Parallel()
	data := refData(t, "orcl.csv")
	common := []string{"--strategy", "../../examples/sma_cross.js", "--data", data, "--from", "2000-01-01", "--to", "2005-12-31"}
	var out, errb bytes.Buffer
	args := append(append([]string{}, common...), "--param", "fast=5:20:5", "--param", "slow=10,30,60", "--set", "size=20",
		"--constraint", "p.fast < p.slow", "--objective", "total_return", "--jobs", "3", "--blocks", "8", "--json")
	if err := runSweep(context.Background(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	var rep struct {
		Combinations, Excluded, Failed int
		Trials                         []struct {
			Params    map[string]any
			Objective *float64
			Summary   map[string]any
		}
		Overfitting struct {
			Deflated *struct{ Probability float64 } `json:"deflated_sharpe"`
			PBO      *struct {
				Probability float64
				Splits      int
			}
		}
		BestStatistics *struct{ Groups []any } `json:"best_statistics"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// fast 5, 10, 15, 20 × slow 10, 30, 60, less fast >= slow: (10,10), (15,10), (20,10).
	if rep.Combinations != 9 || rep.Excluded != 3 || rep.Failed != 0 || len(rep.Trials) != 9 {
		t.Fatalf("combinations %d, excluded %d, failed %d, trials %d", rep.Combinations, rep.Excluded, rep.Failed, len(rep.Trials))
	}
	for i, tr := range rep.Trials {
		if tr.Objective == nil || *tr.Objective != tr.Summary["total_return"] || tr.Params["size"] != 20.0 || tr.Params["fast"].(float64) >= tr.Params["slow"].(float64) {
			t.Errorf("trial %d: %+v", i, tr)
		}
		if i > 0 && *tr.Objective > *rep.Trials[i-1].Objective {
			t.Errorf("trial %d ranks below a worse one: %v > %v", i, *tr.Objective, *rep.Trials[i-1].Objective)
		}
	}
	if rep.Overfitting.Deflated == nil || rep.Overfitting.PBO == nil || rep.Overfitting.PBO.Splits != 70 || rep.BestStatistics == nil {
		t.Errorf("overfitting %+v, best statistics %v", rep.Overfitting, rep.BestStatistics != nil)
	}
	for _, i := range []int{0, 4, 8} { // the best, a middle one, the worst
		p := rep.Trials[i].Params
		var one bytes.Buffer
		args := append(append([]string{}, common...), "--quiet", "--json")
		for _, k := range []string{"fast", "slow", "size"} {
			args = append(args, "--param", k+"="+strings.TrimSuffix(strings.TrimSuffix(jsonText(p[k]), ".0"), "\n"))
		}
		if err := runLocal(context.Background(), args, &one, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		var single struct {
			Result struct{ Summary map[string]any }
		}
		if err := json.Unmarshal(one.Bytes(), &single); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(single.Result.Summary, rep.Trials[i].Summary) {
			t.Errorf("%v: the sweep's summary %v, the single backtest's %v", p, rep.Trials[i].Summary, single.Result.Summary)
		}
	}

	out.Reset()
	if err := runSweep(context.Background(), append(append([]string{}, common...), "--param", "fast=10", "--param", "slow=30"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SmaCross on orcl: 1 combination,", "RANK  PARAMETERS", "Deflated Sharpe ratio of the best", "Note: probability of backtest overfitting"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Ranked by sharpe_ratio (the default), the table shows Sharpe once.
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "RANK") {
			if n := strings.Count(line, "SHARPE"); n != 1 || !strings.Contains(line, "RETURN") || !strings.Contains(line, "MAX DD") {
				t.Errorf("table head %q: Sharpe %d times", line, n)
			}
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSweepErrors(t *testing.T) {
	t.Parallel()
	data := refData(t, "orcl.csv")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--param", "nope=1,2"}, "Unknown parameter: nope"},
		{[]string{"--param", "fast=a,b"}, "Parameter 'fast': expected int"},
		{[]string{"--param", "fast=5,10", "--constraint", "p.fast <"}, "Constraint: SyntaxError"},
		{[]string{"--param", "fast=5,10", "--constraint", "p.fast > 100"}, "leaves no combination"},
		{[]string{"--param", "fast=5,10", "--objective", "luck"}, `unknown objective "luck"`},
		{[]string{"--param", "fast=1:200:1", "--param", "slow=1:200:1"}, "40000 combinations, more than the 10000"},
		{[]string{"--param", "fast=5,10", "--set", "fast=3"}, "both varied"},
		{[]string{"--param", "fast=5,10", "--method", "anneal"}, "--method is grid, random or bayes"},
		{[]string{}, "at least one --param"},
	} {
		args := append([]string{"--strategy", "../../examples/sma_cross.js", "--data", data}, tt.args...)
		err := runSweep(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want an error with %q", tt.args, err, tt.want)
		}
	}
}
