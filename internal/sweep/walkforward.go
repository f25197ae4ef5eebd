package sweep

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// MaxFolds is the most folds one walk-forward analysis makes.
const MaxFolds = 100

// Window is the length of a walk-forward window: a number of bars, or a calendar
// duration (years, months and days).
type Window struct {
	Bars                int
	Years, Months, Days int
}

var windowText = regexp.MustCompile(`^([1-9][0-9]{0,4})([dwMy])$`)

// ParseWindow reads a duration such as 2y, 6M, 4w or 90d (y years, M months, w weeks, d
// days; M is upper case so that it is never read as minutes).
func ParseWindow(s string) (Window, error) {
	m := windowText.FindStringSubmatch(s)
	if m == nil {
		return Window{}, fmt.Errorf("%q is not a window: use a number of bars such as 500, or a duration such as 2y, 6M, 4w or 90d", s)
	}
	n, _ := strconv.Atoi(m[1])
	switch m[2] {
	case "y":
		return Window{Years: n}, nil
	case "M":
		return Window{Months: n}, nil
	case "w":
		return Window{Days: 7 * n}, nil
	}
	return Window{Days: n}, nil
}

// Zero says whether w is unset.
func (w Window) Zero() bool { return w == Window{} }

func (w Window) String() string {
	switch {
	case w.Bars > 0:
		return fmt.Sprintf("%d bars", w.Bars)
	case w.Years > 0:
		return fmt.Sprintf("%dy", w.Years)
	case w.Months > 0:
		return fmt.Sprintf("%dM", w.Months)
	}
	return fmt.Sprintf("%dd", w.Days)
}

// after is the index of the first bar at least w after bar i (len(times) when none).
func (w Window) after(times []time.Time, i int) int {
	if w.Bars > 0 {
		return min(i+w.Bars, len(times))
	}
	t := times[i].AddDate(w.Years, w.Months, w.Days)
	return sort.Search(len(times), func(j int) bool { return !times[j].Before(t) })
}

// before is the index of the first bar no more than w before bar i.
func (w Window) before(times []time.Time, i int) int {
	if w.Bars > 0 {
		return max(i-w.Bars, 0)
	}
	t := times[i].AddDate(-w.Years, -w.Months, -w.Days)
	return sort.Search(len(times), func(j int) bool { return !times[j].Before(t) })
}

// WalkForward is a walk-forward analysis: each fold optimises on Train and runs its winner
// on the Test window that follows; test windows start Step apart (Step defaults to Test).
// Anchored folds all train from the first bar; rolling ones on the Train before their test.
type WalkForward struct {
	Train, Test, Step Window
	Anchored          bool
}

// Fold is one fold, as bar indexes of the timeline: it trains on [TrainFrom, TrainTo)
// and tests on [TestFrom, TestTo); TrainTo == TestFrom, so no test bar is ever trained on.
type Fold struct {
	TrainFrom, TrainTo, TestFrom, TestTo int
}

// Folds lays the folds over times (sorted, distinct): the first test window starts Train
// after the first bar, each next one Step after the one before, up to the last bar (the
// last test window may be shorter). Out-of-sample windows never overlap, and each fold
// trains on two bars at least.
func (w WalkForward) Folds(times []time.Time) ([]Fold, error) {
	if w.Train.Zero() || w.Test.Zero() {
		return nil, fmt.Errorf("walk_forward needs train and test windows")
	}
	step := w.Step
	if step.Zero() {
		step = w.Test
	}
	n := len(times)
	if n < 3 {
		return nil, fmt.Errorf("walk-forward needs at least 3 bars, the data has %d", n)
	}
	var out []Fold
	for from := w.Train.after(times, 0); from < n; {
		f := Fold{TrainTo: from, TestFrom: from, TestTo: w.Test.after(times, from)}
		if !w.Anchored {
			f.TrainFrom = w.Train.before(times, from)
		}
		if f.TrainTo-f.TrainFrom < 2 {
			return nil, fmt.Errorf("fold %d would train on %d bar(s): make train longer", len(out)+1, f.TrainTo-f.TrainFrom)
		}
		if k := len(out); k > 0 && out[k-1].TestTo > f.TestFrom {
			return nil, fmt.Errorf("step %s is shorter than test %s: out-of-sample windows would overlap", step, w.Test)
		}
		if out = append(out, f); len(out) > MaxFolds {
			return nil, fmt.Errorf("more than %d folds: make step longer", MaxFolds)
		}
		from = max(step.after(times, from), from+1)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the data's %d bars (%s to %s) leave no bar to test on after train %s: make train shorter or the dates wider",
			n, times[0].Format(time.DateOnly), times[n-1].Format(time.DateOnly), w.Train)
	}
	return out, nil
}

// MinInSampleAnnual is the smallest mean in-sample annual return (a fraction: 1%) that
// walk-forward efficiency divides by. Below it the ratio of two figures near zero says
// nothing (0.08% out of sample over 0.015% in sample is an "efficiency" of 5.25).
const MinInSampleAnnual = 0.01

// Efficiency is the walk-forward efficiency (Pardo, The Evaluation and Optimization of
// Trading Strategies, 2008): the annualised return out of sample over the mean annualised
// return the chosen combinations made in sample. Near 1 or above, the optimisation found
// something that held on unseen data; near 0 or below, it mostly fitted noise. Undefined
// (false) when the in-sample return is below MinInSampleAnnual: negative, or too small to
// divide by.
func Efficiency(oosAnnual float64, isAnnual []float64) (float64, bool) {
	if len(isAnnual) == 0 {
		return 0, false
	}
	var sum float64
	for _, v := range isAnnual {
		sum += v
	}
	mean := sum / float64(len(isAnnual))
	if !(mean >= MinInSampleAnnual) {
		return 0, false
	}
	return oosAnnual / mean, true
}
