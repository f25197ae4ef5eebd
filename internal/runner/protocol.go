package runner

import (
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"math"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// request is what the parent sends a runner child: one inspection, one run, one batch of
// runs (Batch: the same code and feeds with each of these parameter sets, for a study) or
// one constraint check (Constraint over Batch).
type request struct {
	Inspect     bool
	Lookahead   bool // a look-ahead check (jsrt.Lookahead) of Code on Feeds, answered with Bias
	Code        string
	Params      map[string]any
	Batch       []map[string]any
	Objective   string // of a batch: the metric each trial reports as its objective
	Constraint  string
	Feeds       []wireFeed
	Cash        float64
	Commission  float64
	TimeLimit   time.Duration
	MemoryLimit uint64
	TradeFrom   time.Time // jsrt.RunConfig.TradeFrom
	// MaxLogLines and MaxLogBytes let the child stop sending log lines the parent would
	// drop anyway (the parent enforces the cap itself).
	MaxLogLines int
	MaxLogBytes int
}

// message is one frame from the child: exactly one field is set. A child sends Ready when
// it is confined, warmed up and waiting for its request; after the request, any number of
// Progress and Log or Logs frames, and last one of Info, LoadErr, RunErr, Bias or Result; after a batch,
// one Trial frame per parameter set, and last BatchDone; after a constraint, Keep or RunErr.
type message struct {
	Ready    bool
	Progress *progress
	Log      *engine.LogEntry
	Logs     []engine.LogEntry // a run's log lines since the last frame, in order
	Trial    *Trial
	Batch    *batchDone
	Keep     []bool
	Info     *jsrt.StrategyInfo
	LoadErr  *jsrt.LoadError
	RunErr   *runError
	Bias     *bias.Report
	Result   *engine.Result // without its equity curve, which travels in Equity
	Equity   *wireEquity
}

type progress struct{ Current, Total int }

// Trial is the outcome of one parameter set of a batch: its summary, objective and per-bar
// returns, or why it failed.
type Trial struct {
	Index     int // in the batch
	Summary   engine.Summary
	Objective *float64 // nil: the run does not define it
	Bars      int
	Returns   []float64
	Err       *jsrt.RunError
}

type batchDone struct{ Trials int }

// runError is jsrt.RunError on the wire (its cause does not cross processes).
type runError struct {
	Kind    jsrt.ErrorKind
	Message string
	Line    int
}

func init() {
	// Parameter values and defaults are JSON-like values carried in interfaces.
	gob.Register([]any{})
	gob.Register(map[string]any{})
}

// wireFeed is a feed in columns of packed little-endian numbers: gob encodes a time.Time
// through its GobEncode method (a call and an allocation per bar) and a float64 as a
// variable-length integer, while a []byte goes through as one copy. For 5,000 bars this
// takes the transfer from milliseconds to microseconds.
type wireFeed struct {
	Symbol                 string
	Time                   []byte // int64 Unix nanoseconds (bars are between 1900 and 2200)
	Open, High, Low, Close []byte // float64
	Volume                 []byte // int64
}

func toWireFeeds(feeds []engine.Feed) []wireFeed {
	out := make([]wireFeed, len(feeds))
	for i, f := range feeds {
		// Packed straight from the bars: every run sends its feeds, and columns of numbers
		// in between doubled what the service allocated for it.
		n := 8 * len(f.Bars)
		w := wireFeed{Symbol: f.Symbol, Time: make([]byte, n), Open: make([]byte, n), High: make([]byte, n),
			Low: make([]byte, n), Close: make([]byte, n), Volume: make([]byte, n)}
		le := binary.LittleEndian
		for j, b := range f.Bars {
			k := 8 * j
			le.PutUint64(w.Time[k:], uint64(b.Time.UnixNano()))
			le.PutUint64(w.Open[k:], math.Float64bits(b.Open))
			le.PutUint64(w.High[k:], math.Float64bits(b.High))
			le.PutUint64(w.Low[k:], math.Float64bits(b.Low))
			le.PutUint64(w.Close[k:], math.Float64bits(b.Close))
			le.PutUint64(w.Volume[k:], uint64(b.Volume))
		}
		out[i] = w
	}
	return out
}

func fromWireFeeds(in []wireFeed) []engine.Feed {
	out := make([]engine.Feed, len(in))
	for i, w := range in {
		t, o, h, l, c, v := unpackInts(w.Time), unpackFloats(w.Open), unpackFloats(w.High), unpackFloats(w.Low), unpackFloats(w.Close), unpackInts(w.Volume)
		n := min(len(t), len(o), len(h), len(l), len(c), len(v))
		bars := make([]engine.Bar, n)
		for j := range bars {
			bars[j] = engine.Bar{Time: time.Unix(0, t[j]).UTC(), Open: o[j], High: h[j], Low: l[j], Close: c[j], Volume: v[j]}
		}
		out[i] = engine.Feed{Symbol: w.Symbol, Bars: bars}
	}
	return out
}

// wireEquity is a result's equity curve in packed columns (see wireFeed).
type wireEquity struct {
	Time                                         []byte
	Value, Cash, Return, Drawdown, DrawdownMoney []byte
}

func toWireEquity(eq []engine.EquityPoint) *wireEquity {
	n := len(eq)
	t := make([]int64, n)
	cols := [5][]float64{}
	for k := range cols {
		cols[k] = make([]float64, n)
	}
	for i, p := range eq {
		t[i] = p.Time.UnixNano()
		cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i] = p.Value, p.Cash, p.Return, p.Drawdown, p.DrawdownMoney
	}
	return &wireEquity{Time: packInts(t), Value: packFloats(cols[0]), Cash: packFloats(cols[1]),
		Return: packFloats(cols[2]), Drawdown: packFloats(cols[3]), DrawdownMoney: packFloats(cols[4])}
}

// points unpacks the curve; bad reports the first column holding a number that is not
// finite ("" when all are).
func (w *wireEquity) points() (pts []engine.EquityPoint, bad string) {
	// Read straight from the packed bytes, for the same reason as toWireFeeds.
	names := [5]string{"value", "cash", "return", "drawdown", "drawdown_money"}
	cols := [5][]byte{w.Value, w.Cash, w.Return, w.Drawdown, w.DrawdownMoney}
	n := len(w.Time) / 8
	for _, c := range cols {
		n = min(n, len(c)/8)
	}
	le := binary.LittleEndian
	var x [5]float64
	pts = make([]engine.EquityPoint, n)
	for i := range pts {
		for k, c := range cols {
			x[k] = math.Float64frombits(le.Uint64(c[8*i:]))
			if bad == "" && (math.IsNaN(x[k]) || math.IsInf(x[k], 0)) {
				bad = fmt.Sprintf("result.equity[%d].%s", i, names[k])
			}
		}
		pts[i] = engine.EquityPoint{Time: time.Unix(0, int64(le.Uint64(w.Time[8*i:]))).UTC(), Value: x[0], Cash: x[1],
			Return: x[2], Drawdown: x[3], DrawdownMoney: x[4]}
	}
	return pts, bad
}

func packFloats(x []float64) []byte {
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func unpackFloats(b []byte) []float64 {
	x := make([]float64, len(b)/8)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}

func packInts(x []int64) []byte {
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

func unpackInts(b []byte) []int64 {
	x := make([]int64, len(b)/8)
	for i := range x {
		x[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}
