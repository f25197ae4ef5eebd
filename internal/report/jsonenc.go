package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// A chart of 10,000 bars is about 1.5 MB of JSON. encoding/json spent most of a chart
// request on it: reflection over []any rows and boxed floats, and, for values with their own
// MarshalJSON, a second pass that re-validates their output. ChartConfig.AppendJSON writes
// the whole option object in one pass instead, byte for byte what an encoding/json Encoder
// with SetEscapeHTML(false) writes (without its newline), except that a non-finite number
// becomes null instead of failing the whole answer. The long arrays (one element per bar)
// are typed so that they also encode quickly through encoding/json (exports, tests).

// appender is a value that writes its own JSON and estimates its size.
type appender interface {
	appendTo(o *jsonOut)
	size() int
}

// spillSize is how much JSON jsonOut collects before handing it to its writer.
const spillSize = 64 << 10

// jsonOut collects JSON in a buffer. With a writer it hands the buffer on every spillSize
// bytes (the long arrays call spill after each element), so a chart of any size is written
// through a buffer of about spillSize: a 300,000-bar candlestick chart is some 60 MB of JSON.
type jsonOut struct {
	b   []byte
	w   io.Writer
	err error // the writer's first error; later output is dropped
}

// spill hands the buffer to the writer once it holds spillSize bytes.
func (o *jsonOut) spill() {
	if o.w != nil && len(o.b) >= spillSize {
		o.flush()
	}
}

// flush hands the buffer to the writer.
func (o *jsonOut) flush() {
	if o.err == nil && len(o.b) > 0 {
		_, o.err = o.w.Write(o.b)
	}
	o.b = o.b[:0]
}

// AppendJSON appends c as JSON to b.
func (c *ChartConfig) AppendJSON(b []byte) []byte {
	o := jsonOut{b: slices.Grow(b, c.sizeHint())}
	c.appendTo(&o)
	return o.b
}

// WriteJSON writes prefix, c as JSON and suffix to w as it goes, through a small buffer
// instead of the whole text at once. Its error is w's.
func (c *ChartConfig) WriteJSON(w io.Writer, prefix, suffix string) error {
	o := jsonOut{b: make([]byte, 0, spillSize+4<<10), w: w}
	o.b = append(o.b, prefix...)
	c.appendTo(&o)
	o.b = append(o.b, suffix...)
	o.flush()
	return o.err
}

func (c *ChartConfig) appendTo(o *jsonOut) {
	o.b = append(o.b, `{"title":`...)
	o.b = appendString(o.b, c.Title)
	o.b = append(o.b, `,"type":`...)
	o.b = appendString(o.b, c.Type)
	o.b = append(o.b, `,"series":`...)
	if c.Series == nil {
		o.b = append(o.b, "null"...)
	} else {
		appendValue(o, c.Series)
	}
	for _, f := range [...]struct {
		key string
		v   any
	}{{"xAxis", c.XAxis}, {"yAxis", c.YAxis}, {"grid", c.Grid}, {"legend", c.Legend}, {"tooltip", c.Tooltip},
		{"dataZoom", c.DataZoom}, {"visualMap", c.VisualMap}, {"axisPointer", c.AxisPtr}} {
		if f.v == nil { // omitempty
			continue
		}
		o.b = append(o.b, ',')
		o.b = appendString(o.b, f.key)
		o.b = append(o.b, ':')
		appendValue(o, f.v)
	}
	if c.Sampling != nil {
		o.b = append(o.b, `,"sampling":`...)
		o.b = appendEncoded(o.b, c.Sampling)
	}
	o.b = append(o.b, '}')
}

// sizeHint estimates the encoded size from the long arrays of the series and axes, so that
// AppendJSON allocates its buffer once.
func (c *ChartConfig) sizeHint() int {
	n := 4 << 10
	for _, s := range c.Series {
		if a, ok := s["data"].(appender); ok {
			n += a.size()
		}
	}
	for _, ax := range []any{c.XAxis, c.YAxis} {
		switch ax := ax.(type) {
		case obj:
			if a, ok := ax["data"].(appender); ok {
				n += a.size()
			}
		case []obj:
			for _, o := range ax {
				if a, ok := o["data"].(appender); ok {
					n += a.size()
				}
			}
		}
	}
	return n
}

