package rundiff

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/provenance"
)

func day(i int) time.Time { return time.Date(2003, 7, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }

func ptr(v float64) *float64 { return &v }

// base is a run of 10 bars: one buy at bar 2, a sell at bar 5, one round trip.
func base(id string) Run {
	bars := make([]engine.Bar, 10)
	eq := make([]engine.EquityPoint, 10)
	for i := range bars {
		bars[i] = engine.Bar{Time: day(i), Open: 100 + float64(i), High: 101 + float64(i), Low: 99 + float64(i), Close: 100 + float64(i), Volume: 10}
		eq[i] = engine.EquityPoint{Time: day(i), Value: 1000 + float64(i)}
	}
	fp := provenance.FingerprintOf(bars)
	closed := day(5)
	return Run{
		ID: id, Code: "class S extends Strategy {\n  next() {}\n}\n",
		Provenance: &provenance.Provenance{
			CodeSHA256: "c1", EngineVersion: "v1.4.0",
			Data:       []provenance.Feed{provenance.FeedOf("PROVX", "1d", "UTC", bars, fp)},
			Settings:   provenance.Settings{StrategyID: "str_1", StrategyVersion: 1, Symbols: []string{"PROVX"}, Commission: 0.001, InitialCash: 1000},
			Parameters: map[string]any{"fast": float64(10), "slow": float64(30)},
		},
		Prints:  map[string][]provenance.Print{fp.SHA256: fp.Prints},
		Summary: map[string]*float64{"final_value": ptr(1009), "sharpe_ratio": nil},
		Equity:  eq,
		Executions: []engine.Execution{
			{Symbol: "PROVX", Time: day(2), Side: "buy", Price: 102, Size: 1},
			{Symbol: "PROVX", Time: day(5), Side: "sell", Price: 105, Size: -1},
		},
		Trades: []engine.Trade{{Symbol: "PROVX", OpenTime: day(2), CloseTime: &closed, Size: 1, EntryPrice: 102, ExitPrice: 105, PnLNet: 3}},
	}
}

// changedBar is base with bar i's close raised, its fingerprint redone.
func changedBar(r Run, i int) Run {
	bars := make([]engine.Bar, 10)
	for j := range bars {
		bars[j] = engine.Bar{Time: day(j), Open: 100 + float64(j), High: 101 + float64(j), Low: 99 + float64(j), Close: 100 + float64(j), Volume: 10}
	}
	bars[i].Close += 0.5
	fp := provenance.FingerprintOf(bars)
	p := *r.Provenance
	p.Data = []provenance.Feed{provenance.FeedOf("PROVX", "1d", "UTC", bars, fp)}
	r.Provenance = &p
	r.Prints = map[string][]provenance.Print{fp.SHA256: fp.Prints}
	return r
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		b         func() Run
		identical bool
		causes    []string
		div       string // "date what"; "" none
		onlyA     int
		onlyB     int
		changed   int
	}{
		{name: "same", b: func() Run { return base("b") }, identical: true, causes: []string{}},
		{name: "parameter", b: func() Run {
			r := base("b")
			r.Provenance.Parameters = map[string]any{"fast": float64(12), "slow": float64(30)}
			return r
		}, identical: true, causes: []string{"parameters: fast: 10 → 12"}},
		{name: "engine and settings", b: func() Run {
			r := base("b")
			r.Provenance.EngineVersion = "v1.5.0"
			r.Provenance.Settings.Commission = 0.002
			return r
		}, identical: true, causes: []string{"settings: commission: 0.001 → 0.002", "engine: v1.4.0 → v1.5.0"}},
		{name: "one bar changed, equity differs", b: func() Run {
			r := changedBar(base("b"), 4)
			r.Equity = slices.Clone(r.Equity)
			r.Equity[4].Value += 0.5
			r.Summary = map[string]*float64{"final_value": ptr(1009), "sharpe_ratio": nil}
			return r
		}, causes: []string{"data: PROVX changed: 1 bar differs, first 2003-07-05"}, div: "2003-07-05 equity"},
		{name: "a later fill: orders, then a changed trade", b: func() Run {
			r := base("b")
			r.Executions = slices.Clone(r.Executions)
			r.Executions[1].Time, r.Executions[1].Price = day(6), 106
			closed := day(6)
			r.Trades = []engine.Trade{{Symbol: "PROVX", OpenTime: day(2), CloseTime: &closed, Size: 1, EntryPrice: 102, ExitPrice: 106, PnLNet: 4}}
			return r
		}, causes: []string{"results differ though the provenance is the same"}, div: "2003-07-06 positions", changed: 1},
		{name: "another entry", b: func() Run {
			r := base("b")
			r.Executions = []engine.Execution{{Symbol: "PROVX", Time: day(3), Side: "buy", Price: 103, Size: 1}, r.Executions[1]}
			closed := day(5)
			r.Trades = []engine.Trade{{Symbol: "PROVX", OpenTime: day(3), CloseTime: &closed, Size: 1, EntryPrice: 103, ExitPrice: 105, PnLNet: 2}}
			return r
		}, causes: []string{"results differ though the provenance is the same"}, div: "2003-07-03 positions", onlyA: 1, onlyB: 1},
		{name: "no provenance", b: func() Run {
			r := base("b")
			r.Provenance = nil
			return r
		}, identical: true, causes: []string{"provenance: not recorded for b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(base("a"), tc.b())
			if d.Identical != tc.identical {
				t.Errorf("identical %v", d.Identical)
			}
			if !slices.Equal(d.Causes, tc.causes) {
				t.Errorf("causes %q, want %q", d.Causes, tc.causes)
			}
			div := ""
			if d.FirstDivergence != nil {
				div = d.FirstDivergence.Date + " " + d.FirstDivergence.What
			}
			if div != tc.div {
				t.Errorf("first divergence %q, want %q", div, tc.div)
			}
			if len(d.Trades.OnlyA) != tc.onlyA || len(d.Trades.OnlyB) != tc.onlyB || len(d.Trades.Changed) != tc.changed {
				t.Errorf("trades %+v", d.Trades)
			}
		})
	}
}

