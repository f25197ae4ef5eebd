package tasks_test

import (
	"slices"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// logTimes logs each bar's local date and time as the strategy's Date objects tell them.
const logTimes = `
class LogTimes extends Strategy {
  next() {
    const d = this.data.datetime[0];
    this.log(d.getDate() + ' ' + d.getHours() + ':' + String(d.getMinutes()).padStart(2, '0'), 'INFO');
  }
}`

// TestTasksOnTheDataCalendar runs tasks on Sydney hourly bars, whose sessions (09:00 to
// 16:00 local) start on the previous UTC day: the task's dates are Sydney days, daily bars
// are made per Sydney day, the task records the zone and the strategy's Date objects tell
// Sydney time, for intraday bars and for daily ones (dates, at local midnight).
func TestTasksOnTheDataCalendar(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	syd, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	var bars []engine.Bar
	for day := 3; day <= 7; day++ { // Monday 3 to Friday 7 June 2024 (AEST, UTC+10)
		for m := 9 * 60; m < 16*60; m += 60 {
			p := float64(100 + day*10 + m/60)
			bars = append(bars, engine.Bar{Time: time.Date(2024, 6, day, m/60, m%60, 0, 0, syd).UTC(), Open: p, High: p + 1, Low: p - 1, Close: p + 0.5, Volume: 10})
		}
	}
	md := marketdata.NewService(b.store, nil)
	if _, err := md.Import(b.ctx, "testsrc", "SYD", "", "1h", syd, bars); err != nil {
		t.Fatal(err)
	}

	logs := func(tf string) (tasks.Task, []string) {
		t.Helper()
		r := req(b.strategy(t, logTimes))
		r.Symbol, r.Timeframe, r.StartDate, r.EndDate = sp("SYD"), sp(tf), sp("2024-06-04"), sp("2024-06-05")
		task := b.create(t, r)
		if task.Timezone != "Australia/Sydney" {
			t.Fatalf("%s task records time zone %q, want the data's Australia/Sydney", tf, task.Timezone)
		}
		if got := b.wait(t, task.TaskID, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
			t.Fatalf("%s task %s: %v", tf, got.Status, got.Error)
		}
		all, err := b.svc.Logs(b.ctx, task.TaskID, tasks.LogFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range all {
			if l.Source == "strategy" {
				out = append(out, l.Message)
			}
		}
		return task, out
	}

	_, intraday := logs("1h")
	if len(intraday) != 14 || intraday[0] != "4 9:00" || intraday[6] != "4 15:00" || intraday[7] != "5 9:00" || intraday[13] != "5 15:00" {
		t.Errorf("1h run saw %d bars %v; want 7 a day from 4 9:00 to 5 15:00, Sydney time", len(intraday), intraday)
	}

	task, daily := logs("1d")
	if !slices.Equal(daily, []string{"4 0:00", "5 0:00"}) {
		t.Errorf("1d run saw %v; want the Sydney days 4 and 5 at local midnight", daily)
	}
	stored, err := results.NewService(b.store.Pool).Load(b.ctx, task.TaskID, results.EquityValues)
	if err != nil {
		t.Fatal(err)
	}
	var days []string
	for _, p := range stored.Equity {
		days = append(days, p.Time.UTC().Format(time.RFC3339))
	}
	if !slices.Equal(days, []string{"2024-06-04T00:00:00Z", "2024-06-05T00:00:00Z"}) {
		t.Errorf("daily equity points at %v; want the dates of the two Sydney days", days)
	}
	dailyBars, loc, err := md.Bars(b.ctx, "testsrc", "SYD", time.Date(2024, 6, 4, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 4, 0, 0, 0, 0, time.UTC), "1d")
	if err != nil {
		t.Fatal(err)
	}
	// The 4th's session: 09:00 (23:00 UTC on the 3rd) to 15:00.
	first, last := bars[7], bars[13]
	if loc.String() != "Australia/Sydney" || len(dailyBars) != 1 || dailyBars[0].Open != first.Open || dailyBars[0].Close != last.Close {
		t.Errorf("daily bar of the 4th: %+v in %v; want open %v (the 09:00 bar) and close %v", dailyBars, loc, first.Open, last.Close)
	}
}
