package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// TestSeriesEncodeLikeEncodingJSON checks that the chart arrays' own encoders write exactly
// what encoding/json writes for the plain slices.
func TestSeriesEncodeLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2345e21, -3e-300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.123456789, 100.10000000000001}
	for i := 0; i < 2000; i++ {
		floats = append(floats, (r.Float64()-0.5)*math.Pow(10, float64(r.IntN(60)-30)))
	}
	opt := make([]*float64, len(floats)+1)
	for i := range floats {
		opt[i+1] = &floats[i]
	}
	strs := []string{"2024-01-02", "2024-01-02T15:04:05Z", "", "a\"b", "<&>", "é", "tab\t"}
	bars := engine.RandomWalk(500, 3)
	bars = append(bars, engine.Bar{Time: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), Open: 1e-7, High: 1e22, Low: math.Copysign(0, -1), Close: 3, Volume: -5},
		engine.Bar{Time: time.Date(2024, 1, 2, 14, 30, 0, 0, time.FixedZone("x", 3600)), Volume: math.MaxInt64},
		engine.Bar{Time: time.Date(-20, 1, 2, 0, 0, 0, 0, time.UTC), Volume: math.MinInt64})
	dates := make([]string, len(bars))
	vols := make([]int64, len(bars))
	rows := make([][]any, len(bars))
	points := make([]engine.EquityPoint, len(bars))
	for i, b := range bars {
		points[i].Time = b.Time
		dates[i], vols[i] = results.FormatTime(b.Time), b.Volume
		rows[i] = []any{dates[i], b.Open, b.Close, b.Low, b.High, b.Volume}
	}
	for _, c := range []struct {
		name      string
		own, want any
	}{
		{"floats", floatSeries(floats), floats},
		{"optional floats", optFloatSeries(opt), opt},
		{"volumes", volumeSeries(bars), vols},
		{"strings", stringSeries(strs), strs},
		{"bar dates", barDates(bars), dates},
		{"point dates", pointDates{eq: points}, dates},
		{"picked point dates", pointDates{eq: points, idx: []int{2, 0, len(bars) - 1}}, []string{dates[2], dates[0], dates[len(bars)-1]}},
		{"candles", candleRows(bars), rows},
		{"empty floats", floatSeries{}, []float64{}},
	} {
		got, err := json.Marshal(c.own)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s:\n got %.300s\nwant %.300s", c.name, got, want)
		}
	}
	if got, _ := json.Marshal(floatSeries{1, math.NaN(), math.Inf(1)}); string(got) != "[1,null,null]" {
		t.Errorf("non-finite: %s", got)
	}
}

// TestChartAppendJSONLikeEncoder checks ChartConfig.AppendJSON against what the API wrote
// before it existed: an encoding/json Encoder without HTML escaping.
func TestChartAppendJSONLikeEncoder(t *testing.T) {
	t.Parallel()
	bars := engine.RandomWalk(800, 9)
	eq := make([]engine.EquityPoint, len(bars))
	prev := 10000.0
	for i, b := range bars {
		v := 10000 * b.Close / bars[0].Close
		eq[i] = engine.EquityPoint{Time: b.Time, Value: v, Cash: v / 2, Return: v/prev - 1, Drawdown: float64(i%7) * 0.3, DrawdownMoney: float64(i % 5)}
		prev = v
	}
	eq[3].Value = math.NaN() // written as null by both (the encoder would fail: see below)
	var execs []engine.Execution
	for i := 10; i < len(bars); i += 37 {
		side := "buy"
		if i%2 == 1 {
			side = "sell"
		}
		execs = append(execs, engine.Execution{Time: bars[i].Time, Side: side, Price: bars[i].Close, Size: 10, PnL: float64(i) - 300.5})
	}
	in := ChartInput{InitialCash: 10000, Bars: bars, Equity: eq, Executions: execs}
	for _, kind := range ChartTypes {
		c, err := BuildChart(kind, in)
		if err != nil {
			t.Fatal(err)
		}
		got := string(c.AppendJSON(nil))
		if kind == "equity" { // encoding/json refuses NaN; compare without it
			in2 := in
			in2.Equity = append([]engine.EquityPoint(nil), eq...)
			in2.Equity[3].Value = 1
			c2, _ := BuildChart(kind, in2)
			if !strings.Contains(got, ",null,") {
				t.Errorf("equity: NaN not written as null")
			}
			c, got = c2, string(c2.AppendJSON(nil))
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if want := strings.TrimSuffix(buf.String(), "\n"); got != want {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s differs at byte %d:\n got …%.120s\nwant …%.120s", kind, i, got[max(0, i-40):], want[max(0, i-40):])
		}
	}
}

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("client gone")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestChartWriteJSONStreams checks that WriteJSON writes what AppendJSON appends, in pieces
// of about spillSize (never the whole chart at once), and stops with its writer's error.
func TestChartWriteJSONStreams(t *testing.T) {
	t.Parallel()
	bars := engine.RandomWalk(20000, 4)
	c, err := BuildChart("candlestick", ChartInput{Bars: bars})
	if err != nil {
		t.Fatal(err)
	}
	want := "<" + string(c.AppendJSON(nil)) + ">"
	var got pieces
	if err := c.WriteJSON(&got, "<", ">"); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("WriteJSON wrote %d bytes unlike AppendJSON's %d", got.Len(), len(want))
	}
	if got.largest > spillSize+1024 || got.writes < len(want)/(spillSize+1024) {
		t.Errorf("%d writes, the largest %d bytes, for %d bytes: want pieces of about %d", got.writes, got.largest, len(want), spillSize)
	}
	if err := c.WriteJSON(&failAfter{n: 3 * spillSize}, "", ""); err == nil || err.Error() != "client gone" {
		t.Errorf("a failing writer: %v", err)
	}
}

// pieces records what it is written and how.
type pieces struct {
	bytes.Buffer
	writes, largest int
}

func (p *pieces) Write(b []byte) (int, error) {
	p.writes++
	p.largest = max(p.largest, len(b))
	return p.Buffer.Write(b)
}
