package jsrt

// The indicator registry: every function of the global ind namespace that computes an
// indicator (ind.SMA, ind.MACD, ind.Ichimoku, ...) is built from an IndDef here, and so
// are docs/indicators.md (TestIndicatorDocs) and the parity test against backtrader
// (TestRegistryParity, on testdata/backtrader/indicators/all, made by real backtrader).
//
// How to add an indicator
//
//  1. Write its computation over the whole series in internal/engine (a function of
//     engine.Series returning engine.Series, the warm-up as NaN and First the first bar
//     with a value, as backtrader's minperiod-1), following backtrader's source.
//  2. Register it from an init() of a file of this package with registerInd(IndDef{...}):
//     Name is backtrader's class name (the class itself, not an alias: the fixtures'
//     "classes" say which), Aliases backtrader's aliases (the fixture's "aliases"), Family
//     the module of backtrader it comes from (the docs' table), Params backtrader's
//     parameters in backtrader's order with their defaults, Lines backtrader's lines in
//     order, Input what it reads, and Compute, which gets the inputs and the parameters'
//     values and returns one series per line (Lines, then ExtraLines).
//  3. Remove its name from testdata/backtrader/indicators/missing.txt. TestRegistryParity
//     then compares every line on every bar with each of backtrader's cases of the class
//     (default and other parameters) to 1e-9; TestRegistryCoversBacktrader fails while a
//     class is neither registered nor listed there, or is listed and registered.
//  4. go test ./internal/jsrt -run TestIndicatorDocs -update rewrites docs/indicators.md.
//
// A parameter of kind ParamMovAv takes a moving average (ind.EMA or its name, "EMA"):
// Compute gets it as a function (IndArgs.MovAv) of any registered entry with MovAv set. A
// parameter a backtrader case uses that the entry does not declare makes the case fail,
// unless missing.txt lists it as Class.param.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// IndInput is what an indicator reads.
type IndInput int

const (
	// InLine is one line; a data feed gives its close (backtrader's line 0 of a feed), a
	// multi-line indicator its first line.
	InLine IndInput = iota
	// InFeed is a data feed: its open, high, low, close and volume.
	InFeed
	// InTwoLines is two lines (crossovers, OLS of two feeds); one may be a number, a
	// constant line, and a line of another feed is aligned by time to the first's feed.
	InTwoLines
)

func (in IndInput) String() string {
	switch in {
	case InFeed:
		return "a data feed"
	case InTwoLines:
		return "two lines"
	}
	return "a line"
}

// ParamKind is the kind of value a parameter takes.
type ParamKind int

const (
	ParamPeriod ParamKind = iota // a whole number of 1 or more
	ParamInt                     // a whole number of 0 or more
	ParamFloat                   // a finite number
	ParamBool                    // true or false
	ParamString                  // a string
	ParamMovAv                   // a moving average: ind.EMA or its name, "EMA"
	ParamFunc                    // a function of a window's values (an array): a script function or "max", "min", "sum"
	ParamList                    // an array of numbers
	ParamLine                    // a line of the input's feed (ExponentialSmoothingDynamic's alpha)
)

var paramKindNames = [...]string{"period", "int", "float", "bool", "string", "movav", "func", "list", "line"}

func (k ParamKind) String() string { return paramKindNames[k] }

// IndParam is one parameter of an indicator.
type IndParam struct {
	Name string
	Kind ParamKind
	// Default is an int (ParamPeriod, ParamInt), float64, bool, string, []float64, the name
	// of a moving average (ParamMovAv, as "SMA"), a function name (ParamFunc), or nil when
	// backtrader has none (then the parameter must be given, or Compute reads it as absent).
	Default any
	// Compat are other names the parameter takes, which the project accepted before it
	// followed backtrader (MACD's fast for period_me1).
	Compat []string
	// Options are the values a ParamString takes (CointN's trend); none: any string.
	Options []string
	// Required marks a parameter without a default that the indicator cannot compute
	// without (ApplyN's func): calling it without one is an error naming the parameter.
	Required bool
}

