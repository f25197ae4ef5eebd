package report_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// chartJSON round-trips a chart through JSON, as a client sees it.
func chartJSON(t *testing.T, c *report.ChartConfig) map[string]any {
	t.Helper()
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"title", "type", "series"} {
		if _, ok := m[k]; !ok {
			t.Errorf("chart lacks %s", k)
		}
	}
	return m
}

func series(m map[string]any, i int) map[string]any {
	return m["series"].([]any)[i].(map[string]any)
}

func floats(v any) []float64 {
	var out []float64
	for _, x := range v.([]any) {
		if x == nil {
			out = append(out, math.NaN())
		} else {
			out = append(out, x.(float64))
		}
	}
	return out
}

func TestCharts(t *testing.T) {
	t.Parallel()
	b, bars, res := resultstest.SmallRun(t)
	get := func(kind string) map[string]any {
		c, err := service(b).Chart(b.Ctx, "task_1", kind, "", report.View{})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return chartJSON(t, c)
	}

	t.Run("candlestick", func(t *testing.T) {
		m := get("candlestick")
		if m["type"] != "candlestick" || len(m["series"].([]any)) != 5 {
			t.Fatalf("type %v, %d series", m["type"], len(m["series"].([]any)))
		}
		k := series(m, 0)
		rows := k["data"].([]any)
		if k["type"] != "candlestick" || len(rows) != len(bars) {
			t.Fatalf("candles: %v, %d rows", k["type"], len(rows))
		}
		r := rows[3].([]any)
		if r[0] != bars[3].Time.Format("2006-01-02") || r[1] != bars[3].Open || r[2] != bars[3].Close || r[3] != bars[3].Low || r[4] != bars[3].High || r[5] != float64(bars[3].Volume) {
			t.Errorf("row 3 %v vs bar %+v", r, bars[3])
		}
		st := k["itemStyle"].(map[string]any)
		if st["color"] != "#ef5350" || st["color0"] != "#26a69a" {
			t.Errorf("candle colours %v", st)
		}
		for i, n := range []int{5, 10, 20} {
			s := series(m, 1+i)
			if s["name"] != fmt.Sprintf("MA%d", n) || s["smooth"] != true || s["lineStyle"].(map[string]any)["opacity"] != 0.8 {
				t.Errorf("MA%d series %v", n, s)
			}
			vals := floats(s["data"])
			if !math.IsNaN(vals[n-2]) || math.IsNaN(vals[n-1]) {
				t.Errorf("MA%d warm-up wrong", n)
			}
			for _, at := range []int{n - 1, 100, len(bars) - 1} {
				sum := 0.0
				for j := at - n + 1; j <= at; j++ {
					sum += bars[j].Close
				}
				if !resultstest.Near(vals[at], sum/float64(n)) {
					t.Errorf("MA%d[%d] = %v, want %v", n, at, vals[at], sum/float64(n))
				}
			}
		}
		v := series(m, 4)
		if v["type"] != "bar" || v["xAxisIndex"] != 1.0 || v["yAxisIndex"] != 1.0 || v["itemStyle"].(map[string]any)["color"] != "#7fbe9e" {
			t.Errorf("volume series %v", v)
		}
		if vols := floats(v["data"]); vols[7] != float64(bars[7].Volume) {
			t.Errorf("volume 7: %v", vols[7])
		}
		grid := m["grid"].([]any)
		if len(grid) != 2 || grid[1].(map[string]any)["top"] != "70%" {
			t.Errorf("grid %v", grid)
		}
	})

	t.Run("equity", func(t *testing.T) {
		m := get("equity")
		eq, bench := series(m, 0), series(m, 1)
		if eq["areaStyle"] == nil || eq["lineStyle"].(map[string]any)["width"] != 2.0 || bench["lineStyle"].(map[string]any)["type"] != "dashed" {
			t.Errorf("styles: %v / %v", eq, bench)
		}
		ev, bv := floats(eq["data"]), floats(bench["data"])
		for _, i := range []int{0, 400, len(bars) - 1} {
			if ev[i] != res.Equity[i].Value {
				t.Errorf("equity[%d] = %v, want %v", i, ev[i], res.Equity[i].Value)
			}
			if want := 10000 * bars[i].Close / bars[0].Close; !resultstest.Near(bv[i], want) {
				t.Errorf("benchmark[%d] = %v, want %v", i, bv[i], want)
			}
		}
	})

	t.Run("drawdown", func(t *testing.T) {
		m := get("drawdown")
		s := series(m, 0)
		if s["lineStyle"].(map[string]any)["color"] != "#ef5350" || s["areaStyle"].(map[string]any)["color"] != "rgba(239, 83, 80, 0.3)" {
			t.Errorf("drawdown style %v", s)
		}
		vals := floats(s["data"])
		peak := 0.0
		for i, p := range res.Equity {
			peak = math.Max(peak, p.Value)
			if want := 100 * (peak - p.Value) / peak; math.Abs(vals[i]-want) > 1e-9 {
				t.Fatalf("drawdown[%d] = %v, want %v", i, vals[i], want)
			}
		}
	})

	t.Run("underwater", func(t *testing.T) {
		vals := floats(series(get("underwater"), 0)["data"])
		cum, peak := 1.0, 0.0
		prev := 10000.0
		for i, p := range res.Equity {
			cum *= p.Value / prev
			prev = p.Value
			peak = math.Max(peak, cum)
			if want := -100 * (peak - cum) / peak; math.Abs(vals[i]-want) > 1e-9 {
				t.Fatalf("underwater[%d] = %v, want %v", i, vals[i], want)
			}
		}
	})

	t.Run("monthly_heatmap and yearly_returns", func(t *testing.T) {
		months := map[[2]int]float64{}
		years := map[int]float64{}
		prev := 10000.0
		for _, p := range res.Equity {
			r := p.Value/prev - 1
			prev = p.Value
			months[[2]int{p.Time.Year(), int(p.Time.Month())}] += r * 100
			years[p.Time.Year()] += r * 100
		}
		m := get("monthly_heatmap")
		ylabels := m["yAxis"].(map[string]any)["data"].([]any)
		xlabels := m["xAxis"].(map[string]any)["data"].([]any)
		if len(xlabels) != 12 || xlabels[0] != "Jan" || xlabels[11] != "Dec" || len(ylabels) != len(years) {
			t.Fatalf("axes %v / %v", xlabels, ylabels)
		}
		cells := series(m, 0)["data"].([]any)
		if len(cells) != 12*len(years) {
			t.Fatalf("%d cells", len(cells))
		}
		for _, c := range cells {
			cell := c.([]any)
			mi, yi, v := int(cell[0].(float64)), int(cell[1].(float64)), cell[2].(float64)
			y := mustAtoi(ylabels[yi].(string))
			if want := months[[2]int{y, mi + 1}]; math.Abs(v-want) > 1e-9 { // missing months are 0
				t.Errorf("%d-%02d: %v, want %v", y, mi+1, v, want)
			}
		}
		yr := get("yearly_returns")
		bars := series(yr, 0)["data"].([]any)
		labels := yr["xAxis"].(map[string]any)["data"].([]any)
		for i, x := range bars {
			item := x.(map[string]any)
			y := mustAtoi(labels[i].(string))
			v := item["value"].(float64)
			if math.Abs(v-years[y]) > 1e-9 {
				t.Errorf("year %d: %v, want %v", y, v, years[y])
			}
			want := "#ef5350"
			if v < 0 {
				want = "#26a69a"
			}
			if item["itemStyle"].(map[string]any)["color"] != want {
				t.Errorf("year %d coloured %v", y, item["itemStyle"])
			}
		}
	})

	t.Run("trades", func(t *testing.T) {
		m := get("trades")
		buys, sells := series(m, 1)["data"].([]any), series(m, 2)["data"].([]any)
		nb, ns := 0, 0
		for _, e := range res.Executions {
			if e.Side == "buy" {
				nb++
			} else {
				ns++
			}
		}
		if len(buys) != nb || len(sells) != ns || len(floats(series(m, 0)["data"])) != len(bars) {
			t.Fatalf("markers %d/%d, want %d/%d", len(buys), len(sells), nb, ns)
		}
		first := buys[0].([]any)
		if first[0] != res.Executions[0].Time.Format("2006-01-02") || first[1] != res.Executions[0].Price {
			t.Errorf("first marker %v vs %+v", first, res.Executions[0])
		}
	})

	if _, err := service(b).Chart(b.Ctx, "task_1", "pie", "", report.View{}); resultstest.Detail(err) != "Unsupported chart type: pie" {
		t.Errorf("pie: %v", err)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestLineChartsSampleLongResults stores a 60,000-bar five-minute run: its line charts
// carry a sample of DefaultMaxPoints points (the same for equity, drawdown and underwater,
// so they overlay), a range within it every point exactly, and max_points 0 every point.
func TestLineChartsSampleLongResults(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.FiveMinuteWalk(60000, 3, time.Date(2024, 1, 2, 14, 30, 0, 0, time.UTC))
	res := resultstest.RunSMA(t, bars, map[string]any{"fast": 10, "slow": 30, "size": 10}, 10000)
	b.Task(t, "task_1", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "{}")
	if err := results.Save(b.Ctx, b.Store.Pool, "task_1", 1, res, nil); err != nil {
		t.Fatal(err)
	}
	svc := service(b)
	view := report.View{MaxPoints: report.DefaultMaxPoints}
	var dates []any
	for _, kind := range []string{"equity", "drawdown", "underwater"} {
		c, err := svc.Chart(b.Ctx, "task_1", kind, "", view)
		if err != nil {
			t.Fatal(err)
		}
		m := chartJSON(t, c)
		s, _ := m["sampling"].(map[string]any)
		if s == nil || s["points"] != float64(report.DefaultMaxPoints) || s["of"] != 60000.0 ||
			s["from"] != results.FormatTime(bars[0].Time) || s["to"] != results.FormatTime(bars[len(bars)-1].Time) {
			t.Errorf("%s: sampling %v", kind, m["sampling"])
		}
		cats := m["xAxis"].(map[string]any)["data"].([]any)
		if len(cats) != report.DefaultMaxPoints || len(floats(series(m, 0)["data"])) != len(cats) {
			t.Errorf("%s: %d categories, %d values", kind, len(cats), len(floats(series(m, 0)["data"])))
		}
		if dates == nil {
			dates = cats
		} else if !slices.Equal(cats, dates) {
			t.Errorf("%s samples other points than the equity chart", kind)
		}
	}

	// A zoomed range of 1,000 points: every one, exactly as stored.
	from, to := res.Equity[30000].Time, res.Equity[30999].Time
	c, err := svc.Chart(b.Ctx, "task_1", "equity", "", report.View{From: from, To: to, MaxPoints: report.DefaultMaxPoints})
	if err != nil {
		t.Fatal(err)
	}
	m := chartJSON(t, c)
	if m["sampling"] != nil {
		t.Errorf("a 1,000-point range is sampled: %v", m["sampling"])
	}
	vals := floats(series(m, 0)["data"])
	if len(vals) != 1000 {
		t.Fatalf("range of %d points, want 1000", len(vals))
	}
	for i, v := range vals {
		if v != res.Equity[30000+i].Value {
			t.Fatalf("point %d of the range: %v, stored %v", i, v, res.Equity[30000+i].Value)
		}
	}
	all, err := svc.Chart(b.Ctx, "task_1", "drawdown", "", report.View{})
	if err != nil {
		t.Fatal(err)
	}
	if m := chartJSON(t, all); m["sampling"] != nil || len(floats(series(m, 0)["data"])) != 60000 {
		t.Errorf("max_points 0: %d points, sampling %v", len(floats(series(m, 0)["data"])), m["sampling"])
	}
}
