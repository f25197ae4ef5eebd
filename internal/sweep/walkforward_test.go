package sweep

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestFolds(t *testing.T) {
	t.Parallel()
	// 3 years of weekday bars from 2020-01-01
	var days []time.Time
	for d := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2023; d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			days = append(days, d)
		}
	}
	year1 := 0
	for days[year1].Year() == 2020 {
		year1++
	}
	day := func(i int) string { return days[i].Format(time.DateOnly) }
	cases := []struct {
		name  string
		wf    WalkForward
		folds int
		check func(t *testing.T, f []Fold)
		err   string
	}{
		{name: "rolling years and months", wf: WalkForward{Train: Window{Years: 1}, Test: Window{Months: 6}}, folds: 4,
			check: func(t *testing.T, f []Fold) {
				if f[0].TrainFrom != 0 || f[0].TestFrom != year1 {
					t.Errorf("fold 1 trains from %s, tests from %s", day(f[0].TrainFrom), day(f[0].TestFrom))
				}
				if got := day(f[1].TestFrom); got != "2021-07-01" {
					t.Errorf("fold 2 tests from %s, want 2021-07-01", got)
				}
				if got := day(f[1].TrainFrom); got != "2020-07-01" {
					t.Errorf("fold 2 trains from %s, want 2020-07-01 (rolling)", got)
				}
				if last := f[len(f)-1]; last.TestTo != len(days) {
					t.Errorf("last fold tests to %d, want the last bar %d", last.TestTo, len(days))
				}
			}},
		{name: "anchored bars", wf: WalkForward{Train: Window{Bars: 300}, Test: Window{Bars: 100}, Anchored: true}, folds: 5,
			check: func(t *testing.T, f []Fold) {
				for i, x := range f {
					if x.TrainFrom != 0 || x.TrainTo != 300+100*i {
						t.Errorf("fold %d trains on [%d, %d)", i+1, x.TrainFrom, x.TrainTo)
					}
				}
				if f[4].TestTo != len(days) || f[4].TestTo-f[4].TestFrom != len(days)-700 {
					t.Errorf("the last fold tests [%d, %d), want the %d bars left", f[4].TestFrom, f[4].TestTo, len(days)-700)
				}
			}},
		{name: "step longer than test leaves gaps", wf: WalkForward{Train: Window{Bars: 200}, Test: Window{Bars: 50}, Step: Window{Bars: 100}}, folds: 6,
			check: func(t *testing.T, f []Fold) {
				if f[1].TestFrom-f[0].TestTo != 50 || f[1].TrainFrom != 100 {
					t.Errorf("fold 2: %+v", f[1])
				}
			}},
		{name: "overlapping tests", wf: WalkForward{Train: Window{Bars: 200}, Test: Window{Bars: 100}, Step: Window{Bars: 50}}, err: "overlap"},
		{name: "train covers the data", wf: WalkForward{Train: Window{Years: 5}, Test: Window{Months: 6}}, err: "no bar to test"},
		{name: "too many folds", wf: WalkForward{Train: Window{Bars: 10}, Test: Window{Bars: 1}}, err: "more than 100 folds"},
		{name: "train of one bar", wf: WalkForward{Train: Window{Bars: 1}, Test: Window{Bars: 400}}, err: "train on 1 bar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := c.wf.Folds(days)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f) != c.folds {
				t.Fatalf("%d folds, want %d: %+v", len(f), c.folds, f)
			}
			for i, x := range f {
				// no test bar is trained on, in this fold or any earlier one's tests
				if x.TrainTo != x.TestFrom || x.TestFrom >= x.TestTo || x.TrainFrom >= x.TrainTo {
					t.Errorf("fold %d: %+v", i+1, x)
				}
				if i > 0 && f[i-1].TestTo > x.TestFrom {
					t.Errorf("folds %d and %d overlap out of sample", i, i+1)
				}
			}
			c.check(t, f)
		})
	}
}

func TestParseWindow(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Window{"2y": {Years: 2}, "6M": {Months: 6}, "4w": {Days: 28}, "90d": {Days: 90}} {
		if got, err := ParseWindow(in); err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "6m", "0y", "2", "y", "1.5y", "-1y", "2 y"} {
		if _, err := ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q): no error", in)
		}
	}
}

func TestEfficiency(t *testing.T) {
	t.Parallel()
	if e, ok := Efficiency(0.05, []float64{0.1, 0.3}); !ok || e != 0.25 {
		t.Errorf("Efficiency = %v, %v; want 0.25", e, ok)
	}
	for _, in := range [][]float64{{-0.1, 0.05}, {0.00015}, {0.0099}, {}, {math.NaN()}} {
		if e, ok := Efficiency(0.0008, in); ok {
			t.Errorf("in-sample %v (below %v a year) gave an efficiency of %v", in, MinInSampleAnnual, e)
		}
	}
	if e, ok := Efficiency(-0.02, []float64{0.01}); !ok || e != -2 {
		t.Errorf("Efficiency at the threshold = %v, %v; want -2", e, ok)
	}
}
