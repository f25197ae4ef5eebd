package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// The report's charts are inline SVG: a value axis with round ticks and grid lines, a time
// axis with calendar ticks, and the series drawn by bar index (so the equity and drawdown
// charts, on the same bars, line up).

type chartSeries struct {
	Name   string
	Values []float64 // one per bar; NaN where the series has no value
	Color  string
	Width  float64
	Dashed bool
	Fill   string // area colour between the line and 0, "" for none
}

type chart struct {
	Title    string
	Height   float64
	Times    []time.Time // the bars' times, in the zone the axis shows
	Intraday bool
	Series   []chartSeries
	ZeroTop  bool                             // the value axis ends at 0 (drawdown)
	YLabel   func(value, step float64) string // a tick's text
}

const (
	chartWidth   = 900.0
	chartLeft    = 64.0
	chartRight   = 12.0
	chartTop     = 10.0
	chartBottom  = 24.0
	legendHeight = 18.0
	maxDrawn     = 1800 // points drawn per series: two per horizontal unit of the chart
)

// chartSVG draws c; a chart with fewer than two bars is a sentence.
func chartSVG(c chart) template.HTML {
	n := len(c.Times)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if n < 2 || math.IsInf(lo, 0) {
		return `<p class="muted">No data.</p>`
	}
	if c.ZeroTop {
		hi = 0
		lo = math.Min(lo, 0)
	}
	if hi == lo {
		if c.ZeroTop {
			lo = -1
		} else {
			pad := math.Max(math.Abs(hi)*0.01, 1)
			lo, hi = lo-pad, hi+pad
		}
	}
	ticks, step := niceTicks(lo, hi, 5)
	if !c.ZeroTop {
		lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	} else {
		lo = math.Min(lo, ticks[0])
	}
	w, h, top := chartWidth, c.Height, chartTop
	if len(c.Series) > 1 {
		top += legendHeight // the legend sits above the plot, not over a line
	}
	plotW, plotH := w-chartLeft-chartRight, h-top-chartBottom
	x := func(i int) float64 { return chartLeft + float64(i)/float64(n-1)*plotW }
	y := func(v float64) float64 { return top + (hi-v)/(hi-lo)*plotH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, w, h, template.HTMLEscapeString(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(c.Title))
	// value axis: grid lines and labels
	for _, t := range ticks {
		if t < lo-step/1e6 || t > hi+step/1e6 {
			continue
		}
		yy := y(t)
		stroke := "#e6e9ed"
		if t == 0 {
			stroke = "#9aa3ad"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, chartLeft, w-chartRight, yy, yy, stroke)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, chartLeft-6, yy, template.HTMLEscapeString(c.YLabel(t, step)))
	}
	// time axis: ticks at calendar boundaries
	base := h - chartBottom
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#9aa3ad" stroke-width="1"/>`, chartLeft, w-chartRight, base, base)
	for _, t := range timeTicks(c.Times, c.Intraday, 8) {
		xx := x(t.index)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#9aa3ad" stroke-width="1"/>`, xx, xx, base, base+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, xx, base+15, template.HTMLEscapeString(t.label))
	}
	// series
	for _, s := range c.Series {
		idx := drawnIndices(s.Values)
		var pts strings.Builder
		for _, i := range idx {
			if v := s.Values[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(v))
			}
		}
		if pts.Len() == 0 {
			continue
		}
		if s.Fill != "" {
			zero := y(math.Max(math.Min(0, hi), lo))
			fmt.Fprintf(&b, `<polygon fill="%s" stroke="none" points="%.1f,%.1f %s%.1f,%.1f"/>`, s.Fill, x(idx[0]), zero, pts.String(), x(idx[len(idx)-1]), zero)
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round"%s points="%s"/>`, s.Color, s.Width, dash, strings.TrimSpace(pts.String()))
	}
	// legend, when there is more than one line
	if len(c.Series) > 1 {
		lx := chartLeft + 10
		for _, s := range c.Series {
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			ly := chartTop + legendHeight/2
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, lx, lx+22, ly, ly, s.Color, dash)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`, lx+28, ly, template.HTMLEscapeString(s.Name))
			lx += 40 + 6.2*float64(len([]rune(s.Name)))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// drawnIndices picks the bars a line is drawn through: all of them, or a sample that keeps
// its shape (lttb) when there are more than the chart can show.
func drawnIndices(v []float64) []int {
	finite := true
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			finite = false
			break
		}
	}
	if len(v) > maxDrawn && finite {
		return lttb(v, maxDrawn)
	}
	step := max(1, len(v)/maxDrawn)
	out := make([]int, 0, len(v)/step+1)
	for i := 0; i < len(v); i += step {
		out = append(out, i)
	}
	if len(out) > 0 && out[len(out)-1] != len(v)-1 {
		out = append(out, len(v)-1)
	}
	return out
}

// niceTicks returns round tick values (1, 2, 2.5 or 5 × 10ⁿ apart) covering [lo, hi] with
// about target intervals, and their step.
func niceTicks(lo, hi float64, target int) ([]float64, float64) {
	raw := (hi - lo) / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	// tick k is k×step, or k/(1/step) below 1, which gives 0.6 rather than 0.6000000000000001
	at := func(k float64) float64 {
		if step < 1 {
			return k / math.Round(1/step)
		}
		return k * step
	}
	var out []float64
	for k := math.Floor(lo / step); ; k++ {
		out = append(out, at(k))
		if at(k) >= hi-step*1e-9 || len(out) > 4*target {
			break
		}
	}
	return out, step
}

// decimalsFor is how many decimals tick labels step apart need.
func decimalsFor(step float64) int {
	if step >= 1 {
		if step == math.Trunc(step) {
			return 0
		}
		return 1
	}
	d := int(math.Ceil(-math.Log10(step) - 1e-9))
	if step*math.Pow(10, float64(d)) != math.Round(step*math.Pow(10, float64(d))) {
		d++
	}
	return min(d, 6)
}

type timeTick struct {
	index int
	label string
}

// timeTicks places at most max ticks at the first bar of calendar periods (years, quarters,
// months, days or hours, the finest that fits), labelled by ISO date prefixes.
func timeTicks(ts []time.Time, intraday bool, most int) []timeTick {
	if len(ts) < 2 {
		return nil
	}
	type unit struct {
		key    func(t time.Time) int
		label  func(t time.Time) string
		months int // 0 for sub-month units
	}
	year := func(n int) unit {
		return unit{key: func(t time.Time) int { return t.Year() / n }, label: func(t time.Time) string { return t.Format("2006") }}
	}
	month := func(n int) unit {
		return unit{key: func(t time.Time) int { return (t.Year()*12 + int(t.Month()) - 1) / n }, label: func(t time.Time) string { return t.Format("2006-01") }, months: n}
	}
	day := unit{key: func(t time.Time) int { y, m, d := t.Date(); return (y*12+int(m))*32 + d }, label: func(t time.Time) string { return t.Format("2006-01-02") }}
	units := []unit{}
	if intraday {
		hour := func(n int) unit {
			return unit{key: func(t time.Time) int {
				y, m, d := t.Date()
				return ((y*12+int(m))*32+d)*24/n + t.Hour()/n
			}, label: func(t time.Time) string { return t.Format("01-02 15:04") }}
		}
		units = append(units, hour(1), hour(2), hour(4), hour(6), hour(12))
	}
	units = append(units, day, month(1), month(3), month(6), year(1), year(2), year(5), year(10), year(25), year(100))
	for _, u := range units {
		var out []timeTick
		prev := u.key(ts[0])
		for i := 1; i < len(ts); i++ {
			if k := u.key(ts[i]); k != prev {
				prev = k
				out = append(out, timeTick{index: i, label: u.label(ts[i])})
				if len(out) > most {
					break
				}
			}
		}
		if len(out) <= most && len(out) > 0 {
			return out
		}
		if len(out) == 0 { // the whole run sits inside one period of this size
			return []timeTick{{index: 0, label: u.label(ts[0])}}
		}
	}
	return nil
}
