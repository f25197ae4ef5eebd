// Package rundiff compares two backtest runs: whether their results are identical to the
// bit, what in their provenance explains a difference (parameters, code with its text diff,
// data down to the first changed bar, settings, engine), the first bar where their orders,
// positions or equity part, their trades matched by symbol and entry time, and the deltas
// of their summary figures. It is pure: callers load the runs.
package rundiff

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/provenance"
)

// Run is one side of a comparison.
type Run struct {
	ID         string
	Provenance *provenance.Provenance // nil: not recorded (a run from before provenance was kept)
	Code       string                 // the strategy version's code text ("" when unknown)
	// Prints are the stored per-bar prints of the run's feeds by their sha256 (missing ones
	// make a data cause less precise, not wrong).
	Prints     map[string][]provenance.Print
	Summary    map[string]*float64 // the summary figures by name; nil values are undefined
	Equity     []engine.EquityPoint
	Executions []engine.Execution
	Trades     []engine.Trade
	Zone       *time.Location // where dates are named (nil: UTC)
}

// Diff is the answer of Compare.
type Diff struct {
	// Identical: equal summary, trades, fills and equity, to the bit.
	Identical       bool             `json:"identical"`
	Causes          []string         `json:"causes"`
	CodeDiff        string           `json:"code_diff"` // unified diff of a's code to b's; "" when equal
	FirstDivergence *Divergence      `json:"first_divergence"`
	Trades          Trades           `json:"trades"`
	Summary         map[string]Delta `json:"summary"`
	Equity          EquityDifference `json:"equity"`
}

// Divergence is the first bar where two runs differ.
type Divergence struct {
	Bar  int       `json:"bar"` // 1-based index in a's equity curve
	Time time.Time `json:"time"`
	Date string    `json:"date"` // in the run's zone
	What string    `json:"what"` // "orders" (fills), "positions" or "equity"
}

// Trades are the round trips of a and b matched by symbol and entry time.
type Trades struct {
	OnlyA   []engine.Trade `json:"only_a"`
	OnlyB   []engine.Trade `json:"only_b"`
	Changed []TradePair    `json:"changed"`
	Same    int            `json:"same"`
}

// TradePair is a trade entered at the same time on the same symbol in both runs, different.
type TradePair struct {
	A engine.Trade `json:"a"`
	B engine.Trade `json:"b"`
}

// Delta is one summary figure of both runs; Delta is b - a (nil when either is undefined).
type Delta struct {
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Delta *float64 `json:"delta"`
}

// EquityDifference is b's equity less a's, bar by bar (matched by time), sampled.
type EquityDifference struct {
	MaxAbs float64 `json:"max_abs"`
	// Largest is the difference of that size with its sign (b − a): a page that shows
	// "largest" shows which run was ahead, −120.33 rather than 120.33.
	Largest float64       `json:"largest"`
	Final   float64       `json:"final"`
	Points  []EquityPoint `json:"points"` // at most MaxEquityPoints, evenly spaced
}

// EquityPoint is the equity of both runs at one bar.
type EquityPoint struct {
	Time time.Time `json:"time"`
	A    float64   `json:"a"`
	B    float64   `json:"b"`
}

// MaxEquityPoints bounds EquityDifference.Points.
const MaxEquityPoints = 500

// Compare compares a with b.
func Compare(a, b Run) Diff {
	d := Diff{Causes: []string{}, Summary: map[string]Delta{}}
	d.Trades = matchTrades(a.Trades, b.Trades)
	d.FirstDivergence = firstDivergence(a, b)
	var sumSame bool
	d.Summary, sumSame = summaryDeltas(a.Summary, b.Summary)
	d.Equity = equityDifference(a.Equity, b.Equity)
	d.Identical = sumSame && d.FirstDivergence == nil && len(d.Trades.OnlyA) == 0 && len(d.Trades.OnlyB) == 0 &&
		len(d.Trades.Changed) == 0 && len(a.Equity) == len(b.Equity) && len(a.Executions) == len(b.Executions)
	d.Causes = Causes(a, b)
	if a.Code != b.Code && a.Code != "" && b.Code != "" {
		d.CodeDiff = CodeDiff(a, b)
	}
	if !d.Identical && len(d.Causes) == 0 {
		d.Causes = append(d.Causes, "results differ though the provenance is the same")
	}
	return d
}