// IndDef is one indicator of the registry.
type IndDef struct {
	Name    string   // backtrader's class name (what the project calls it when backtrader lacks it)
	Aliases []string // backtrader's aliases of the class, and the project's older names
	Family  string   // backtrader's module (sma, ema, oscillator, ...), or "project" for the project's own
	Doc     string   // one line for the docs
	Input   IndInput
	Params  []IndParam
	// Positional is the order of parameters given positionally after the inputs
	// (ind.MACD(close, 12, 26, 9)); nil means Params' order.
	Positional []string
	Lines      []string // backtrader's lines, in order; the first is the indicator's value
	// ExtraLines are lines the project computes beyond backtrader's (MACD's histo), after Lines.
	ExtraLines []string
	// CompatLines are other names of lines (Stochastic's k for percK), kept for the
	// strategies written before the lines took backtrader's names.
	CompatLines map[string]string
	// FutureLines are lines whose value at a bar is a later bar's (Ichimoku's chikou_span,
	// the Fractal study's), for charts: each is made only when the strategy first reads
	// it, so the look-ahead check flags a strategy that reads one and no other. Their last
	// bar is not compared with backtrader's, whose runonce writes it from a negative index
	// (Ichimoku's chikou_span there is the close of bar chikou-1; here NaN).
	FutureLines []string
	// MovAv marks a moving average: InLine, a "period" parameter, one line; usable as
	// another indicator's ParamMovAv.
	MovAv bool
	// NotBacktrader marks the project's own indicators (Donchian, Keltner, OBV, ...).
	NotBacktrader bool
	// ParityNext makes TestRegistryParity compare what a strategy reads at [0] bar by bar in
	// backtrader (the fixtures' next_lines, where they differ from the lines after the run:
	// lines written into past bars or read from ahead) instead of the lines after the run.
	ParityNext bool
	// Compute returns one series per line (Lines then ExtraLines), each of in's length.
	Compute func(in IndIn, p IndArgs) []engine.Series
}

// IndIn holds an indicator's inputs, all of one feed's length.
type IndIn struct {
	Lines                          []engine.Series // InLine: one; InTwoLines: two
	Open, High, Low, Close, Volume engine.Series   // InFeed
}

// Len is the number of bars.
func (in IndIn) Len() int {
	if len(in.Lines) > 0 {
		return len(in.Lines[0].Vals)
	}
	return len(in.Close.Vals)
}

// MovAvFunc is a moving average of a series over period bars.
type MovAvFunc func(in engine.Series, period int) engine.Series

// WindowFunc is a function of a window's values, oldest first.
type WindowFunc func(window []float64) float64

// IndArgs are the values of an indicator's parameters, each of its kind's Go type (see
// IndParam.Default); a parameter not given has its default.
type IndArgs struct {
	def  *IndDef
	vals map[string]any
}

func (a IndArgs) get(name string) any {
	v, ok := a.vals[name]
	if !ok {
		panic(fmt.Sprintf("indicator %s has no parameter %s", a.def.Name, name))
	}
	return v
}

// Int is a ParamPeriod or ParamInt parameter.
func (a IndArgs) Int(name string) int { return a.get(name).(int) }

// Float is a ParamFloat parameter (or a whole-number one, as a float).
func (a IndArgs) Float(name string) float64 {
	switch v := a.get(name).(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("indicator %s: parameter %s is not a number", a.def.Name, name))
}

// Bool is a ParamBool parameter.
func (a IndArgs) Bool(name string) bool { return a.get(name).(bool) }

// Str is a ParamString parameter.
func (a IndArgs) Str(name string) string { return a.get(name).(string) }

// List is a ParamList parameter.
func (a IndArgs) List(name string) []float64 { l, _ := a.get(name).([]float64); return l }

// Given reports whether the parameter has a value (a default or one given): false for a
// parameter whose backtrader default is None that was not given.
func (a IndArgs) Given(name string) bool { return a.get(name) != nil }

// MovAv is a ParamMovAv parameter as a function.
func (a IndArgs) MovAv(name string) MovAvFunc { return a.get(name).(MovAvFunc) }

// Func is a ParamFunc parameter.
func (a IndArgs) Func(name string) WindowFunc { f, _ := a.get(name).(WindowFunc); return f }

// Line is a ParamLine parameter (aligned with the input).
func (a IndArgs) Line(name string) engine.Series { return a.get(name).(engine.Series) }

