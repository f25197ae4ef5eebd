package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/reftest"
)

func refData(t *testing.T, name string) string {
	t.Helper()
	return reftest.Path(t, "data", name)
}

func TestRunLocalSummary(t *testing.T) {
	data := refData(t, "orcl.csv")
	var out, errb bytes.Buffer
	err := runLocal(context.Background(), []string{"--strategy", "../../examples/sma_cross.js", "--data", data, "--from", "2000-01-01", "--to", "2005-12-31"}, &out, &errb)
	if err != nil {
		t.Fatal(err, errb.String())
	}
	for _, want := range []string{"SmaCross on orcl: 1508 bars, 2000-01-03 to 2005-12-30", "final value            9807.80", "trades                 34 (won 9, lost 25)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunLocalJSON(t *testing.T) {
	data := refData(t, "nvda.csv")
	var out, errb bytes.Buffer
	err := runLocal(context.Background(), []string{"--strategy", "../../examples/macd.js", "--data", data, "--param", "size=5", "--json"}, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Strategy string `json:"strategy"`
		Result   struct {
			Summary map[string]any   `json:"summary"`
			Equity  []map[string]any `json:"equity"`
		} `json:"result"`
		Statistics struct {
			Groups []any `json:"groups"`
		} `json:"statistics"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Strategy != "MacdCross" || len(v.Result.Equity) != 4012 || len(v.Statistics.Groups) != 5 { // Curve, Trade, Time, Risk and Benchmark (the first feed)
		t.Fatalf("unexpected JSON: %s, %d equity points, %d statistics groups", v.Strategy, len(v.Result.Equity), len(v.Statistics.Groups))
	}
	for _, k := range []string{"initial_cash", "final_value", "total_return", "annual_return", "sharpe_ratio", "max_drawdown", "max_drawdown_pct", "total_trades", "win_rate", "profit_factor", "avg_win", "avg_loss"} {
		if _, ok := v.Result.Summary[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	// One value per figure: the summary's and the statistics record's are the same numbers,
	// as in the service (TestFiguresAgreeEverywhere).
	stat := map[string]any{}
	for _, g := range v.Statistics.Groups {
		for _, m := range g.(map[string]any)["metrics"].([]any) {
			m := m.(map[string]any)
			stat[m["key"].(string)] = m["value"]
		}
	}
	for sk, stk := range map[string]string{"total_return": "total_return", "annual_return": "cagr", "sharpe_ratio": "sharpe_ratio",
		"max_drawdown_pct": "max_drawdown", "win_rate": "win_rate", "total_trades": "total_trades", "sqn": "sqn",
		"max_drawdown_duration": "max_drawdown_duration"} {
		if got, want := stat[stk], v.Result.Summary[sk]; got == nil || got != want {
			t.Errorf("statistics %s = %v, summary %s = %v", stk, got, sk, want)
		}
	}
	// The win rate is over the closed trades: won / (won + lost).
	won, lost := v.Result.Summary["won"].(float64), v.Result.Summary["lost"].(float64)
	if wr := v.Result.Summary["win_rate"].(float64); won+lost == 0 || wr != won/(won+lost)*100 {
		t.Errorf("win rate %v, want %v of %v closed", wr, won, won+lost)
	}
	if !strings.Contains(errb.String(), "trade closed") {
		t.Errorf("strategy logs not echoed: %q", errb.String())
	}
}

func TestRunLocalErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.js")
	_ = os.WriteFile(bad, []byte("class A extends Strategy {\n  next() {\n"), 0o644)
	csv := filepath.Join(dir, "bars.csv")
	_ = os.WriteFile(csv, []byte("date,open,high,low,close,volume\n2020-01-02,1,2,1,1,1\n2020-01-03,1,0.5,1,1,1\n"), 0o644)
	okcsv := filepath.Join(dir, "ok.csv")
	_ = os.WriteFile(okcsv, []byte("date,open,high,low,close,volume\n2020-01-02,1,2,1,1,1\n"), 0o644)
	good := "../../examples/sma_cross.js"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--data", csv}, "--strategy and --data are required"},
		{[]string{"--strategy", bad, "--data", csv}, "Failed to load strategy: SyntaxError"},
		{[]string{"--strategy", good, "--data", csv}, "line 3: high 0.5 is below low 1"},
		{[]string{"--strategy", good, "--data", okcsv, "--from", "2020-13-01"}, "--from"},
		{[]string{"--strategy", good, "--data", okcsv, "--param", "nope=1"}, "Unknown parameter: nope"},
		{[]string{"--strategy", good, "--data", okcsv, "--param", "fast=abc"}, "Parameter 'fast': expected int, got str"},
		{[]string{"--strategy", good, "--data", okcsv, "--data", csv}, "line 3: high 0.5 is below low 1"},
		{[]string{"--strategy", good, "--data", okcsv, "--data", okcsv, "--from", "2021-01-01"}, "ok.csv has no bars in the selected date range"},
		{[]string{"--strategy", good, "--data", okcsv, "--symbol", "A", "--symbol", "B"}, "2 --symbol for 1 --data"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := runLocal(context.Background(), tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want error containing %q", tc.args, err, tc.want)
		}
	}
}

// Several --data files are several feeds, in order, named by --symbol in the same
// position or by their file names.
func TestRunLocalSeveralFeeds(t *testing.T) {
	dir := t.TempDir()
	strat := filepath.Join(dir, "two.js")
	_ = os.WriteFile(strat, []byte(`
class Two extends Strategy {
  next() {
    if (this.data.length === 1) this.log(this.datas.length + " feeds: " + this.datas.map(d => d.symbol + " " + d.close[0]).join(", "));
  }
}`), 0o644)
	var out, errb bytes.Buffer
	args := []string{"--strategy", strat, "--data", refData(t, "orcl.csv"), "--data", refData(t, "nvda.csv"), "--symbol", "ORACLE",
		"--from", "2005-01-03", "--to", "2005-12-30", "--json"}
	if err := runLocal(context.Background(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if want := "2 feeds: ORACLE 13.41, nvda 7.86"; !strings.Contains(errb.String(), want) {
		t.Errorf("log %q lacks %q", errb.String(), want)
	}
	var v struct {
		Symbol  string   `json:"symbol"`
		Symbols []string `json:"symbols"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Symbol != "ORACLE" || strings.Join(v.Symbols, ",") != "ORACLE,nvda" {
		t.Errorf("symbols %+v (%v)", v, err)
	}
}

func TestRunBenchSmall(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runBench(context.Background(), []string{"--bars", "20000"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bars/s", "peak heap"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
