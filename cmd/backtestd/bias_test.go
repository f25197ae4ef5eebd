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
