// Package bias detects look-ahead in a strategy exactly, by using the engine's
// determinism: a strategy that reads only the past computes, on the first c bars of its
// data, exactly what it computes on all of them at those bars. Check runs the strategy on
// the whole data and on the data cut at a few points (each run only up to its cut), and
// compares every line (indicator) value, every order decision and the strategy's own
// primitive state before each cut with the full run. Any difference proves that something
// before the cut depended on bars after it; the finding names it (the line, "orders" or the
// state property) and the first bar where it differs. Nothing is estimated, so a causal
// strategy is never flagged (as long as it does not read the wall clock).
//
// Check also reports warm-up sensitivity, as information: a run started later, compared
// with the full run, tells how many bars each line needs before it no longer depends on
// where the data starts (an EMA converges, an SMA is exact after its period).
//
// The package is pure: it plans the cuts and compares traces. Running the strategy and
// recording a Trace is the caller's (internal/jsrt), given as a RunFunc.
package bias

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// Line is one line a run made (an indicator, a custom indicator or line arithmetic), in
// the order the strategy made them.
type Line struct {
	Name string // how the strategy holds it: "this.fut", "this.bb.top"; "" when it keeps none
	Call string // what made it: "ind.Compute"
	At   int    // the line of the strategy's code that made it (0: unknown)
	Feed int    // the feed of the run it belongs to
	Vals []float64
}

// label is how a finding or warm-up entry names l.
func (l Line) label(k int) string {
	if l.Name != "" {
		return l.Name
	}
	s := fmt.Sprintf("%s (line #%d)", l.Call, k+1)
	if l.At > 0 {
		s = fmt.Sprintf("%s at code line %d", l.Call, l.At)
	}
	return s
}

// Decision is something the strategy did at a step: an order it created or cancelled.
type Decision struct {
	Time int64 // the step's time, Unix nanoseconds
	Text string
}

// State is the strategy's own primitive properties (numbers, strings, booleans) after the
// step at Time.
type State struct {
	Time  int64
	Props map[string]string
}

// Read is a read of a bar after the current one, seen as it happened: an element of an
// array the run handed the strategy (ind.Compute's input), read by code that runs at a
// bar (next(), a notification, an ind.Apply function) rather than by the function that
// computes a line over the whole series.
type Read struct {
	What  string // the array: "ind.Compute input at code line 3"
	Call  string // what handed it to the strategy: "ind.Compute"
	Feed  int
	Bar   int   // the current bar when it was read (of Feed)
	Time  int64 // and its time, Unix nanoseconds
	Index int   // the bar read (of Feed)
	// IndexTime is the time of the bar read, Unix nanoseconds.
	IndexTime int64
	Value     string // what was read
	Where     string // what read it: "next() at code line 12"
}

// Trace is what one run recorded.
type Trace struct {
	Times     [][]int64 // per feed of the run (resampled ones included), when each bar was delivered
	Lines     []Line
	Decisions []Decision // in the order they were made
	States    []State    // at the watched steps
	Reads     []Read     // the first read of a later bar, per array the run watched
}

// RunFunc runs the strategy on feeds and returns its trace, with the strategy's state
// recorded after each step whose time is in watch.
type RunFunc func(ctx context.Context, feeds []engine.Feed, watch map[int64]bool) (*Trace, error)

// Finding is one thing that read the future.
type Finding struct {
	Kind string `json:"kind"` // "line", "orders", "state", "read" or "error"
	// What is the line's name, "orders", "this.<property>", the array read ("ind.Compute
	// input at code line 3") or the cut run's error.
	What string `json:"what"`
	Call string `json:"call,omitempty"`
	// Bar is the first bar (0-based, of the line's feed; of the first feed for orders and
	// state) where the cut run differs from the full run, and Time its time. For a read,
	// the bar (of the array's feed) at which a later bar was read.
	Bar  int       `json:"bar"`
	Time time.Time `json:"time"`
	// CutAt: the cut run had the first CutAt bars of the first feed. For a read, the bars
	// of the first feed before the bar read: a run cut there has nothing to read (Cut).
	CutAt  int    `json:"cut_at"`
	Full   string `json:"full"` // the value (or decision) in the full run
	Cut    string `json:"cut"`  // and in the cut run
	Detail string `json:"detail"`
}

