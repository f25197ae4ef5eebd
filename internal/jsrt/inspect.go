package jsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// StrategyInfo describes a loaded strategy class.
type StrategyInfo struct {
	ClassName   string  `json:"class_name"`
	Description string  `json:"description"` // first line of the class's doc comment
	Params      []Param `json:"params"`      // in declaration order
}

// Param is one entry of a strategy's static params.
type Param struct {
	Name        string `json:"name"`
	Default     any    `json:"default"`
	Type        string `json:"type"` // "int", "float", "str", "bool", "list" or "object"
	Description string `json:"description"`
}

// LoadError reports strategy code that cannot be loaded. Message is the
// API's error text ("Failed to load strategy: <cause>" or "<ClassName> is not a
// Strategy subclass"); Line and Column are 1-based when known, 0 otherwise.
type LoadError struct {
	Message string `json:"message"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

func (e *LoadError) Error() string { return e.Message }

// loadErrorOf describes an error thrown or an interruption while loading.
func loadErrorOf(g *guard, err error) *LoadError {
	if re := g.interrupted(err); re != nil {
		switch re.Kind {
		case KindTimeout:
			return loadFailed("timed out while evaluating the code", 0, 0)
		case KindMemory:
			return loadFailed("used too much memory while evaluating the code", 0, 0)
		default:
			return loadFailed(re.Message, 0, 0)
		}
	}
	msg, line, col := jsErrorInfo(err)
	return loadFailed(msg, line, col)
}

func loadFailed(cause string, line, col int) *LoadError {
	return &LoadError{Message: "Failed to load strategy: " + cause, Line: line, Column: col}
}

// Inspect loads strategy code in a fresh sandboxed runtime with a short time
// limit and returns the first class that extends Strategy, with its
// parameters. Errors are *LoadError, or an error wrapping ctx.Err() when the
// context ends first.
func Inspect(ctx context.Context, code string) (*StrategyInfo, error) {
	rt := newRuntime()
	base, err := installGlobals(rt, stubHost(rt), stubIndicators(rt))
	if err != nil {
		return nil, fmt.Errorf("install prelude: %w", err)
	}
	g := startLoadGuard(ctx, rt, InspectTimeLimit, InspectMemoryLimit)
	_, info, lerr := loadStrategy(rt, g, code, nil, base)
	g.stop()
	if lerr != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("inspect strategy: %w", ctx.Err())
		}
		return nil, lerr
	}
	return info, nil
}

// installGlobals defines Strategy and ind in rt and returns Strategy.
func installGlobals(rt *goja.Runtime, host, ind *goja.Object) (*goja.Object, error) {
	v, err := rt.RunProgram(preludeProgram)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("prelude is not a function")
	}
	cls, err := fn(goja.Undefined(), host)
	if err != nil {
		return nil, err
	}
	base := cls.ToObject(rt)
	if err := rt.Set("Strategy", base); err != nil {
		return nil, err
	}
	if err := rt.Set("ind", ind); err != nil {
		return nil, err
	}
	return base, nil
}

// stubHost returns a host whose functions fail: orders cannot be placed
// while code is only being loaded.
func stubHost(rt *goja.Runtime) *goja.Object {
	h := rt.NewObject()
	fail := func(goja.FunctionCall) goja.Value {
		panic(rt.NewTypeError("the strategy API is only available while a backtest runs"))
	}
	for _, n := range []string{"order", "close", "cancel", "bracket", "target", "getPosition", "log", "setSizer", "addTimer", "signalAdd"} {
		_ = h.Set(n, named(rt, n, fail))
	}
	return h
}

func stubIndicators(rt *goja.Runtime) *goja.Object {
	o := rt.NewObject()
	fail := func(goja.FunctionCall) goja.Value {
		panic(rt.NewTypeError("indicators can only be created in init()"))
	}
	for _, n := range indicatorNames() {
		_ = o.Set(n, named(rt, n, fail))
	}
	return o
}

var (
	classDeclRe = regexp.MustCompile(`\bclass\s+([A-Za-z_$][\w$]*)`)
	classExprRe = regexp.MustCompile(`\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*class\b`)
	docBlockRe  = regexp.MustCompile(`(?s)/\*\*(.*?)\*/`)
)

type classCandidate struct {
	name string
	pos  int
}

func classCandidates(code string) []classCandidate {
	var out []classCandidate
	seen := map[string]bool{}
	add := func(re *regexp.Regexp) {
		for _, m := range re.FindAllStringSubmatchIndex(code, -1) {
			name := code[m[2]:m[3]]
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, classCandidate{name: name, pos: m[0]})
		}
	}
	add(classDeclRe)
	add(classExprRe)
	// order by position in the source
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].pos < out[j-1].pos; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Compiled is strategy code parsed and compiled once, to be run many times (the
// combinations of a study's batch): a goja Program is not tied to a runtime.
type Compiled struct {
	code  string
	prg   *goja.Program
	lits  paramLiterals // the number literals of its params declarations, for their types
	lerr  *LoadError
	cands []classCandidate // the classes the code may declare, in source order
	// probes[i] evaluates to cands[i] when it is a function, else undefined.
	probes []*goja.Program
}

// Compile parses and compiles code for runs given it as RunConfig.Compiled; a syntax
// error is reported by each run, as without it.
func Compile(code string) *Compiled {
	prg, lits, lerr := compile(code)
	c := &Compiled{code: code, prg: prg, lits: lits, lerr: lerr}
	if lerr == nil {
		c.cands = classCandidates(code)
		c.probes = make([]*goja.Program, len(c.cands))
		for i, cand := range c.cands {
			// A candidate is an identifier (see classDeclRe), so this compiles; should it
			// not, the probe stays nil and the candidate is skipped, as a failed run was.
			c.probes[i], _ = goja.Compile("", "typeof "+cand.name+" === 'function' ? "+cand.name+" : undefined", false)
		}
	}
	return c
}

func compile(code string) (*goja.Program, paramLiterals, *LoadError) {
	ast, err := parser.ParseFile(nil, scriptName, code, 0)
	if err != nil {
		var el parser.ErrorList
		if errors.As(err, &el) && len(el) > 0 {
			return nil, nil, loadFailed("SyntaxError: "+el[0].Message, el[0].Position.Line, el[0].Position.Column)
		}
		return nil, nil, loadFailed("SyntaxError: "+err.Error(), 0, 0)
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		msg, line, col := jsErrorInfo(err)
		return nil, nil, loadFailed(msg, line, col)
	}
	var lits paramLiterals
	if strings.Contains(code, "params") { // no declaration to read otherwise
		lits = scanParamLiterals(ast)
	}
	return prg, lits, nil
}

// loadStrategy runs code in rt and returns the strategy class and its info; compiled, when
// it is code's, saves the parse and compilation.
func loadStrategy(rt *goja.Runtime, g *guard, code string, compiled *Compiled, base *goja.Object) (cls *goja.Object, info *StrategyInfo, lerr *LoadError) {
	// Reading the class (a throwing or looping getter, a Proxy trap) can panic inside
	// goja; that is the strategy's failure, not ours.
	defer func() {
		if r := recover(); r != nil {
			cls, info, lerr = nil, nil, loadErrorOf(g, recovered(r))
		}
	}()
	if compiled == nil || compiled.code != code {
		compiled = Compile(code)
	}
	prg := compiled.prg
	if compiled.lerr != nil {
		return nil, nil, compiled.lerr
	}
	kinds, err := captureFuncKinds(rt) // before the code can change what it reads
	if err != nil {
		return nil, nil, loadErrorOf(g, err)
	}
	if _, err := rt.RunProgram(prg); err != nil {
		return nil, nil, loadErrorOf(g, err)
	}

	var chosen classCandidate
	var firstOther string
	for i, c := range compiled.cands {
		if c.name == "Strategy" || compiled.probes[i] == nil {
			continue
		}
		v, err := rt.RunProgram(compiled.probes[i])
		if err != nil || v == nil || goja.IsUndefined(v) {
			continue
		}
		o := v.ToObject(rt)
		if o == base {
			continue
		}
		if isSubclass(rt, o, base) {
			cls, chosen = o, c
			break
		}
		if firstOther == "" {
			firstOther = c.name
		}
	}
	if cls == nil {
		// classes assigned to globals, e.g. globalThis.X = class extends Strategy {}
		glob := rt.GlobalObject()
		for _, k := range glob.Keys() {
			o, ok := glob.Get(k).(*goja.Object)
			if !ok || o == base {
				continue
			}
			if _, isFn := goja.AssertFunction(o); isFn && isSubclass(rt, o, base) {
				cls, chosen = o, classCandidate{name: k, pos: -1}
				break
			}
		}
	}
	if cls == nil {
		if firstOther != "" {
			return nil, nil, &LoadError{Message: firstOther + " is not a Strategy subclass"}
		}
		return nil, nil, loadFailed("no Strategy subclass found", 0, 0)
	}
	name := chosen.name
	if n := cls.Get("name"); n != nil && n.String() != "" {
		name = n.String()
	}
	if lerr := checkSyncLifecycle(kinds, cls, base, code); lerr != nil {
		return nil, nil, lerr
	}
	info = &StrategyInfo{ClassName: name}
	doc := docComment(code, chosen.pos)
	params, perr := extractParams(rt, cls, doc, compiled.lits.forOwner(name))
	if perr != nil {
		return nil, nil, loadFailed("static params: "+perr.Error(), 0, 0)
	}
	info.Params = params
	info.Description = docSummary(doc, params)
	return cls, info, nil
}

// lifecycleMethods are the methods the engine calls, synchronously, on a strategy.
var lifecycleMethods = []string{"init", "prenext", "nextStart", "nextOpen", "next", "notifyOrder", "notifyTrade", "notifyTimer", "stop"}

// funcKinds holds what tells async and generator functions apart, read from the runtime
// before the strategy's code runs.
type funcKinds struct {
	rt                   *goja.Runtime
	toString             goja.Callable // Function.prototype.toString
	funcProto            *goja.Object  // Function.prototype: a plain function's or method's
	asyncProto, genProto *goja.Object  // prototypes of async and generator functions, once needed
}

func captureFuncKinds(rt *goja.Runtime) (*funcKinds, error) {
	v, err := rt.RunProgram(funcKindsProgram)
	if err != nil {
		return nil, err
	}
	arr := v.ToObject(rt)
	k := &funcKinds{rt: rt}
	k.toString, _ = goja.AssertFunction(arr.Get("0"))
	k.funcProto, _ = arr.Get("1").(*goja.Object)
	if k.toString == nil || k.funcProto == nil {
		return nil, errors.New("function prototypes not found")
	}
	return k, nil
}

// protoKind returns "async" or "generator" when p is the prototype of such functions. The
// two prototypes are read from fresh function literals, which no script can change.
func (k *funcKinds) protoKind(p *goja.Object) string {
	if k.asyncProto == nil {
		v, err := k.rt.RunProgram(asyncGenProgram)
		if err != nil {
			return ""
		}
		arr := v.ToObject(k.rt)
		a, _ := arr.Get("0").(*goja.Object)
		g, _ := arr.Get("1").(*goja.Object)
		if a == nil || g == nil {
			return ""
		}
		k.asyncProto, k.genProto = a.Prototype(), g.Prototype()
	}
	switch p {
	case k.asyncProto:
		return "async"
	case k.genProto:
		return "generator"
	}
	return ""
}

// asyncMethodSrcRe matches the source text of an async method (`async next() {}`), not a
// method named async (`async() {}`).
var asyncMethodSrcRe = regexp.MustCompile(`^async\s+[^\s(=]`)

// kindOf returns "async" or "generator" for such functions, "" otherwise. goja gives async
// methods (`async next() {}` in a class) the plain function prototype, so their source text
// is what tells them; async function expressions and arrows have the async prototype.
func (k *funcKinds) kindOf(v goja.Value) string {
	o, ok := v.(*goja.Object)
	if !ok {
		return ""
	}
	if _, isFn := goja.AssertFunction(o); !isFn {
		return ""
	}
	if p := o.Prototype(); p != k.funcProto {
		if kind := k.protoKind(p); kind != "" {
			return kind
		}
	}
	if src, err := k.toString(o); err == nil && asyncMethodSrcRe.MatchString(src.String()) {
		return "async"
	}
	return ""
}

// checkSyncLifecycle refuses a class whose lifecycle methods are async or generator
// functions: the engine calls them synchronously, so the body of an async method would run
// only up to its first await (its errors lost) and a generator's body not at all.
func checkSyncLifecycle(k *funcKinds, cls, base *goja.Object, code string) *LoadError {
	proto, ok := cls.Get("prototype").(*goja.Object)
	if !ok {
		return nil
	}
	var baseProto *goja.Object
	if bp, ok := base.Get("prototype").(*goja.Object); ok {
		baseProto = bp
	}
	for _, name := range lifecycleMethods {
		v := proto.Get(name)
		if v == nil || (baseProto != nil && v.SameAs(baseProto.Get(name))) {
			continue
		}
		kind := k.kindOf(v)
		if kind == "" {
			continue
		}
		line, col := methodPosition(code, name, kind)
		what := "async"
		if kind == "generator" {
			what = "a generator"
		}
		return loadFailed(fmt.Sprintf("%s() must not be %s: the engine calls it synchronously", name, what), line, col)
	}
	return nil
}

// methodPosition finds the first `async name(` (or `*name(` for a generator) in code, for the
// error's line and column (1-based; 0, 0 when not found).
func methodPosition(code, name, kind string) (line, col int) {
	prefix := `\basync\s+`
	if kind == "generator" {
		prefix = `\*\s*`
	}
	loc := regexp.MustCompile(prefix + regexp.QuoteMeta(name) + `\s*\(`).FindStringIndex(code)
	if loc == nil {
		return 0, 0
	}
	before := code[:loc[0]]
	line = strings.Count(before, "\n") + 1
	col = utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:]) + 1
	return line, col
}

func isSubclass(rt *goja.Runtime, cls, base *goja.Object) bool {
	proto, ok := cls.Get("prototype").(*goja.Object)
	if !ok {
		return false
	}
	baseProto, ok := base.Get("prototype").(*goja.Object)
	if !ok {
		return false
	}
	for p := proto.Prototype(); p != nil; p = p.Prototype() {
		if p == baseProto {
			return true
		}
	}
	return false
}

// extractParams reads the class's static params in declaration order; floatWritten tells
// whether a whole-number default was written as a float literal (2.0).
func extractParams(rt *goja.Runtime, cls *goja.Object, doc []string, floatWritten func(key string, value float64) bool) ([]Param, error) {
	pv := cls.Get("params")
	if pv == nil || goja.IsUndefined(pv) || goja.IsNull(pv) {
		return []Param{}, nil
	}
	po, ok := pv.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("must be an object of name to default value")
	}
	out := []Param{}
	for _, k := range po.Keys() {
		v := po.Get(k)
		def, typ := serialiseParam(rt, v)
		if typ == "int" && floatWritten(k, float64(def.(int64))) {
			def, typ = float64(def.(int64)), "float"
		}
		out = append(out, Param{Name: k, Default: def, Type: typ, Description: paramDescription(doc, k)})
	}
	return out, nil
}

// serialiseParam serialises a default value: numbers, strings and
// booleans are kept, arrays become lists, anything else its string form.
func serialiseParam(rt *goja.Runtime, v goja.Value) (any, string) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, "object"
	}
	switch x := v.Export().(type) {
	case int64:
		return x, "int"
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), "int"
		}
		return x, "float"
	case string:
		return x, "str"
	case bool:
		return x, "bool"
	case []any:
		return normaliseList(x), "list"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); !isFn {
			if b, err := json.Marshal(o.Export()); err == nil {
				return string(b), "object"
			}
		}
	}
	return v.String(), "object"
}

func normaliseList(in []any) []any {
	out := make([]any, len(in))
	for i, e := range in {
		switch x := e.(type) {
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				out[i] = int64(x)
				continue
			}
			out[i] = x
		case []any:
			out[i] = normaliseList(x)
		default:
			out[i] = e
		}
	}
	return out
}

// docComment returns the lines of the /** ... */ block nearest before pos
// (or the first block in the file), with the leading "*" removed.
func docComment(code string, pos int) []string {
	blocks := docBlockRe.FindAllStringSubmatchIndex(code, -1)
	if len(blocks) == 0 {
		return nil
	}
	pick := blocks[0]
	if pos >= 0 {
		for _, b := range blocks {
			if b[1] <= pos {
				pick = b
			}
		}
	}
	body := code[pick[2]:pick[3]]
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "*"))
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// docSummary is the doc comment's text before its parameter lines ("fast: …", "slow - …")
// and tags ("@param"), its lines joined: a sentence that runs onto a second line is kept
// whole rather than cut at the first line's end. The page's docSummary (web/src/shape.ts)
// reads a template's comment by the same rule.
func docSummary(doc []string, params []Param) string {
	var out []string
	for _, l := range doc {
		if strings.HasPrefix(l, "@") || paramLine(l, params) {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, " ")
}

// paramLine reports whether doc line l describes a parameter: it starts with a word followed
// by ":" or " - ", a declared parameter's name (any word when none is declared).
func paramLine(l string, params []Param) bool {
	n := 0
	for n < len(l) && isIdentByte(l[n]) {
		n++
	}
	if n == 0 {
		return false
	}
	rest := strings.TrimLeft(l[n:], " \t")
	if !strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, "- ") && !strings.HasPrefix(rest, "— ") {
		return false
	}
	if len(params) == 0 {
		return true
	}
	for _, p := range params {
		if p.Name == l[:n] {
			return true
		}
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// mentionIndex returns the index of name as a whole word in line, or -1.
func mentionIndex(line, name string) int {
	for off := 0; off < len(line); {
		i := strings.Index(line[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(name)
		if (i == 0 || !isIdentByte(line[i-1])) && (end == len(line) || !isIdentByte(line[end])) {
			return i
		}
		off = i + 1
	}
	return -1
}

// paramDescription returns the first doc line that mentions name, without
// a leading "name:", "name -" or "@param {type} name".
func paramDescription(doc []string, name string) string {
	// a line that defines the name ("name: ...") wins over a mere mention
	for _, l := range doc {
		if i := mentionIndex(l, name); i >= 0 {
			prefix := strings.TrimSpace(l[:i])
			rest := strings.TrimSpace(l[i+len(name):])
			if (prefix == "" || strings.HasPrefix(prefix, "@param") || prefix == "-") && rest != "" && strings.ContainsAny(rest[:1], ":-—–=") {
				return paramDescriptionLine(l, i, name)
			}
		}
	}
	for _, l := range doc {
		i := mentionIndex(l, name)
		if i < 0 {
			continue
		}
		return paramDescriptionLine(l, i, name)
	}
	return ""
}

func paramDescriptionLine(l string, i int, name string) string {
	prefix := strings.TrimSpace(l[:i])
	if prefix == "" || strings.HasPrefix(prefix, "@param") || prefix == "-" {
		rest := strings.TrimSpace(l[i+len(name):])
		for _, sep := range []string{":", "-", "—", "–", "="} {
			if strings.HasPrefix(rest, sep) {
				rest = strings.TrimSpace(rest[len(sep):])
				break
			}
		}
		return rest
	}
	return l
}