// Causes names what differs between the runs' provenance, most telling first: parameters,
// code, data, settings, engine.
func Causes(a, b Run) []string {
	out := []string{}
	pa, pb := a.Provenance, b.Provenance
	switch {
	case pa == nil && pb == nil:
		return append(out, fmt.Sprintf("provenance: not recorded for %s nor %s", a.ID, b.ID))
	case pa == nil:
		return append(out, fmt.Sprintf("provenance: not recorded for %s", a.ID))
	case pb == nil:
		return append(out, fmt.Sprintf("provenance: not recorded for %s", b.ID))
	}
	out = append(out, paramCauses(pa.Parameters, pb.Parameters)...)
	if pa.CodeSHA256 != pb.CodeSHA256 || pa.Settings.StrategyID != pb.Settings.StrategyID || pa.Settings.StrategyVersion != pb.Settings.StrategyVersion {
		c := fmt.Sprintf("code: %s v%d → %s v%d", pa.Settings.StrategyID, pa.Settings.StrategyVersion, pb.Settings.StrategyID, pb.Settings.StrategyVersion)
		if pa.CodeSHA256 == pb.CodeSHA256 {
			c += " (same code text)"
		} else {
			c += fmt.Sprintf(" (sha256 %s → %s)", short(pa.CodeSHA256), short(pb.CodeSHA256))
		}
		out = append(out, c)
	}
	out = append(out, dataCauses(a, b)...)
	out = append(out, settingCauses(pa.Settings, pb.Settings)...)
	if pa.EngineVersion != pb.EngineVersion {
		out = append(out, fmt.Sprintf("engine: %s → %s", pa.EngineVersion, pb.EngineVersion))
	}
	return out
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

func paramCauses(a, b map[string]any) []string {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("parameters: %s: (none) → %s", k, show(vb)))
		case !inB:
			out = append(out, fmt.Sprintf("parameters: %s: %s → (none)", k, show(va)))
		case !reflect.DeepEqual(va, vb):
			out = append(out, fmt.Sprintf("parameters: %s: %s → %s", k, show(va), show(vb)))
		}
	}
	return out
}