// Warmup is how long one line depends on where the data starts.
type Warmup struct {
	What string `json:"what"`
	Call string `json:"call,omitempty"`
	// Bars is how many bars from a later start until the line agrees (to 1e-9 of its scale)
	// with the full run from then on; when Converged is false it never did, in Bars bars.
	Bars      int  `json:"bars"`
	Converged bool `json:"converged"`
}

// Report is the verdict of a check.
type Report struct {
	Lookahead bool      `json:"lookahead"`
	Findings  []Finding `json:"findings"`
	Cuts      int       `json:"cuts"`
	CutBars   []int     `json:"cut_bars"` // where the first feed was cut (bars kept)
	Bars      int       `json:"bars"`     // of the first feed
	// Warmup is information, not look-ahead: per line, bars until it stops depending on
	// where the data starts (measured from a start at WarmupStart).
	Warmup      []Warmup `json:"warmup"`
	WarmupStart int      `json:"warmup_start"`
	Lines       int      `json:"lines"` // lines compared
	// Runs is the work done, in bars run over the full run's: 1 is one single run.
	Runs float64 `json:"runs"`
}

// watchBars is how many steps before each cut the strategy's state is compared.
const watchBars = 16

// Cuts is where a series of n bars is cut: a few points spread over it, denser near the
// start (where a short run is cheap), and the last bar (so that a value read from the very
// end of the history is seen). Each run goes only up to its cut, so all of them together
// cost less than three full runs.
func Cuts(n int) []int {
	var out []int
	for _, c := range []int{n / 16, n / 8, n / 4, n / 2, 3 * n / 4, n - 1} {
		if c >= 2 && c < n && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// cut is feeds with only the bars before t.
func cut(feeds []engine.Feed, t time.Time) []engine.Feed {
	out := make([]engine.Feed, len(feeds))
	for k, f := range feeds {
		i := sort.Search(len(f.Bars), func(i int) bool { return !f.Bars[i].Time.Before(t) })
		out[k] = engine.Feed{Symbol: f.Symbol, Bars: f.Bars[:i:i]}
	}
	return out
}

// from is feeds with only the bars at t or later.
func from(feeds []engine.Feed, t time.Time) []engine.Feed {
	out := make([]engine.Feed, len(feeds))
	for k, f := range feeds {
		i := sort.Search(len(f.Bars), func(i int) bool { return !f.Bars[i].Time.Before(t) })
		out[k] = engine.Feed{Symbol: f.Symbol, Bars: f.Bars[i:]}
	}
	return out
}

// Check runs the strategy (run) on feeds whole, cut at Cuts of the first feed and from a
// later start, and reports what read the future. An error of the full run is returned as
// it is; a cut run that fails where the full run did not is a finding.
func Check(ctx context.Context, feeds []engine.Feed, run RunFunc) (*Report, error) {
	if len(feeds) == 0 || len(feeds[0].Bars) == 0 {
		return nil, engine.ErrNoBars
	}
	base := feeds[0].Bars
	n := len(base)
	cuts := Cuts(n)
	watch := map[int64]bool{}
	for _, c := range cuts {
		for i := max(c-watchBars, 0); i < c; i++ {
			watch[base[i].Time.UnixNano()] = true
		}
	}
	full, err := run(ctx, feeds, watch)
	if err != nil {
		return nil, err
	}
	rep := &Report{Cuts: len(cuts), CutBars: cuts, Bars: n, Findings: []Finding{}, Warmup: []Warmup{}, Lines: len(full.Lines), Runs: 1}
	idx := indexOf(full.Times)
	found := map[string]int{} // kind+what → index in rep.Findings
	add := func(f Finding) {
		key := f.Kind + "\x00" + f.What
		if i, ok := found[key]; ok {
			if f.Time.Before(rep.Findings[i].Time) {
				rep.Findings[i] = f
			}
			return
		}
		found[key] = len(rep.Findings)
		rep.Findings = append(rep.Findings, f)
	}
	for _, c := range cuts {
		t := base[c].Time
		part := cut(feeds, t)
		rep.Runs += float64(c) / float64(n)
		var horizon int64 = math.MinInt64 // the last time of a given bar: later steps are the cut's own
		for _, f := range part {
			if len(f.Bars) > 0 {
				horizon = max(horizon, f.Bars[len(f.Bars)-1].Time.UnixNano())
			}
		}
		tr, err := run(ctx, part, watch)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("look-ahead check: %w", ctx.Err())
			}
			add(Finding{Kind: "error", What: err.Error(), Bar: c - 1, Time: base[c-1].Time, CutAt: c,
				Detail: fmt.Sprintf("the run on the first %d bars failed where the run on all %d did not", c, n)})
			continue
		}
		for _, f := range compare(full, tr, idx, horizon, base, c) {
			add(f)
		}
	}
	for _, r := range full.Reads {
		t, rt := time.Unix(0, r.Time).UTC(), time.Unix(0, r.IndexTime).UTC()
		add(Finding{Kind: "read", What: r.What, Call: r.Call, Bar: r.Bar, Time: t,
			CutAt: sort.Search(n, func(i int) bool { return !base[i].Time.Before(rt) }), Full: r.Value, Cut: "undefined",
			Detail: fmt.Sprintf("at bar %d (%s), %s read bar %d (%s), %s", r.Bar, fmtWhen(t), r.Where, r.Index, fmtWhen(rt), ahead(r.Index-r.Bar))})
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Time.Before(rep.Findings[j].Time) })
	rep.Lookahead = len(rep.Findings) > 0

	if s := n / 4; s >= 2 && len(full.Lines) > 0 {
		late, err := run(ctx, from(feeds, base[s].Time), nil)
		rep.Runs += float64(n-s) / float64(n)
		if err == nil {
			rep.WarmupStart = s
			rep.Warmup = warmups(full, late, idx)
		} else if ctx.Err() != nil {
			return nil, fmt.Errorf("look-ahead check: %w", ctx.Err())
		}
	}
	return rep, nil
}