var (
	indDefs   []*IndDef              // in the order registered
	indByName = map[string]*IndDef{} // names, aliases
	// indFrozen is set once ind's names are read (indicatorNames): registering later is a bug.
	indFrozen bool
	indMu     sync.Mutex
)

// registerInd adds def to the registry; it panics on a name already taken or an entry
// that does not hold together (an init() bug, found by any test of the package).
func registerInd(def IndDef) {
	indMu.Lock()
	defer indMu.Unlock()
	if indFrozen {
		panic("registerInd " + def.Name + " after the registry was read: register from init()")
	}
	d := &def
	if d.Name == "" || len(d.Lines) == 0 || d.Compute == nil || d.Family == "" {
		panic("registerInd: " + d.Name + " needs a Name, a Family, Lines and Compute")
	}
	for _, n := range d.names() {
		if prev, ok := indByName[n]; ok {
			panic(fmt.Sprintf("registerInd: %s of %s is already %s's", n, d.Name, prev.Name))
		}
		if _, ok := lineOperationNames[n]; ok {
			panic("registerInd: " + n + " is a line operation")
		}
		indByName[n] = d
	}
	seen := map[string]bool{}
	for _, p := range d.Params {
		for _, n := range append([]string{p.Name}, p.Compat...) {
			if seen[n] {
				panic("registerInd: " + d.Name + " has two parameters " + n)
			}
			seen[n] = true
		}
	}
	for _, n := range d.Positional {
		if d.param(n) == nil {
			panic("registerInd: " + d.Name + "'s positional " + n + " is not a parameter")
		}
	}
	if d.MovAv && (d.Input != InLine || d.param("period") == nil || len(d.Lines) != 1) {
		panic("registerInd: " + d.Name + " is a moving average: one line in, a period, one line out")
	}
	indDefs = append(indDefs, d)
}

// names are the entry's names in ind: its own, then its aliases.
func (d *IndDef) names() []string { return append([]string{d.Name}, d.Aliases...) }

// AllLines are Lines then ExtraLines.
func (d *IndDef) AllLines() []string { return append(slices.Clip(d.Lines), d.ExtraLines...) }

func (d *IndDef) param(name string) *IndParam {
	for i := range d.Params {
		p := &d.Params[i]
		if p.Name == name || slices.Contains(p.Compat, name) {
			return p
		}
	}
	return nil
}

func (d *IndDef) positional() []string {
	if d.Positional != nil {
		return d.Positional
	}
	names := make([]string, len(d.Params))
	for i, p := range d.Params {
		names[i] = p.Name
	}
	return names
}

// lookupInd is the entry of a name or alias.
func lookupInd(name string) *IndDef {
	indMu.Lock()
	defer indMu.Unlock()
	return indByName[name]
}

// registeredInds is every entry in the order registered.
func registeredInds() []*IndDef {
	indMu.Lock()
	defer indMu.Unlock()
	indFrozen = true
	return slices.Clone(indDefs)
}

// legacyIndNames are ind's names before the registry, in their order, which Object.keys(ind)
// keeps first; every other name of the registry follows in the order registered.
var legacyIndNames = []string{
	"SMA", "EMA", "WMA", "SMMA", "RSI", "MACD", "BollingerBands", "Bollinger", "ATR", "TrueRange",
	"Stochastic", "CrossOver", "CrossUp", "CrossDown", "Highest", "Lowest", "ROC", "Momentum",
	"StdDev", "Delay", "DEMA", "TEMA", "HMA", "ZLEMA", "TRIX", "KAMA", "StochRSI", "CCI", "WilliamsR", "Aroon",
	"UltimateOscillator", "DMI", "ADX", "ParabolicSAR", "Ichimoku", "Donchian", "Keltner", "OBV",
	"Add", "Sub", "Mul", "Div", "Max", "Min", "Gt", "Ge", "Lt", "Le", "Eq", "Ne", "Apply", "Compute",
}

var lineOperationNames = map[string]struct{}{
	"Add": {}, "Sub": {}, "Mul": {}, "Div": {}, "Max": {}, "Min": {}, "Gt": {}, "Ge": {}, "Lt": {}, "Le": {},
	"Eq": {}, "Ne": {}, "Apply": {}, "Compute": {},
}

