package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
)

// ChartConfig is api/openapi.yaml's ChartConfig: an ECharts option object with a fixed
// title per chart type. Series are ECharts series definitions.
type ChartConfig struct {
	Title     string `json:"title"`
	Type      string `json:"type"` // candlestick, line, bar or scatter
	Series    []obj  `json:"series"`
	XAxis     any    `json:"xAxis,omitempty"`
	YAxis     any    `json:"yAxis,omitempty"`
	Grid      any    `json:"grid,omitempty"`
	Legend    any    `json:"legend,omitempty"`
	Tooltip   any    `json:"tooltip,omitempty"`
	DataZoom  any    `json:"dataZoom,omitempty"`
	VisualMap any    `json:"visualMap,omitempty"`
	AxisPtr   any    `json:"axisPointer,omitempty"`
	// Sampling is set when a line chart shows a sample of its points (View).
	Sampling *Sampling `json:"sampling,omitempty"`
}

type obj = map[string]any

// Chart colours.
const (
	ColorUp       = "#ef5350" // rising candles, positive bars
	ColorDown     = "#26a69a" // falling candles, negative bars
	ColorVolume   = "#7fbe9e"
	ColorDrawdown = "#ef5350"
	AreaDrawdown  = "rgba(239, 83, 80, 0.3)"
)

// ChartTypes are the supported chart_type values.
var ChartTypes = []string{"candlestick", "equity", "drawdown", "underwater", "monthly_heatmap", "yearly_returns", "trades",
	"rolling_sharpe", "returns_histogram"}

// MonthNames label the heatmap's x axis.
var MonthNames = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// ChartInput is what the chart builders read: the bars the backtest ran on, the equity
// curve and the executions; for the equity chart, the benchmark's bars.
type ChartInput struct {
	InitialCash float64
	Bars        []engine.Bar
	Equity      []engine.EquityPoint
	Executions  []engine.Execution
	Benchmark   string       // the benchmark's symbol
	BenchBars   []engine.Bar // its bars
	View        View         // the range and number of points of the line charts
}

// chartParts is what each chart reads of the stored result: the candlestick chart only the
// run, the equity chart only the curve's times and values.
var chartParts = map[string]results.Parts{
	"candlestick": 0, "equity": results.EquityValues, "drawdown": results.EquityFull, "underwater": results.EquityFull,
	"monthly_heatmap": results.EquityFull, "yearly_returns": results.EquityFull, "trades": results.Executions,
	"rolling_sharpe": results.EquityValues, "returns_histogram": results.EquityValues,
}

// Chart builds chart_type for taskID's result. The bars come from the market data the task
// ran on.
//
// symbol picks the feed of a several-symbol task the candlestick and trades charts show
// (its bars and its fills); "" is the first. A feed the strategy joined (static chain or
// rollover) is one of them, its bars those the strategy saw, taken from its contracts; a
// contract's own bars stay available by its symbol. The equity chart's dashed line is the
// task's benchmark bought and held.
//
// view narrows and thins the line charts (equity, drawdown, underwater); the others ignore it.
func (svc *Service) Chart(ctx context.Context, taskID, chartType, symbol string, view View) (*ChartConfig, error) {
	parts, ok := chartParts[chartType]
	if !ok {
		return nil, apperr.Invalid("Unsupported chart type: %s", chartType)
	}
	s, err := svc.results.Load(ctx, taskID, parts)
	if err != nil {
		return nil, err
	}
	feeds, joined := s.Run.Symbols, map[string][]engine.Span(nil)
	price := chartType == "candlestick" || chartType == "trades"
	if price {
		// A run that joined feeds (static chain or rollover) traded the joined ones: its
		// price charts show those, as the strategy saw them.
		if feeds, joined, err = svc.chartFeeds(ctx, s); err != nil {
			return nil, err
		}
	}
	if symbol == "" {
		symbol = feeds[0]
	} else if !slices.Contains(feeds, symbol) && !slices.Contains(s.Run.Symbols, symbol) {
		return nil, apperr.Invalid("Symbol %s is not a feed of task %s (its feeds: %s)", symbol, taskID, strings.Join(feeds, ", "))
	}
	in := ChartInput{InitialCash: s.Run.InitialCash, Equity: s.Equity, Executions: s.Executions, Benchmark: s.Run.Benchmark, View: view}
	if len(s.Run.Symbols) > 1 || len(feeds) > 1 {
		in.Executions = slices.DeleteFunc(slices.Clone(s.Executions), func(x engine.Execution) bool { return x.Symbol != symbol })
	}
	switch {
	case price && joined[symbol] != nil:
		in.Bars, err = svc.joinedBars(ctx, s.Run, joined[symbol])
	case price:
		in.Bars, err = svc.runBars(ctx, s.Run, symbol)
	case chartType == "equity":
		in.BenchBars, err = svc.runBars(ctx, s.Run, s.Run.Benchmark)
	}
	if err != nil {
		return nil, err
	}
	return BuildChart(chartType, in)
}

