package bias

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

func TestCuts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want []int
	}{
		{5000, []int{312, 625, 1250, 2500, 3750, 4999}},
		{16, []int{2, 4, 8, 12, 15}},
		{3, []int{2}},
		{1, nil},
	}
	for _, tc := range tests {
		if got := Cuts(tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Cuts(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestCheckSynthetic drives Check with traces computed in Go: a prefix-stable line and a
// line of the next bar's value, and a decision taken on the future.
func TestCheckSynthetic(t *testing.T) {
	t.Parallel()
	feeds := []engine.Feed{{Symbol: "X", Bars: engine.RandomWalk(400, 1)}}
	run := func(future bool) RunFunc {
		return func(_ context.Context, fs []engine.Feed, _ map[int64]bool) (*Trace, error) {
			bars := fs[0].Bars
			n := len(bars)
			times := make([]int64, n)
			past, next := make([]float64, n), make([]float64, n)
			tr := &Trace{}
			for i, b := range bars {
				times[i] = b.Time.UnixNano()
				past[i] = b.Close
				if i > 0 {
					past[i] += bars[i-1].Close
				}
				next[i] = math.NaN()
				if i+1 < n {
					next[i] = bars[i+1].Close
				}
				if future && i+1 < n && bars[i+1].Close > b.Close {
					tr.Decisions = append(tr.Decisions, Decision{Time: times[i], Text: "buy"})
				}
			}
			tr.Times = [][]int64{times}
			tr.Lines = []Line{{Name: "this.past", Call: "ind.Compute", Vals: past}}
			if future {
				tr.Lines = append(tr.Lines, Line{Name: "this.next", Call: "ind.Compute", Vals: next})
			}
			return tr, nil
		}
	}
	rep, err := Check(context.Background(), feeds, run(false))
	if err != nil || rep.Lookahead || rep.Cuts != 6 || len(rep.Warmup) != 1 || rep.Warmup[0].Bars != 1 {
		t.Fatalf("causal: %v %+v", err, rep)
	}
	rep, err = Check(context.Background(), feeds, run(true))
	if err != nil || !rep.Lookahead {
		t.Fatalf("biased: %v %+v", err, rep)
	}
	var what []string
	for _, f := range rep.Findings {
		what = append(what, f.What)
	}
	if !slices.Contains(what, "this.next") || slices.Contains(what, "this.past") {
		t.Errorf("findings %v", what)
	}
	if f := rep.Findings[0]; f.Bar != f.CutAt-1 || f.Cut != "NaN" {
		t.Errorf("first finding %+v: want the bar before the cut, NaN in the cut run", f)
	}
}

// TestCheckReads: a read of a later bar that the full run saw is a finding at the bar it
// was made, whatever the cuts see; the first feed's bars before the bar read are its
// cut_at, also when the array is of another feed.
func TestCheckReads(t *testing.T) {
	t.Parallel()
	a, b := engine.RandomWalk(400, 1), engine.RandomWalk(200, 2)
	for i := range b { // the second feed's bars fall on every other bar of the first
		b[i].Time = a[2*i].Time
	}
	feeds := []engine.Feed{{Symbol: "A", Bars: a}, {Symbol: "B", Bars: b}}
	tests := []struct {
		name       string
		read       Read
		cutAt      int
		detailPart string
	}{
		{"first feed, five ahead", Read{What: "ind.Compute input at code line 2", Call: "ind.Compute", Bar: 41, Time: a[41].Time.UnixNano(),
			Index: 46, IndexTime: a[46].Time.UnixNano(), Value: "101.5", Where: "next() at code line 3"}, 46, "next() at code line 3 read bar 46 (" + a[46].Time.Format(time.DateOnly) + "), 5 bars ahead"},
		{"second feed, the next bar", Read{What: "ind.Compute input 2 at code line 4", Call: "ind.Compute", Feed: 1, Bar: 10, Time: b[10].Time.UnixNano(),
			Index: 11, IndexTime: b[11].Time.UnixNano(), Value: "99", Where: "init() at code line 4"}, 22, "read bar 11 (" + b[11].Time.Format(time.DateOnly) + "), the next bar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := func(_ context.Context, fs []engine.Feed, _ map[int64]bool) (*Trace, error) {
				tr := &Trace{}
				for _, f := range fs {
					ts := make([]int64, len(f.Bars))
					for i, x := range f.Bars {
						ts[i] = x.Time.UnixNano()
					}
					tr.Times = append(tr.Times, ts)
				}
				if len(fs[0].Bars) == len(a) { // the full run saw it
					tr.Reads = []Read{tc.read}
				}
				return tr, nil
			}
			rep, err := Check(context.Background(), feeds, run)
			if err != nil || !rep.Lookahead || len(rep.Findings) != 1 {
				t.Fatalf("%v %+v", err, rep)
			}
			f := rep.Findings[0]
			if f.Kind != "read" || f.What != tc.read.What || f.Call != "ind.Compute" || f.Bar != tc.read.Bar || !f.Time.Equal(time.Unix(0, tc.read.Time)) ||
				f.CutAt != tc.cutAt || f.Full != tc.read.Value || f.Cut != "undefined" || !strings.Contains(f.Detail, tc.detailPart) {
				t.Errorf("finding %+v, want cut_at %d and %q in the detail", f, tc.cutAt, tc.detailPart)
			}
		})
	}
}