var (
	indNamesOnce sync.Once
	indNames     []string
	indPropList  []lazyProp // the registry's names in ind's order, their functions unmade
)

// indProps are ind's indicator names as lazyFuncs properties to be made on first read.
func indProps() []lazyProp {
	indicatorNames()
	return indPropList
}

// indicatorNames lists the functions of the global ind namespace: the legacy names, then
// the registry's others.
func indicatorNames() []string {
	indNamesOnce.Do(func() {
		seen := map[string]bool{}
		for _, n := range legacyIndNames {
			seen[n] = true
			indNames = append(indNames, n)
		}
		for _, d := range registeredInds() {
			for _, n := range d.names() {
				if !seen[n] {
					seen[n] = true
					indNames = append(indNames, n)
				}
			}
		}
		for _, n := range indNames {
			if lookupInd(n) != nil {
				indPropList = append(indPropList, lazyProp{name: n})
			}
		}
	})
	return indNames
}

// windowFuncs are the functions a ParamFunc takes by name (backtrader's max, min and
// math.fsum as the fixtures name them).
var windowFuncs = map[string]WindowFunc{
	"max": func(w []float64) float64 { return slices.Max(w) },
	"min": func(w []float64) float64 { return slices.Min(w) },
	"sum": engine.Fsum,
}

// movAvOf is the moving average named name (a registered entry with MovAv set).
func movAvOf(name string) (MovAvFunc, bool) {
	d := lookupInd(name)
	if d == nil || !d.MovAv {
		return nil, false
	}
	return func(in engine.Series, period int) engine.Series {
		args, err := d.args(map[string]any{"period": period})
		if err != nil {
			panic(err)
		}
		return d.Compute(IndIn{Lines: []engine.Series{in}}, args)[0]
	}, true
}

// args are the entry's parameter values: given (by name or compat name, each of its
// kind's Go type, a moving average or function by name) over the defaults.
func (d *IndDef) args(given map[string]any) (IndArgs, error) {
	vals := make(map[string]any, len(d.Params))
	for _, p := range d.Params {
		vals[p.Name] = p.Default
	}
	for k, v := range given {
		p := d.param(k)
		if p == nil {
			return IndArgs{}, fmt.Errorf("%s has no parameter %s", d.Name, k)
		}
		vals[p.Name] = v
	}
	for _, p := range d.Params {
		v, err := p.normalise(vals[p.Name])
		if err != nil {
			return IndArgs{}, fmt.Errorf("%s: %s %w", d.Name, p.Name, err)
		}
		if v == nil && p.Required {
			return IndArgs{}, fmt.Errorf("%s needs the parameter %s (%s)", d.Name, p.Name, p.Kind)
		}
		vals[p.Name] = v
	}
	return IndArgs{def: d, vals: vals}, nil
}

// normalise converts a Go value (from a default, a fixture's JSON or the script's
// conversion) to the parameter's kind, or says why it cannot.
func (p IndParam) normalise(v any) (any, error) {
	if v == nil {
		return nil, nil // no default (backtrader's None): IndArgs.Given tells
	}
	num := func() (float64, bool) {
		switch x := v.(type) {
		case int:
			return float64(x), true
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	switch p.Kind {
	case ParamPeriod, ParamInt:
		f, ok := num()
		low := 1.0
		if p.Kind == ParamInt {
			low = 0
		}
		if !ok || f != math.Trunc(f) || f < low || f > 1e7 {
			if p.Kind == ParamInt {
				return nil, fmt.Errorf("must be an integer of 0 or more, got %v", v)
			}
			return nil, fmt.Errorf("must be a positive integer, got %v", v)
		}
		return int(f), nil
	case ParamFloat:
		f, ok := num()
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("must be a number, got %v", v)
		}
		return f, nil
	case ParamBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("must be true or false, got %v", v)
		}
		return b, nil
	case ParamString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("must be a string, got %v", v)
		}
		if len(p.Options) > 0 && !slices.Contains(p.Options, s) {
			return nil, fmt.Errorf("must be one of %s, got %q", strings.Join(p.Options, ", "), s)
		}
		return s, nil
	case ParamMovAv:
		switch x := v.(type) {
		case MovAvFunc:
			return x, nil
		case string:
			if f, ok := movAvOf(x); ok {
				return f, nil
			}
		}
		return nil, fmt.Errorf("must be a moving average (ind.EMA or its name, as 'EMA'), got %v", v)
	case ParamFunc:
		switch x := v.(type) {
		case WindowFunc:
			return x, nil
		case string:
			if f, ok := windowFuncs[x]; ok {
				return f, nil
			}
		}
		return nil, fmt.Errorf("must be a function of an array of values, or 'max', 'min' or 'sum', got %v", v)
	case ParamList:
		switch x := v.(type) {
		case []float64:
			return x, nil
		case []any:
			l := make([]float64, len(x))
			for i, e := range x {
				f, ok := e.(float64)
				if !ok {
					if n, isInt := e.(int64); isInt {
						f, ok = float64(n), true
					}
				}
				if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, fmt.Errorf("must be an array of numbers, got %v", v)
				}
				l[i] = f
			}
			return l, nil
		}
		return nil, fmt.Errorf("must be an array of numbers, got %v", v)
	case ParamLine:
		if s, ok := v.(engine.Series); ok {
			return s, nil
		}
		return nil, fmt.Errorf("must be a line, got %v", v)
	}
	return nil, fmt.Errorf("has an unknown kind")
}

