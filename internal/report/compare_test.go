package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(600, 3)
	b.Bars(t, "RW", bars)
	// task_1 runs over all bars; task_2 over a later window, so the curves start on different dates.
	r1 := b.Completed(t, "task_1", "RW", bars, map[string]any{"fast": 5, "slow": 20, "size": 10})
	late := bars[100:400]
	r2 := b.Completed(t, "task_2", "RW", late, map[string]any{"fast": 10, "slow": 30, "size": 5})
	b.Task(t, "task_3", "running", "RW", bars[0].Time, bars[10].Time, 10000, "")

	c, err := service(b).Compare(b.Ctx, []string{"task_1", "task_2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) != 2 || c.Tasks[1].Params["slow"] != 30.0 || c.Tasks[0].StrategyVersion != 1 || c.Tasks[0].StrategyName != "SmaCross" {
		t.Errorf("tasks %+v", c.Tasks)
	}
	if c.Metrics[1].Key != "final_value" || *c.Metrics[1].Values[0] != r1.FinalValue || *c.Metrics[1].Values[1] != r2.FinalValue {
		t.Errorf("final values %+v", c.Metrics[1])
	}
	if len(c.Equity.Dates) != len(bars) {
		t.Fatalf("%d aligned dates, want %d", len(c.Equity.Dates), len(bars))
	}
	s1, s2 := c.Equity.Series[0], c.Equity.Series[1]
	if *s1[0] != r1.Equity[0].Value/r1.Equity[0].Value || s2[99] != nil || *s2[100] != 1 {
		t.Errorf("normalised starts: %v %v %v", *s1[0], s2[99], s2[100])
	}
	if want := r2.Equity[50].Value / r2.Equity[0].Value; !resultstest.Near(*s2[150], want) {
		t.Errorf("task_2 at %s: %v, want %v", c.Equity.Dates[150], *s2[150], want)
	}
	if last := r2.Equity[len(r2.Equity)-1].Value / r2.Equity[0].Value; !resultstest.Near(*s2[599], last) {
		t.Errorf("task_2 after its end carries %v, want %v", *s2[599], last)
	}
	if c.Equity.Dates[100] != late[0].Time.Format(time.DateOnly) {
		t.Errorf("date 100 %s", c.Equity.Dates[100])
	}
	csv := c.CSV()
	lines := strings.Split(csv, "\n")
	if lines[0] != "metric,task_1,task_2" || !strings.Contains(csv, "\n\nEquity (normalised)\ndate,task_1,task_2\n") {
		t.Errorf("csv head %q", lines[:3])
	}

	for _, tc := range []struct {
		raw, want string
	}{
		{"task_1", "Comparison needs 2 to 5 distinct task ids in task_ids (comma-separated), got 1"},
		{"task_1,task_1", "Comparison needs 2 to 5 distinct task ids in task_ids (comma-separated), got 1"},
		{"a,b,c,d,e,f", "Comparison needs 2 to 5 distinct task ids in task_ids (comma-separated), got 6"},
	} {
		if _, err := report.ParseTaskIDs(tc.raw); resultstest.Detail(err) != tc.want {
			t.Errorf("%q: %v", tc.raw, err)
		}
	}
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"task_1", "task_77"}, "Cannot compare task_77: task not found"},
		{[]string{"task_1", "task_3"}, "Cannot compare task_3: the task is running, only completed tasks have results"},
	} {
		if _, err := service(b).Compare(b.Ctx, tc.ids); resultstest.Detail(err) != tc.want {
			t.Errorf("%v: %v", tc.ids, err)
		}
	}
}
