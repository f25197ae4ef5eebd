package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestResample(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	bar := func(s string, o, h, l, c float64, v int64) Bar {
		return Bar{Time: day(s), Open: o, High: h, Low: l, Close: c, Volume: v}
	}
	// Thu 2024-02-29 … Tue 2024-03-12, the Friday of the second week a holiday.
	daily := Feed{Symbol: "X", Bars: []Bar{
		bar("2024-02-29", 10, 11, 9, 10.5, 1),
		bar("2024-03-01", 10.5, 12, 10, 11, 2),
		bar("2024-03-04", 11, 11.5, 8, 9, 3),
		bar("2024-03-07", 9, 10, 8.5, 9.5, 4),
		bar("2024-03-11", 9.5, 13, 9, 12, 5),
		bar("2024-03-12", 12, 12.5, 11, 11.5, 6),
	}}
	tests := []struct {
		tf   string
		comp int
		want []string // per bar: stamp delivered-at open high low close volume
	}{
		{"weeks", 1, []string{
			"2024-03-01 2024-03-04 10 12 9 11 3",
			"2024-03-07 2024-03-11 11 11.5 8 9.5 7",
			"2024-03-12 2024-03-12+1ns 9.5 13 9 11.5 11",
		}},
		{"weeks", 2, []string{
			"2024-03-07 2024-03-11 10 12 8 9.5 10",
			"2024-03-12 2024-03-12+1ns 9.5 13 9 11.5 11",
		}},
		{"months", 1, []string{
			"2024-02-29 2024-03-01 10 11 9 10.5 1",
			"2024-03-12 2024-03-12+1ns 10.5 13 8 11.5 20",
		}},
		{"years", 1, []string{"2024-03-12 2024-03-12+1ns 10 13 8 11.5 21"}},
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, tt := range tests {
		got, err := Resample(daily, tt.tf, tt.comp)
		if err != nil {
			t.Fatalf("%s/%d: %v", tt.tf, tt.comp, err)
		}
		var lines []string
		for i, b := range got.Bars {
			at := b.Time.Format("2006-01-02")
			if b.Time.Nanosecond() == 1 {
				at += "+1ns"
			}
			lines = append(lines, strings.Join([]string{got.Stamp(i).Format("2006-01-02"), at,
				g(b.Open), g(b.High), g(b.Low), g(b.Close), g(float64(b.Volume))}, " "))
		}
		if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") || got.Symbol != "X" {
			t.Errorf("%s/%d:\n%s\nwant\n%s", tt.tf, tt.comp, strings.Join(lines, "\n"), strings.Join(tt.want, "\n"))
		}
	}
	for _, bad := range []struct {
		tf   string
		comp int
		err  string
	}{{"days", 1, "timeframe must be"}, {"weeks", 0, "compression must be"}} {
		if _, err := Resample(daily, bad.tf, bad.comp); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s/%d: %v, want %q", bad.tf, bad.comp, err, bad.err)
		}
	}
}