// indFunc is ind.<name> for an entry: inputs, then parameters positionally or as one
// options object; a line for one line out, else an object of the named lines.
func (h *host) indFunc(name string, d *IndDef) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		var in IndIn
		var feed int
		var src *line // the input of an InLine entry
		at := 1
		switch d.Input {
		case InLine:
			src = h.indArg(call.Argument(0), -1, name)
			in.Lines, feed = []engine.Series{src.s}, src.feed
		case InFeed:
			v := h.feedViewOf(call.Argument(0), name)
			in.Open, in.High, in.Low, in.Close, in.Volume = v.column(0).s, v.column(1).s, v.column(2).s, v.column(3).s, v.column(4).s
			feed = v.feed
		case InTwoLines:
			a, b, f := h.pair(call, name)
			in.Lines, feed, at = []engine.Series{a.s, b.s}, f, 2
		}
		given, memoable := h.indGiven(call, at, name, d, feed)
		args, err := d.args(given)
		if err != nil {
			h.throw("%s", strings.Replace(err.Error(), d.Name, name, 1))
		}
		compute := func() []engine.Series { return d.Compute(in, args) }
		var out []engine.Series
		key := ""
		// memoised as before the registry: indicators of one line in and one out
		if memoable && src != nil && len(d.AllLines()) == 1 {
			var s engine.Series
			s, key = h.memoised(src, d.Name+"/"+memoParams(d, args), func() engine.Series { return compute()[0] })
			out = []engine.Series{s}
		} else {
			out = compute()
		}
		if len(out) != len(d.AllLines()) {
			panic(fmt.Sprintf("indicator %s computed %d lines, has %d", d.Name, len(out), len(d.AllLines())))
		}
		if len(out) == 1 {
			return h.outputKeyed(out[0], feed, key)
		}
		obj := h.rt.NewObject()
		ls := make(map[string]*goja.Object, len(out))
		futures := make(map[string]goja.Value, len(d.FutureLines))
		for i, ln := range d.AllLines() {
			if slices.Contains(d.FutureLines, ln) {
				futures[ln] = h.futureLine(out[i], feed, "ind."+name+"."+ln)
				// not enumerable: what walks the object's lines (the look-ahead check's
				// naming of lines) must not make it
				_ = obj.DefineAccessorProperty(ln, futures[ln], nil, goja.FLAG_FALSE, goja.FLAG_FALSE)
				if i == 0 {
					_ = obj.DefineAccessorProperty("_first", futures[ln], nil, goja.FLAG_FALSE, goja.FLAG_FALSE)
				}
				continue
			}
			l := h.output(out[i], feed)
			ls[ln] = l
			_ = obj.Set(ln, l)
			if i == 0 {
				_ = obj.DefineDataProperty("_first", l, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
			}
		}
		for _, c := range sortedKeys(d.CompatLines) {
			if get, ok := futures[d.CompatLines[c]]; ok {
				_ = obj.DefineAccessorProperty(c, get, nil, goja.FLAG_FALSE, goja.FLAG_FALSE)
				continue
			}
			_ = obj.Set(c, ls[d.CompatLines[c]])
		}
		return obj
	}
}