// chartFeeds are the feeds s's price charts (candlestick and trades) show, in order: the
// task's symbols, or, when its strategy joined feeds (static chain or rollover), the feeds
// the strategy traded, a joined one in place of its contracts (as the results page lists
// them from the symbols route); with the spans of each joined feed by its symbol.
func (svc *Service) chartFeeds(ctx context.Context, s *results.Stored) ([]string, map[string][]engine.Span, error) {
	if len(s.Run.Symbols) < 2 { // a feed joined of one is that feed's bars: no read needed
		return s.Run.Symbols, nil, nil
	}
	rows, err := svc.results.Symbols(ctx, s.TaskID)
	if err != nil {
		return nil, nil, err
	}
	var joined map[string][]engine.Span
	var feeds []string
	for _, r := range rows {
		if len(r.Joined) > 0 {
			if joined == nil {
				joined = map[string][]engine.Span{}
			}
			joined[r.Symbol] = r.Joined
		}
		if !slices.Contains(feeds, r.Symbol) { // a resampled feed repeats its source's symbol
			feeds = append(feeds, r.Symbol)
		}
	}
	if joined == nil {
		return s.Run.Symbols, nil, nil
	}
	return feeds, joined, nil
}

// joinedBars builds a joined feed again from its spans: each span's bars of its contract,
// as the run read them (one contract at a time: a chart holds about the joined feed's bars).
func (svc *Service) joinedBars(ctx context.Context, run results.Run, spans []engine.Span) ([]engine.Bar, error) {
	var out []engine.Bar
	for _, sp := range spans {
		bars, err := svc.runBars(ctx, run, sp.Symbol)
		if err != nil {
			return nil, err
		}
		lo, _ := slices.BinarySearchFunc(bars, sp.First, func(b engine.Bar, t time.Time) int { return b.Time.Compare(t) })
		hi := lo
		for hi < len(bars) && !bars[hi].Time.After(sp.Last) {
			hi++
		}
		out = append(out, bars[lo:hi]...)
	}
	return out, nil
}

// runBars reads the bars of symbol the run ran on; none when they have since been deleted.
func (svc *Service) runBars(ctx context.Context, run results.Run, symbol string) ([]engine.Bar, error) {
	bars, _, err := svc.bars(ctx, run.DataSource, symbol, run.StartDate, run.EndDate, run.Timeframe)
	if err != nil {
		if _, isApp := apperr.As(err); isApp { // the bars are gone: chart what is stored
			return nil, nil
		}
		return nil, err
	}
	return bars, nil
}

// BuildChart builds a chart from its input.
func BuildChart(chartType string, in ChartInput) (*ChartConfig, error) {
	switch chartType {
	case "candlestick":
		return candlestick(in.Bars, in.View.MovingAverages), nil
	case "equity":
		return equity(in), nil
	case "drawdown":
		return drawdown(in), nil
	case "underwater":
		return underwater(in), nil
	case "monthly_heatmap":
		return monthlyHeatmap(in), nil
	case "yearly_returns":
		return yearlyReturns(in), nil
	case "trades":
		return tradesChart(in), nil
	case "rolling_sharpe":
		return rollingSharpe(in), nil
	case "returns_histogram":
		return returnsHistogram(in), nil
	}
	return nil, apperr.Invalid("Unsupported chart type: %s", chartType)
}