// indexOf maps each feed's bar times to their indexes.
func indexOf(times [][]int64) []map[int64]int {
	out := make([]map[int64]int, len(times))
	for k, ts := range times {
		m := make(map[int64]int, len(ts))
		for i, t := range ts {
			m[t] = i
		}
		out[k] = m
	}
	return out
}

// same is exact equality, NaN included.
func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// compare finds where the run cut at bar c of base (tr) differs from the full run before
// the cut: steps after horizon (a resampled feed's last, partial bar) are the cut run's own.
func compare(full, tr *Trace, idx []map[int64]int, horizon int64, base []engine.Bar, c int) []Finding {
	var out []Finding
	barOf := func(t int64) int {
		return max(sort.Search(len(base), func(i int) bool { return base[i].Time.UnixNano() > t })-1, 0)
	}
	for k := range min(len(full.Lines), len(tr.Lines)) {
		fl, cl := full.Lines[k], tr.Lines[k]
		if fl.Call != cl.Call || fl.Feed != cl.Feed || cl.Feed >= len(tr.Times) || cl.Feed >= len(idx) {
			out = append(out, Finding{Kind: "line", What: fl.label(k), Call: fl.Call, Bar: c - 1, Time: base[c-1].Time, CutAt: c,
				Full: fl.Call, Cut: cl.Call, Detail: "the cut run made a different line here: what it made depends on later bars"})
			break
		}
		times := tr.Times[cl.Feed]
		for i, v := range cl.Vals {
			if i >= len(times) {
				break
			}
			j, ok := idx[cl.Feed][times[i]]
			if !ok || j >= len(fl.Vals) || same(v, fl.Vals[j]) {
				continue
			}
			out = append(out, Finding{Kind: "line", What: fl.label(k), Call: fl.Call, Bar: j, Time: time.Unix(0, times[i]).UTC(), CutAt: c,
				Full: fmt.Sprint(fl.Vals[j]), Cut: fmt.Sprint(v),
				Detail: fmt.Sprintf("its value at this bar changes when the bars from %s on are removed", base[c].Time.UTC().Format(time.DateOnly))})
			break
		}
	}
	before := func(ds []Decision) []Decision {
		i := sort.Search(len(ds), func(i int) bool { return ds[i].Time > horizon })
		return ds[:i]
	}
	fd, cd := before(full.Decisions), before(tr.Decisions)
	for i := range max(len(fd), len(cd)) {
		var a, b Decision
		if i < len(fd) {
			a = fd[i]
		}
		if i < len(cd) {
			b = cd[i]
		}
		if a == b {
			continue
		}
		t := a.Time
		if i >= len(fd) || (i < len(cd) && b.Time < t) {
			t = b.Time
		}
		out = append(out, Finding{Kind: "orders", What: "orders", Bar: barOf(t), Time: time.Unix(0, t).UTC(), CutAt: c,
			Full: cmpOr(a.Text, "(nothing)"), Cut: cmpOr(b.Text, "(nothing)"),
			Detail: fmt.Sprintf("the orders before %s change when the bars from that date on are removed", base[c].Time.UTC().Format(time.DateOnly))})
		break
	}
	fs := map[int64]map[string]string{}
	for _, s := range full.States {
		fs[s.Time] = s.Props
	}
	for _, s := range tr.States {
		if s.Time > horizon {
			continue
		}
		f, ok := fs[s.Time]
		if !ok {
			continue
		}
		names := make([]string, 0, len(s.Props)+len(f))
		for k := range s.Props {
			names = append(names, k)
		}
		for k := range f {
			if _, ok := s.Props[k]; !ok {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			a, aok := f[k]
			b, bok := s.Props[k]
			if aok == bok && a == b {
				continue
			}
			out = append(out, Finding{Kind: "state", What: "this." + k, Bar: barOf(s.Time), Time: time.Unix(0, s.Time).UTC(), CutAt: c,
				Full: cmpOr(a, "(unset)"), Cut: cmpOr(b, "(unset)"),
				Detail: fmt.Sprintf("the strategy's state at this bar changes when the bars from %s on are removed", base[c].Time.UTC().Format(time.DateOnly))})
		}
	}
	return out
}

// ahead is how far ahead a read was.
func ahead(k int) string {
	if k == 1 {
		return "the next bar"
	}
	return fmt.Sprintf("%d bars ahead", k)
}

// fmtWhen is a bar's time: its date, or its date and time of day when it has one.
func fmtWhen(t time.Time) string {
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// warmups compares each line of a run started later (late) with the full run.
func warmups(full, late *Trace, idx []map[int64]int) []Warmup {
	var out []Warmup
	for k := range min(len(full.Lines), len(late.Lines)) {
		fl, ll := full.Lines[k], late.Lines[k]
		if fl.Call != ll.Call || fl.Feed != ll.Feed || ll.Feed >= len(late.Times) || ll.Feed >= len(idx) {
			break
		}
		times := late.Times[ll.Feed]
		scale := 0.0
		for _, v := range fl.Vals {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				scale = max(scale, math.Abs(v))
			}
		}
		tol := 1e-9 * scale
		compared, lastDiff := 0, -1
		for i, v := range ll.Vals {
			if i >= len(times) {
				break
			}
			j, ok := idx[ll.Feed][times[i]]
			if !ok || j >= len(fl.Vals) {
				continue
			}
			compared = i + 1
			w := fl.Vals[j]
			if same(v, w) || math.Abs(v-w) <= tol {
				continue
			}
			lastDiff = i
		}
		if compared == 0 {
			continue
		}
		w := Warmup{What: fl.label(k), Call: fl.Call, Bars: lastDiff + 1, Converged: lastDiff+1 < compared}
		if !w.Converged {
			w.Bars = compared
		}
		out = append(out, w)
	}
	return out
}