func TestCodeDiff(t *testing.T) {
	a, b := base("task_1"), base("task_2")
	b.Code = strings.Replace(a.Code, "next() {}", "next() { this.buy(); }", 1)
	b.Provenance.CodeSHA256 = "c2"
	b.Provenance.Settings.StrategyVersion = 2
	d := Compare(a, b)
	if !slices.Contains(d.Causes, "code: str_1 v1 → str_1 v2 (sha256 c1 → c2)") {
		t.Errorf("causes %q", d.Causes)
	}
	for _, want := range []string{"--- task_1", "+++ task_2", "-  next() {}", "+  next() { this.buy(); }"} {
		if !strings.Contains(d.CodeDiff, want) {
			t.Errorf("code diff lacks %q:\n%s", want, d.CodeDiff)
		}
	}
}

func TestSummaryDeltas(t *testing.T) {
	a, b := base("a"), base("b")
	b.Summary = map[string]*float64{"final_value": ptr(1012.5), "sharpe_ratio": ptr(1)}
	d := Compare(a, b)
	if fv := d.Summary["final_value"]; fv.Delta == nil || *fv.Delta != 3.5 {
		t.Errorf("final_value %+v", fv)
	}
	if sr := d.Summary["sharpe_ratio"]; sr.Delta != nil || sr.B == nil {
		t.Errorf("sharpe_ratio %+v", sr)
	}
	if d.Identical {
		t.Error("different summaries are not identical")
	}
}

func TestComparePrints(t *testing.T) {
	p := func(ts ...int64) []provenance.Print {
		out := make([]provenance.Print, len(ts))
		for i, x := range ts {
			out[i] = provenance.Print{Time: x * int64(time.Hour*24), Hash: uint64(x)}
		}
		return out
	}
	changed := p(1, 2, 3)
	changed[1].Hash = 99
	tests := []struct {
		name                    string
		old, cur                []provenance.Print
		changed, added, removed int
		first                   int64
	}{
		{"same", p(1, 2, 3), p(1, 2, 3), 0, 0, 0, 0},
		{"changed", p(1, 2, 3), changed, 1, 0, 0, 2},
		{"added at the end", p(1, 2), p(1, 2, 3), 0, 1, 0, 3},
		{"removed at the start", p(1, 2, 3), p(2, 3), 0, 0, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := provenance.ComparePrints(tc.old, tc.cur)
			if c.Changed != tc.changed || c.Added != tc.added || c.Removed != tc.removed {
				t.Fatalf("%+v", c)
			}
			if tc.first > 0 && !c.First.Equal(time.Unix(0, tc.first*int64(time.Hour*24)).UTC()) {
				t.Errorf("first %v", c.First)
			}
		})
	}
}

// TestLargestKeepsItsSign: the largest equity difference keeps its sign, b − a.
func TestLargestKeepsItsSign(t *testing.T) {
	for _, tt := range []struct {
		name  string
		shift []float64 // added to b's equity, bar by bar
		want  float64
	}{
		{"b behind", []float64{0, -5, -120.33, -7, 2}, -120.33},
		{"b ahead", []float64{0, 5, 120.33, -7, 2}, 120.33},
		{"equal", nil, 0},
	} {
		a, b := base("a"), base("b")
		b.Equity = slices.Clone(b.Equity)
		for i, s := range tt.shift {
			b.Equity[i].Value += s
		}
		d := Compare(a, b).Equity
		if math.Abs(d.Largest-tt.want) > 1e-9 || math.Abs(d.MaxAbs-math.Abs(tt.want)) > 1e-9 {
			t.Errorf("%s: largest %v, max_abs %v, want %v", tt.name, d.Largest, d.MaxAbs, tt.want)
		}
	}
}