func show(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

func settingCauses(a, b provenance.Settings) []string {
	var out []string
	add := func(name, va, vb string) {
		if va != vb {
			out = append(out, fmt.Sprintf("settings: %s: %s → %s", name, va, vb))
		}
	}
	add("data_source", a.DataSource, b.DataSource)
	add("symbols", strings.Join(a.Symbols, ","), strings.Join(b.Symbols, ","))
	add("benchmark", a.Benchmark, b.Benchmark)
	add("timeframe", a.Timeframe, b.Timeframe)
	add("timezone", a.Timezone, b.Timezone)
	add("start_date", a.StartDate, b.StartDate)
	add("end_date", a.EndDate, b.EndDate)
	add("initial_cash", show(a.InitialCash), show(b.InitialCash))
	add("commission", show(a.Commission), show(b.Commission))
	return out
}

// dataCauses compares the feeds of both runs by symbol and timeframe.
func dataCauses(a, b Run) []string {
	var out []string
	type key struct{ sym, tf string }
	bFeeds := map[key]provenance.Feed{}
	for _, f := range b.Provenance.Data {
		bFeeds[key{f.Symbol, f.Timeframe}] = f
	}
	seen := map[key]bool{}
	for _, fa := range a.Provenance.Data {
		k := key{fa.Symbol, fa.Timeframe}
		seen[k] = true
		fb, ok := bFeeds[k]
		if !ok {
			out = append(out, fmt.Sprintf("data: %s %s read only by %s", fa.Symbol, fa.Timeframe, a.ID))
			continue
		}
		if fa.SHA256 == fb.SHA256 {
			continue
		}
		out = append(out, dataChange(a, b, fa, fb))
	}
	for _, fb := range b.Provenance.Data {
		if !seen[key{fb.Symbol, fb.Timeframe}] {
			out = append(out, fmt.Sprintf("data: %s %s read only by %s", fb.Symbol, fb.Timeframe, b.ID))
		}
	}
	return out
}

// dataChange describes how two reads of one series differ: from the stored per-bar prints
// when both are there, else from the counts and ends.
func dataChange(a, b Run, fa, fb provenance.Feed) string {
	pa, okA := a.Prints[fa.SHA256]
	pb, okB := b.Prints[fb.SHA256]
	zone := a.Zone
	if loc, err := time.LoadLocation(fa.Timezone); err == nil && fa.Timezone != "" {
		zone = loc
	}
	if okA && okB {
		c := provenance.ComparePrints(pa, pb)
		if c.Count() > 0 {
			var parts []string
			if c.Changed > 0 {
				parts = append(parts, plural(c.Changed, "bar differs", "bars differ"))
			}
			if c.Added > 0 {
				parts = append(parts, plural(c.Added, "bar added", "bars added"))
			}
			if c.Removed > 0 {
				parts = append(parts, plural(c.Removed, "bar removed", "bars removed"))
			}
			return fmt.Sprintf("data: %s changed: %s, first %s", fa.Symbol, strings.Join(parts, ", "), dateIn(c.First, zone))
		}
	}
	msg := fmt.Sprintf("data: %s changed: %d → %d bars", fa.Symbol, fa.Bars, fb.Bars)
	if fa.Bars == fb.Bars {
		msg = fmt.Sprintf("data: %s changed: same %d bars, different values", fa.Symbol, fa.Bars)
	}
	return msg + fmt.Sprintf(" (sha256 %s → %s)", short(fa.SHA256), short(fb.SHA256))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func dateIn(t time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	return t.In(zone).Format(time.DateOnly)
}

// CodeDiff is the unified diff of a's code to b's.
func CodeDiff(a, b Run) string {
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a.Code), B: difflib.SplitLines(b.Code),
		FromFile: a.ID, ToFile: b.ID, Context: 3,
	})
	if err != nil { // only a failed write to its in-memory buffer
		return ""
	}
	return text
}

// sameFloat is equality to the bit (NaN equals NaN of the same bits).
func sameFloat(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }

func samePtr(x, y *float64) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return sameFloat(*x, *y)
}

func summaryDeltas(a, b map[string]*float64) (map[string]Delta, bool) {
	out := map[string]Delta{}
	same := len(a) == len(b)
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			same = false
		}
		d := Delta{A: va, B: vb}
		if va != nil && vb != nil {
			v := *vb - *va
			d.Delta = &v
		}
		if !samePtr(va, vb) {
			same = false
		}
		out[k] = d
	}
	for k, vb := range b {
		if _, ok := a[k]; !ok {
			out[k] = Delta{B: vb}
		}
	}
	return out, same
}

func sameTrade(x, y engine.Trade) bool {
	return x.Symbol == y.Symbol && x.OpenTime.Equal(y.OpenTime) && sameTime(x.CloseTime, y.CloseTime) &&
		sameFloat(x.Size, y.Size) && sameFloat(x.EntryPrice, y.EntryPrice) && sameFloat(x.ExitPrice, y.ExitPrice) &&
		sameFloat(x.PnLGross, y.PnLGross) && sameFloat(x.PnLNet, y.PnLNet) && sameFloat(x.Commission, y.Commission) &&
		x.BarLen == y.BarLen && x.IsOpen == y.IsOpen
}

func sameTime(x, y *time.Time) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return x.Equal(*y)
}

// matchTrades pairs trades by symbol and entry time (in order, when several share both).
func matchTrades(a, b []engine.Trade) Trades {
	t := Trades{OnlyA: []engine.Trade{}, OnlyB: []engine.Trade{}, Changed: []TradePair{}}
	type key struct {
		sym  string
		open int64
	}
	byKey := map[key][]int{}
	for j, tb := range b {
		k := key{tb.Symbol, tb.OpenTime.UnixNano()}
		byKey[k] = append(byKey[k], j)
	}
	used := make([]bool, len(b))
	for _, ta := range a {
		k := key{ta.Symbol, ta.OpenTime.UnixNano()}
		js := byKey[k]
		if len(js) == 0 {
			t.OnlyA = append(t.OnlyA, ta)
			continue
		}
		j := js[0]
		byKey[k] = js[1:]
		used[j] = true
		if sameTrade(ta, b[j]) {
			t.Same++
		} else {
			t.Changed = append(t.Changed, TradePair{A: ta, B: b[j]})
		}
	}
	for j, tb := range b {
		if !used[j] {
			t.OnlyB = append(t.OnlyB, tb)
		}
	}
	return t
}

