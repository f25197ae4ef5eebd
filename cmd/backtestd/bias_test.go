package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/bias"
)

func TestBiasCommand(t *testing.T) {
	t.Parallel()
	future := filepath.Join(t.TempDir(), "future.js")
	code := `class Future extends Strategy {
  init() { this.sig = ind.Compute(this.data.close, c => c.map((_, i) => c[i + 1])); }
  next() {
    if (this.position.size === 0 && this.sig[0] > this.data.close[0]) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.sig[0] < this.data.close[0]) this.close();
  }
}`
	if err := os.WriteFile(future, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	data := refData(t, "orcl.csv")
	tests := []struct {
		name, strategy string
		json, flagged  bool
		want           string
	}{
		{"biased, text", future, false, true, "this.sig (ind.Compute): first at bar"},
		{"biased, JSON", future, true, true, `"lookahead": true`},
		{"clean, text", "../../examples/sma_cross.js", false, false, "no look-ahead"},
		{"clean, JSON", "../../examples/sma_cross.js", true, false, `"lookahead": false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"--strategy", tc.strategy, "--data", data, "--from", "2000-01-01", "--to", "2004-12-31", "--param", "size=3"}
			if tc.strategy == future {
				args = args[:len(args)-2]
			}
			if tc.json {
				args = append(args, "--json")
			}
			var out, errb bytes.Buffer
			err := runBias(context.Background(), args, &out, &errb)
			if tc.flagged != errors.Is(err, errLookahead) || (!tc.flagged && err != nil) {
				t.Fatalf("error %v, want flagged %v (%s)", err, tc.flagged, errb.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out.String())
			}
			if tc.json {
				var rep struct {
					Lookahead bool `json:"lookahead"`
					Findings  []struct {
						What string `json:"what"`
						Bar  int    `json:"bar"`
					} `json:"findings"`
					Cuts int `json:"cuts"`
				}
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Cuts != 6 || rep.Lookahead != tc.flagged || (tc.flagged && (len(rep.Findings) == 0 || rep.Findings[0].What != "this.sig")) {
					t.Errorf("report %+v", rep)
				}
			}
		})
	}
	var out, errb bytes.Buffer
	if err := runBias(context.Background(), []string{"--data", data}, &out, &errb); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("missing --strategy: %v", err)
	}
}

// TestPrintBiasCounts: every count agrees with its noun, one or many.
func TestPrintBiasCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rep  bias.Report
		want []string
	}{
		{"one of each", bias.Report{Lookahead: true, Findings: []bias.Finding{{What: "this.sig", Kind: "line"}}, Cuts: 1, CutBars: []int{5}, Bars: 1, Lines: 1, Runs: 1},
			[]string{": 1 bar, 1 cut at bar [5], 1 line compared", "LOOK-AHEAD: 1 value reads bars after the bar it was computed for"}},
		{"several", bias.Report{Lookahead: true, Findings: []bias.Finding{{What: "a", Kind: "line"}, {What: "b", Kind: "line"}}, Cuts: 2, CutBars: []int{5, 9}, Bars: 2500, Lines: 3, Runs: 2.5},
			[]string{": 2,500 bars, 2 cuts at bars [5 9], 3 lines compared", "LOOK-AHEAD: 2 values read bars after the bar they were computed for"}},
		{"a read says where it was made", bias.Report{Lookahead: true, Findings: []bias.Finding{{What: "ind.Compute input at code line 2", Kind: "read", Bar: 41, CutAt: 46, Full: "107.3", Cut: "undefined",
			Detail: "at bar 41 (1970-02-11), next() at code line 3 read bar 46 (1970-02-16), 5 bars ahead"}}, Cuts: 1, CutBars: []int{5}, Bars: 100, Lines: 1, Runs: 1},
			[]string{"read   ind.Compute input at code line 2: at bar 41 (1970-02-11), next() at code line 3 read bar 46 (1970-02-16), 5 bars ahead (value 107.3)"}},
		{"clean", bias.Report{Cuts: 1, CutBars: []int{5}, Bars: 100, Lines: 1, Runs: 1},
			[]string{"no look-ahead: every line, order and state before each cut equals the full run's, and no code read an ind.Compute input ahead of its bar"}},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		printBias(&out, "S", "X", &tc.rep, 0)
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
		for _, bad := range []string{"1 lines", "1 bars", "1 cuts", "things"} {
			if strings.Contains(out.String(), bad) {
				t.Errorf("%s: output says %q:\n%s", tc.name, bad, out.String())
			}
		}
	}
}
