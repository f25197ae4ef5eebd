package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/backtestd/backtestd/internal/engine"
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
	appendJSON(b []byte) []byte
	size() int
}

// AppendJSON appends c as JSON to b.
func (c *ChartConfig) AppendJSON(b []byte) []byte {
	b = slices.Grow(b, c.sizeHint())
	b = append(b, `{"title":`...)
	b = appendString(b, c.Title)
	b = append(b, `,"type":`...)
	b = appendString(b, c.Type)
	b = append(b, `,"series":`...)
	if c.Series == nil {
		b = append(b, "null"...)
	} else {
		b = appendValue(b, c.Series)
	}
	for _, f := range [...]struct {
		key string
		v   any
	}{{"xAxis", c.XAxis}, {"yAxis", c.YAxis}, {"grid", c.Grid}, {"legend", c.Legend}, {"tooltip", c.Tooltip},
		{"dataZoom", c.DataZoom}, {"visualMap", c.VisualMap}, {"axisPointer", c.AxisPtr}} {
		if f.v == nil { // omitempty
			continue
		}
		b = append(b, ',')
		b = appendString(b, f.key)
		b = append(b, ':')
		b = appendValue(b, f.v)
	}
	if c.Sampling != nil {
		b = append(b, `,"sampling":`...)
		b = appendEncoded(b, c.Sampling)
	}
	return append(b, '}')
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
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case appender:
		return v.appendJSON(b)
	case string:
		return appendString(b, v)
	case float64:
		return appendFloat(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	case obj:
		if v == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendValue(b, v[k])
		}
		return append(b, '}')
	case []obj:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case []any:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case [][]any:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case []string:
		if v == nil {
			return append(b, "null"...)
		}
		return stringSeries(v).appendJSON(b)
	}
	return appendEncoded(b, v)
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

// floatSeries is a []float64 that encodes without reflection.
type floatSeries []float64

func (s floatSeries) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

func (s floatSeries) size() int { return len(s) * 20 }

func (s floatSeries) appendJSON(b []byte) []byte { return appendArray(b, s, appendFloat) }

// appendArray appends s as a JSON array, each element written by elem.
func appendArray[T any](b []byte, s []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// optFloatSeries is a []*float64 (nil is null) that encodes without reflection.
type optFloatSeries []*float64

func (s optFloatSeries) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

func (s optFloatSeries) size() int { return len(s) * 20 }

func (s optFloatSeries) appendJSON(b []byte) []byte {
	return appendArray(b, s, func(b []byte, v *float64) []byte {
		if v == nil {
			return append(b, "null"...)
		}
		return appendFloat(b, *v)
	})
}

// intSeries is a []int64 that encodes without reflection.
type intSeries []int64

func (s intSeries) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

func (s intSeries) size() int { return len(s) * 12 }

func (s intSeries) appendJSON(b []byte) []byte {
	return appendArray(b, s, func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) })
}

// stringSeries is a []string (dates, labels) that encodes without reflection.
type stringSeries []string

func (s stringSeries) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

func (s stringSeries) size() int { return len(s) * 24 }

func (s stringSeries) appendJSON(b []byte) []byte { return appendArray(b, s, appendString) }

// candleRows are the candlestick series' rows [date, open, close, low, high, volume].
type candleRows struct {
	dates []string
	bars  []engine.Bar
}

func (c candleRows) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

func (c candleRows) size() int { return len(c.bars) * 110 }

func (c candleRows) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, bar := range c.bars {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, c.dates[i])
		for _, v := range [...]float64{bar.Open, bar.Close, bar.Low, bar.High} {
			b = append(b, ',')
			b = appendFloat(b, v)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, bar.Volume, 10)
		b = append(b, ']')
	}
	return append(b, ']')
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
