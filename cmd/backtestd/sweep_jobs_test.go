package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestSweepSameWithAnyJobs: a study's report (every trial's figures, the overfitting
// statistics, the best's statistics) is the same to the last bit whatever --jobs is, and
// the same as the build before its runs shared a batch and its splits were computed in
// parallel (main at 82576d6: testdata/sweep-82576d6*.json, its --json output less the time).
// The files were written again when each figure got one owner (docs/backtests.md, "What each
// figure means"): the win rate over closed trades, the drawdown duration from peak to
// recovery and the statistics unrounded changed those figures and, through the unrounded
// annual volatility, the second study's objective; every other figure is the same to the bit.
func TestSweepSameWithAnyJobs(t *testing.T) {
	t.Parallel()
	data := refData(t, "orcl.csv")
	for _, tt := range []struct {
		name, golden string
		args         []string
	}{
		{"sharpe, 48 combinations", "sweep-82576d6.json",
			[]string{"--param", "fast=2:51:7", "--param", "slow=60:250:38", "--set", "size=20", "--blocks", "10"}},
		{"a statistic, minimised", "sweep-82576d6-volatility.json",
			[]string{"--param", "fast=5:50:15", "--param", "slow=60:250:95", "--objective", "annual_volatility", "--minimize", "--blocks", "8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			report := func(jobs int) string {
				args := append([]string{"--strategy", "../../examples/sma_cross.js", "--data", data, "--from", "2000-01-01", "--to", "2009-12-31",
					"--jobs", fmt.Sprint(jobs), "--json"}, tt.args...)
				var out, errb bytes.Buffer
				if err := runSweep(context.Background(), args, &out, &errb); err != nil {
					t.Fatal(err, errb.String())
				}
				return withoutSeconds(out.String())
			}
			one := report(1)
			for _, jobs := range []int{2, 7, 16} {
				if got := report(jobs); got != one {
					t.Errorf("--jobs %d reports otherwise than --jobs 1:\n%s", jobs, firstDifference(got, one))
				}
			}
			// Float operations are exact to the bit on amd64, where the file was written; other
			// architectures may fuse a multiply and an add.
			if runtime.GOARCH != "amd64" {
				return
			}
			want, err := os.ReadFile(filepath.Join("testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameAsBefore(one, string(want)); err != nil {
				t.Errorf("the report differs from the build before's (%s): %v", tt.golden, err)
			}
		})
	}
}

// withoutSeconds is a --json report less its "seconds" line, the one figure that varies.
func withoutSeconds(s string) string {
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), `"seconds":`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// firstDifference is the first line where got and want differ, with its number.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: %q, want %q", i+1, gl, wl)
		}
	}
	return "(none)"
}

// TestSweepFirstFails: a strategy that throws on the first combination, or an unknown
// objective, stops the study with its error whatever --jobs is, the runs started beside
// the first cancelled.
func TestSweepFirstFails(t *testing.T) {
	t.Parallel()
	data := refData(t, "orcl.csv")
	strategy := filepath.Join(t.TempDir(), "throws.js")
	code := "class T extends Strategy {\n  static params = { n: 1 };\n  next() { if (this.p.n === 1) throw new Error('one'); }\n}\n"
	if err := os.WriteFile(strategy, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []string{"1", "4"} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--param", "n=1:40:1"}, "the first combination (map[n:1]) fails: Error: one"},
			{[]string{"--param", "n=2:40:1", "--objective", "luck"}, `unknown objective "luck"`},
		} {
			args := append([]string{"--strategy", strategy, "--data", data, "--to", "2001-12-31", "--jobs", jobs}, tt.args...)
			err := runSweep(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("--jobs %s %v: %v, want an error with %q", jobs, tt.args, err, tt.want)
			}
		}
	}
}

// sameAsBefore compares a --json report with the build before's on everything that build
// reported, to the bit (JSON numbers decode to the same float64): statistics groups added
// since (the Risk group) are left out of the comparison.
func sameAsBefore(got, want string) error {
	var g, w map[string]any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("decode the report: %w", err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("decode the golden report: %w", err)
	}
	groups := func(m map[string]any) ([]any, map[string]any) {
		bs, _ := m["best_statistics"].(map[string]any)
		gs, _ := bs["groups"].([]any)
		return gs, bs
	}
	had := map[any]bool{}
	wg, _ := groups(w)
	for _, x := range wg {
		had[x.(map[string]any)["name"]] = true
	}
	if gg, bs := groups(g); bs != nil {
		var kept []any
		for _, x := range gg {
			if had[x.(map[string]any)["name"]] {
				kept = append(kept, x)
			}
		}
		bs["groups"] = kept
	}
	for k := range w {
		if !reflect.DeepEqual(g[k], w[k]) {
			return fmt.Errorf("%q differs", k)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok && k != "seconds" {
			return fmt.Errorf("%q is new", k)
		}
	}
	return nil
}