func sameExecution(x, y engine.Execution) bool {
	return x.Symbol == y.Symbol && x.Time.Equal(y.Time) && x.Side == y.Side && x.ExecType == y.ExecType &&
		sameFloat(x.Price, y.Price) && sameFloat(x.Size, y.Size) && sameFloat(x.Commission, y.Commission)
}

// firstDivergence walks both equity curves bar by bar with the fills made at each bar: the
// first bar whose fills differ in size (positions), in anything else (orders), or whose
// equity differs, is where the runs part. Nil when nothing differs.
func firstDivergence(a, b Run) *Divergence {
	n := max(len(a.Equity), len(b.Equity))
	ia, ib := 0, 0 // next fill of each run
	posA, posB := map[string]float64{}, map[string]float64{}
	for i := 0; i < n; i++ {
		var t time.Time
		switch {
		case i >= len(a.Equity):
			t = b.Equity[i].Time
		case i >= len(b.Equity):
			t = a.Equity[i].Time
		default:
			t = a.Equity[i].Time
			if b.Equity[i].Time.Before(t) {
				t = b.Equity[i].Time
			}
		}
		fa := fillsUpTo(a.Executions, &ia, t)
		fb := fillsUpTo(b.Executions, &ib, t)
		what := ""
		if !slices.EqualFunc(fa, fb, sameExecution) {
			what = "orders"
			for _, e := range fa {
				posA[e.Symbol] += e.Size
			}
			for _, e := range fb {
				posB[e.Symbol] += e.Size
			}
			if !maps.Equal(posA, posB) {
				what = "positions"
			}
		}
		if what == "" && (i >= len(a.Equity) || i >= len(b.Equity) || !a.Equity[i].Time.Equal(b.Equity[i].Time) ||
			!sameFloat(a.Equity[i].Value, b.Equity[i].Value)) {
			what = "equity"
		}
		if what != "" {
			return &Divergence{Bar: i + 1, Time: t, Date: dateIn(t, a.Zone), What: what}
		}
	}
	// Fills after the last bar (none in practice): they still make the runs differ.
	if !slices.EqualFunc(a.Executions[ia:], b.Executions[ib:], sameExecution) {
		last := a.Equity
		if len(b.Equity) > len(last) {
			last = b.Equity
		}
		d := &Divergence{Bar: len(last), What: "orders"}
		if len(last) > 0 {
			d.Time = last[len(last)-1].Time
			d.Date = dateIn(d.Time, a.Zone)
		}
		return d
	}
	return nil
}

// fillsUpTo returns the fills from *next made at or before t and moves *next past them.
func fillsUpTo(execs []engine.Execution, next *int, t time.Time) []engine.Execution {
	start := *next
	for *next < len(execs) && !execs[*next].Time.After(t) {
		*next++
	}
	return execs[start:*next]
}

func equityDifference(a, b []engine.EquityPoint) EquityDifference {
	var d EquityDifference
	n := min(len(a), len(b))
	step := max(1, (n+MaxEquityPoints-1)/MaxEquityPoints)
	d.Points = []EquityPoint{}
	for i := 0; i < n; i++ {
		diff := b[i].Value - a[i].Value
		if math.Abs(diff) > d.MaxAbs {
			d.MaxAbs, d.Largest = math.Abs(diff), diff
		}
		if i%step == 0 || i == n-1 {
			d.Points = append(d.Points, EquityPoint{Time: a[i].Time, A: a[i].Value, B: b[i].Value})
		}
	}
	if n > 0 {
		d.Final = b[n-1].Value - a[n-1].Value
	}
	return d
}