// appendValue writes the values chart options are built from; anything else goes through
// encoding/json.
func appendValue(o *jsonOut, v any) {
	switch v := v.(type) {
	case appender:
		v.appendTo(o)
	case string:
		o.b = appendString(o.b, v)
	case float64:
		o.b = appendFloat(o.b, v)
	case int:
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	case int64:
		o.b = strconv.AppendInt(o.b, v, 10)
	case bool:
		o.b = strconv.AppendBool(o.b, v)
	case obj:
		if v == nil {
			o.b = append(o.b, "null"...)
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o.b = append(o.b, '{')
		for i, k := range keys {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendString(o.b, k)
			o.b = append(o.b, ':')
			appendValue(o, v[k])
		}
		o.b = append(o.b, '}')
	case []obj:
		appendValues(o, v)
	case []any:
		appendValues(o, v)
	case [][]any:
		appendValues(o, v)
	case []string:
		if v == nil {
			o.b = append(o.b, "null"...)
			return
		}
		stringSeries(v).appendTo(o)
	default:
		o.b = appendEncoded(o.b, v)
	}
}

// appendValues writes s as a JSON array (null when nil) through appendValue.
func appendValues[T any](o *jsonOut, s []T) {
	if s == nil {
		o.b = append(o.b, "null"...)
		return
	}
	appendArray(o, s, func(o *jsonOut, v T) { appendValue(o, v) })
}

// appendEncoded writes v through encoding/json without HTML escaping.
func appendEncoded(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}

// marshal is MarshalJSON of an appender.
func marshal(a appender) ([]byte, error) {
	var o jsonOut
	a.appendTo(&o)
	return o.b, nil
}

// appendArray appends s as a JSON array, each element written by elem, spilling to the
// writer as it goes.
func appendArray[T any](o *jsonOut, s []T, elem func(*jsonOut, T)) {
	o.b = append(o.b, '[')
	for i, v := range s {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		elem(o, v)
		o.spill()
	}
	o.b = append(o.b, ']')
}

// floatSeries is a []float64 that encodes without reflection; NaN and infinities are null.
type floatSeries []float64

func (s floatSeries) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s floatSeries) size() int { return len(s) * 20 }

func (s floatSeries) appendTo(o *jsonOut) {
	appendArray(o, s, func(o *jsonOut, v float64) { o.b = appendFloat(o.b, v) })
}

// optFloatSeries is a []*float64 (nil is null) that encodes without reflection.
type optFloatSeries []*float64

func (s optFloatSeries) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s optFloatSeries) size() int { return len(s) * 20 }

func (s optFloatSeries) appendTo(o *jsonOut) {
	appendArray(o, s, func(o *jsonOut, v *float64) {
		if v == nil {
			o.b = append(o.b, "null"...)
			return
		}
		o.b = appendFloat(o.b, *v)
	})
}

// stringSeries is a []string (labels) that encodes without reflection.
type stringSeries []string

func (s stringSeries) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s stringSeries) size() int { return len(s) * 24 }

func (s stringSeries) appendTo(o *jsonOut) {
	appendArray(o, s, func(o *jsonOut, v string) { o.b = appendString(o.b, v) })
}

// barDates is a category axis of the bars' dates, written as results.FormatTime writes
// them when the JSON is, instead of being kept as one string per bar.
type barDates []engine.Bar

func (s barDates) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s barDates) size() int { return len(s) * 24 }

func (s barDates) appendTo(o *jsonOut) {
	appendArray(o, s, func(o *jsonOut, b engine.Bar) { o.b = appendTime(o.b, b.Time) })
}

// pointDates is a category axis of the dates of the equity points at idx (all when idx is
// nil), written as barDates are.
type pointDates struct {
	eq  []engine.EquityPoint
	idx []int
}

func (s pointDates) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s pointDates) size() int { return s.len() * 24 }

func (s pointDates) len() int {
	if s.idx == nil {
		return len(s.eq)
	}
	return len(s.idx)
}

func (s pointDates) appendTo(o *jsonOut) {
	if s.idx == nil {
		appendArray(o, s.eq, func(o *jsonOut, e engine.EquityPoint) { o.b = appendTime(o.b, e.Time) })
		return
	}
	appendArray(o, s.idx, func(o *jsonOut, i int) { o.b = appendTime(o.b, s.eq[i].Time) })
}

// appendTime writes t as a JSON string as results.FormatTime writes it.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = results.AppendTime(b, t)
	return append(b, '"')
}

// volumeSeries is the bars' volumes.
type volumeSeries []engine.Bar

func (s volumeSeries) MarshalJSON() ([]byte, error) { return marshal(s) }

func (s volumeSeries) size() int { return len(s) * 12 }

func (s volumeSeries) appendTo(o *jsonOut) {
	appendArray(o, s, func(o *jsonOut, b engine.Bar) { o.b = strconv.AppendInt(o.b, b.Volume, 10) })
}

// candleRows are the candlestick series' rows [date, open, close, low, high, volume].
type candleRows []engine.Bar

func (c candleRows) MarshalJSON() ([]byte, error) { return marshal(c) }

func (c candleRows) size() int { return len(c) * 110 }

func (c candleRows) appendTo(o *jsonOut) {
	appendArray(o, c, func(o *jsonOut, bar engine.Bar) {
		o.b = append(o.b, '[')
		o.b = appendTime(o.b, bar.Time)
		for _, v := range [...]float64{bar.Open, bar.Close, bar.Low, bar.High} {
			o.b = append(o.b, ',')
			o.b = appendFloat(o.b, v)
		}
		o.b = append(o.b, ',')
		o.b = strconv.AppendInt(o.b, bar.Volume, 10)
		o.b = append(o.b, ']')
	})
}

// appendFloat writes f as encoding/json does (shortest representation; exponent form
// below 1e-6 and from 1e21), and null when f is not finite.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString quotes s directly when it needs no escaping (dates and labels always), and
// through encoding/json (without HTML escaping) otherwise.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return appendEncoded(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