func interaction() (tooltip, axisPointer any, zoom func(axes ...int) any) {
	tooltip = obj{"trigger": "axis", "axisPointer": obj{"type": "cross"}}
	axisPointer = obj{"link": []obj{{"xAxisIndex": "all"}}}
	zoom = func(axes ...int) any {
		return []obj{{"type": "inside", "xAxisIndex": axes}, {"type": "slider", "xAxisIndex": axes}}
	}
	return
}

func categoryAxis(dates appender, extra obj) obj {
	a := obj{"type": "category", "data": dates, "boundaryGap": false}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

// closeSMA is the engine's simple moving average of closes over n bars (the strategies' own
// ind.SMA), NaN (written as null) before n bars.
func closeSMA(closes []float64, n int) floatSeries {
	ma := engine.SMA(engine.Series{Vals: closes}, n)
	for i := range min(ma.First, len(ma.Vals)) {
		ma.Vals[i] = math.NaN()
	}
	return ma.Vals
}

// DefaultMovingAverages are the candlestick chart's SMA periods unless a View names others.
var DefaultMovingAverages = []int{5, 10, 20}

func candlestick(bars []engine.Bar, periods []int) *ChartConfig {
	if len(periods) == 0 {
		periods = DefaultMovingAverages
	}
	// The dates, rows and volumes are written from the bars as the JSON is: a chart of
	// 300,000 bars keeps only its moving averages besides them.
	dates := barDates(bars)
	closes := make([]float64, len(bars))
	for i, b := range bars {
		closes[i] = b.Close
	}
	series := []obj{{
		"name": "K-Line", "type": "candlestick", "data": candleRows(bars),
		"encode":    obj{"x": 0, "y": []int{1, 2, 3, 4}},
		"itemStyle": obj{"color": ColorUp, "color0": ColorDown, "borderColor": ColorUp, "borderColor0": ColorDown},
	}}
	legend := []string{"K-Line"}
	for _, n := range periods {
		legend = append(legend, fmt.Sprintf("MA%d", n))
		series = append(series, obj{
			"name": fmt.Sprintf("MA%d", n), "type": "line", "data": closeSMA(closes, n), "smooth": true,
			"showSymbol": false, "lineStyle": obj{"opacity": 0.8, "width": 1},
		})
	}
	series = append(series, obj{
		"name": "Volume", "type": "bar", "xAxisIndex": 1, "yAxisIndex": 1, "data": volumeSeries(bars),
		"itemStyle": obj{"color": ColorVolume},
	})
	tip, ptr, zoom := interaction()
	return &ChartConfig{
		Title: "K-Line Chart", Type: "candlestick", Series: series,
		XAxis: []obj{
			categoryAxis(dates, obj{"gridIndex": 0, "boundaryGap": true}),
			categoryAxis(dates, obj{"gridIndex": 1, "boundaryGap": true, "axisLabel": obj{"show": false}}),
		},
		YAxis: []obj{{"type": "value", "scale": true, "gridIndex": 0}, {"type": "value", "scale": true, "gridIndex": 1, "splitNumber": 2}},
		// Two rows splitting the height 70% / 30%: the price row ends where the volume row starts.
		Grid: []obj{
			{"left": "8%", "right": "4%", "top": "8%", "height": "56%"},
			{"left": "8%", "right": "4%", "top": "70%", "height": "22%"},
		},
		Legend: obj{"data": append(legend, "Volume")}, Tooltip: tip, AxisPtr: ptr,
		DataZoom: zoom(0, 1),
	}
}

// BenchmarkName is the equity chart's name for the benchmark line.
func BenchmarkName(symbol string) string {
	if symbol == "" {
		return "Benchmark (buy & hold)"
	}
	return "Benchmark: " + symbol + " (buy & hold)"
}

func equity(in ChartInput) *ChartConfig {
	vals := make([]float64, len(in.Equity))
	for i, e := range in.Equity {
		vals[i] = e.Value
	}
	idx, sampling := in.View.pick(in.Equity)
	tip, ptr, zoom := interaction()
	bench := BenchmarkName(in.Benchmark)
	return &ChartConfig{
		Title: "Equity Curve", Type: "line", Sampling: sampling,
		Series: []obj{
			{"name": "Equity", "type": "line", "data": floatSeries(pickOf(vals, idx)), "showSymbol": false, "areaStyle": obj{"opacity": 0.15}, "lineStyle": obj{"width": 2}},
			{"name": bench, "type": "line", "data": optFloatSeries(pickOf(engine.BuyAndHold(in.InitialCash, in.BenchBars, in.Equity), idx)), "showSymbol": false, "lineStyle": obj{"type": "dashed", "width": 1}},
		},
		XAxis: categoryAxis(pointDates{in.Equity, idx}, nil), YAxis: obj{"type": "value", "scale": true, "name": "Value"},
		Legend: obj{"data": []string{"Equity", bench}}, Tooltip: tip, AxisPtr: ptr, DataZoom: zoom(0),
	}
}

func drawdown(in ChartInput) *ChartConfig {
	vals := make([]float64, len(in.Equity))
	for i, e := range in.Equity {
		vals[i] = e.Drawdown
	}
	idx, sampling := in.View.pick(in.Equity)
	tip, ptr, zoom := interaction()
	return &ChartConfig{
		Title: "Drawdown", Type: "line", Sampling: sampling,
		Series: []obj{{"name": "Drawdown", "type": "line", "data": floatSeries(pickOf(vals, idx)), "showSymbol": false,
			"lineStyle": obj{"color": ColorDrawdown, "width": 1}, "itemStyle": obj{"color": ColorDrawdown},
			"areaStyle": obj{"color": AreaDrawdown}}},
		XAxis:   categoryAxis(pointDates{in.Equity, idx}, nil),
		YAxis:   obj{"type": "value", "name": "Drawdown (%)", "inverse": true},
		Tooltip: tip, AxisPtr: ptr, DataZoom: zoom(0),
	}
}

// Underwater is −100 × (running maximum − cumulative) / running maximum of the cumulative
// product of (1 + return).
func Underwater(eq []engine.EquityPoint) []float64 {
	out := make([]float64, len(eq))
	cum, peak := 1.0, math.Inf(-1)
	for i, e := range eq {
		cum *= 1 + e.Return
		peak = math.Max(peak, cum)
		if peak != 0 {
			out[i] = -100 * (peak - cum) / peak
		}
	}
	return out
}

func underwater(in ChartInput) *ChartConfig {
	tip, ptr, zoom := interaction()
	idx, sampling := in.View.pick(in.Equity)
	return &ChartConfig{
		Title: "Underwater Plot", Type: "line", Sampling: sampling,
		Series: []obj{{"name": "Underwater", "type": "line", "data": floatSeries(pickOf(Underwater(in.Equity), idx)), "showSymbol": false,
			"lineStyle": obj{"color": ColorDrawdown, "width": 1}, "itemStyle": obj{"color": ColorDrawdown},
			"areaStyle": obj{"color": AreaDrawdown}}},
		XAxis: categoryAxis(pointDates{in.Equity, idx}, nil), YAxis: obj{"type": "value", "name": "Drawdown (%)", "max": 0},
		Tooltip: tip, AxisPtr: ptr, DataZoom: zoom(0),
	}
}

// MonthlyReturns sums the returns per year and month, × 100; months without bars are 0.
// Years are ascending; each row has 12 values, January first.
func MonthlyReturns(eq []engine.EquityPoint) (years []int, grid [][]float64) {
	idx := map[int]int{}
	for _, e := range eq {
		y := e.Time.UTC().Year()
		if _, ok := idx[y]; !ok {
			idx[y] = len(years)
			years = append(years, y)
			grid = append(grid, make([]float64, 12))
		}
		grid[idx[y]][e.Time.UTC().Month()-1] += e.Return * 100
	}
	return years, grid
}

// YearlyReturns sums the returns per year, × 100.
func YearlyReturns(eq []engine.EquityPoint) (years []int, sums []float64) {
	for _, e := range eq {
		y := e.Time.UTC().Year()
		if len(years) == 0 || years[len(years)-1] != y {
			years = append(years, y)
			sums = append(sums, 0)
		}
		sums[len(sums)-1] += e.Return * 100
	}
	return years, sums
}

func monthlyHeatmap(in ChartInput) *ChartConfig {
	years, grid := MonthlyReturns(in.Equity)
	labels := make([]string, len(years))
	data := make([][]any, 0, 12*len(years))
	lim := 0.0
	for yi, y := range years {
		labels[yi] = fmt.Sprint(y)
		for m := 0; m < 12; m++ {
			v := grid[yi][m]
			lim = math.Max(lim, math.Abs(v))
			data = append(data, []any{m, yi, v})
		}
	}
	if lim == 0 {
		lim = 1
	}
	return &ChartConfig{
		Title: "Monthly Returns (%)", Type: "scatter", // a grid of cells: ECharts draws it as a heatmap series
		Series: []obj{{"name": "Monthly Return", "type": "heatmap", "data": data,
			"label": obj{"show": true, "formatter": "{@[2]}"}, "emphasis": obj{"itemStyle": obj{"borderColor": "#333", "borderWidth": 1}}}},
		XAxis:     obj{"type": "category", "data": MonthNames, "splitArea": obj{"show": true}},
		YAxis:     obj{"type": "category", "data": labels, "splitArea": obj{"show": true}},
		VisualMap: obj{"min": -lim, "max": lim, "calculable": true, "orient": "horizontal", "left": "center", "bottom": 0, "inRange": obj{"color": []string{ColorDown, "#ffffff", ColorUp}}},
		Tooltip:   obj{"position": "top"},
	}
}

func yearlyReturns(in ChartInput) *ChartConfig {
	years, sums := YearlyReturns(in.Equity)
	labels := make([]string, len(years))
	data := make([]obj, len(years))
	for i, y := range years {
		labels[i] = fmt.Sprint(y)
		c := ColorUp
		if sums[i] < 0 {
			c = ColorDown
		}
		data[i] = obj{"value": sums[i], "itemStyle": obj{"color": c}}
	}
	return &ChartConfig{
		Title: "Yearly Returns (%)", Type: "bar",
		Series:  []obj{{"name": "Yearly Return", "type": "bar", "data": data}},
		XAxis:   obj{"type": "category", "data": labels},
		YAxis:   obj{"type": "value", "name": "Return (%)"},
		Tooltip: obj{"trigger": "axis"},
	}
}

func tradesChart(in ChartInput) *ChartConfig {
	closes := make([]float64, len(in.Bars))
	for i, b := range in.Bars {
		closes[i] = b.Close
	}
	var buys, sells [][]any
	execs := append([]engine.Execution(nil), in.Executions...)
	sort.SliceStable(execs, func(i, j int) bool { return execs[i].Time.Before(execs[j].Time) })
	for _, e := range execs {
		p := []any{results.FormatTime(e.Time), e.Price, math.Abs(e.Size), e.PnL}
		if e.Side == "buy" {
			buys = append(buys, p)
		} else {
			sells = append(sells, p)
		}
	}
	if buys == nil {
		buys = [][]any{}
	}
	if sells == nil {
		sells = [][]any{}
	}
	tip, ptr, zoom := interaction()
	return &ChartConfig{
		Title: "Trades", Type: "line",
		Series: []obj{
			{"name": "Close", "type": "line", "data": floatSeries(closes), "showSymbol": false, "lineStyle": obj{"width": 1}},
			{"name": "Buy", "type": "scatter", "data": buys, "symbol": "triangle", "symbolSize": 10, "itemStyle": obj{"color": ColorUp}},
			{"name": "Sell", "type": "scatter", "data": sells, "symbol": "triangle", "symbolRotate": 180, "symbolSize": 10, "itemStyle": obj{"color": ColorDown}},
		},
		XAxis: categoryAxis(barDates(in.Bars), nil), YAxis: obj{"type": "value", "scale": true, "name": "Price"},
		Legend: obj{"data": []string{"Close", "Buy", "Sell"}}, Tooltip: tip, AxisPtr: ptr, DataZoom: zoom(0),
	}
}