// futureLine is a getter of a FutureLines line: the line is made (and traced as call,
// for the look-ahead check) on the first read. Its warm-up counts from the indicator's
// creation, as every line's, so that a first read after it does not start one again.
func (h *host) futureLine(s engine.Series, feed int, call string) goja.Value {
	h.eng.RequireMinPeriod(feed, s.First+1)
	var l *goja.Object
	return h.rt.ToValue(func(goja.FunctionCall) goja.Value {
		if l == nil {
			l = h.output(s, feed)
			if tr := h.tracer; tr != nil {
				tr.t.Lines[len(tr.t.Lines)-1].Call = call
			}
		}
		return l
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// memoParams is the parameters' values in order, as a memo key: the period alone for an
// entry of one period parameter (SMA/30), as before the registry.
func memoParams(d *IndDef, a IndArgs) string {
	parts := make([]string, len(d.Params))
	for i, p := range d.Params {
		switch v := a.vals[p.Name].(type) {
		case int:
			parts[i] = strconv.Itoa(v)
		case float64:
			parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, ",")
}

// indGiven reads the parameters given after the inputs (from argument at): positionally in
// d's positional order, or as one options object by name. memoable is false when a value
// is a script function or a line (whose result may depend on anything the strategy did).
func (h *host) indGiven(call goja.FunctionCall, at int, name string, d *IndDef, feed int) (given map[string]any, memoable bool) {
	given, memoable = map[string]any{}, true
	read := func(p *IndParam, v goja.Value) {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return
		}
		switch p.Kind {
		case ParamMovAv:
			if o, ok := v.(*goja.Object); ok {
				if _, isFn := goja.AssertFunction(o); isFn {
					if f, ok := movAvOf(o.Get("name").String()); ok {
						given[p.Name] = f
						return
					}
				}
			}
			given[p.Name] = v.String()
		case ParamFunc:
			if fn, ok := goja.AssertFunction(v); ok {
				memoable = false
				given[p.Name] = WindowFunc(func(w []float64) float64 {
					arr := make([]any, len(w))
					for i, x := range w {
						arr[i] = x
					}
					r, err := fn(goja.Undefined(), h.rt.NewArray(arr...))
					if err != nil {
						panic(err) // the strategy's own exception
					}
					return r.ToFloat()
				})
				return
			}
			given[p.Name] = v.String()
		case ParamLine:
			memoable = false
			given[p.Name] = h.alignTo(feed, h.indArg(v, feed, name)).s
		case ParamBool:
			if b, ok := v.Export().(bool); ok {
				given[p.Name] = b
				return
			}
			given[p.Name] = v.String()
		case ParamString:
			given[p.Name] = v.String()
		case ParamList:
			given[p.Name] = v.Export()
		default: // a number, or what JavaScript makes one of ("30"), as before the registry
			given[p.Name] = v.ToFloat()
		}
	}
	if o, ok := call.Argument(at).(*goja.Object); ok && o.ClassName() == "Object" && !isLine(o) {
		for _, k := range o.Keys() {
			p := d.param(k)
			if p == nil {
				h.throw("%s: no parameter %s (it has %s)", name, k, strings.Join(paramNames(d), ", "))
			}
			read(p, o.Get(k))
		}
		return given, memoable
	}
	pos := d.positional()
	for i := at; i < len(call.Arguments); i++ {
		if i-at >= len(pos) {
			h.throw("%s: at most %d parameters after the inputs (%s)", name, len(pos), strings.Join(pos, ", "))
		}
		read(d.param(pos[i-at]), call.Arguments[i])
	}
	return given, memoable
}

func paramNames(d *IndDef) []string {
	names := make([]string, len(d.Params))
	for i, p := range d.Params {
		names[i] = p.Name
	}
	return names
}

// feedViewOf is the data feed v is (this.data, this.datas[i]), or throws.
func (h *host) feedViewOf(v goja.Value, name string) *dataView {
	if d, ok := v.(*goja.Object); ok {
		for k, x := range h.datas {
			if x == d {
				return h.views[k]
			}
		}
	}
	h.throw("%s: expected a data feed (e.g. this.data)", name)
	return nil
}
