package engine

import (
	"slices"
	"time"
)

// Session bounds of a feed, as backtrader's defaults: a session starts at midnight and ends
// at 23:59:59.999990, the time backtrader stamps daily bars with.
const (
	SessionStart = time.Duration(0)
	SessionEnd   = 24*time.Hour - 10*time.Microsecond
)

// TimerStrategy is a Strategy with timers (backtrader's add_timer): Timers runs on every
// bar, warm-up included, with cheat true before the broker (as NextOpen: the data at the
// new bar, the indicators at the previous one), then with cheat false after the broker,
// before the bar's notifications and next().
type TimerStrategy interface {
	Strategy
	Timers(e *Engine, cheat bool) error
}

// Timer is backtrader's Timer on the engine's clock: it fires once a day at When (a time
// of day) plus Offset, and again every Repeat within the session when Repeat is set, on
// the days Weekdays (ISO, Monday 1) and Monthdays allow; a day skipped because it has no
// bar carries to the next bar's day with WeekCarry and MonthCarry.
type Timer struct {
	When       time.Duration // time of day
	Offset     time.Duration
	Repeat     time.Duration
	Weekdays   []int
	WeekCarry  bool
	Monthdays  []int
	MonthCarry bool
	Cheat      bool

	// LastWhen is the scheduled time of the last firing (backtrader's `when`).
	LastWhen time.Time

	when      time.Duration
	dwhen     time.Time
	hasWhen   bool
	lastcall  time.Time // the date that has fired (or cannot), zero for none
	nexteos   time.Time
	curdate   time.Time
	curmonth  int
	monthmask []int
	curweek   int
	weekmask  []int
	started   bool
}

func dateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func (tm *Timer) reset(day time.Time) {
	tm.when = tm.When
	tm.hasWhen = false
	tm.lastcall = day
}

// pop is the mask step of backtrader's _check_month and _check_week: it drops the sorted
// mask's entries before day and says whether any were (passed) and whether the timer is
// due today (curday). As backtrader's bisect_right(mask, day, lo=dc) > 0, curday is also
// true when entries were passed, and the first entry after day is then dropped too.
func pop(mask []int, day int) (rest []int, curday, passed bool) {
	dc, _ := slices.BinarySearch(mask, day) // bisect_left
	passed = dc > 0
	if dc < len(mask) {
		r := dc
		for r < len(mask) && mask[r] <= day {
			r++
		}
		if curday = r > 0; curday {
			dc++
		}
	}
	return mask[dc:], curday, passed
}

func (tm *Timer) checkMonth(d time.Time) bool {
	if len(tm.Monthdays) == 0 {
		return true
	}
	carry := false
	if m := int(d.Month()); m != tm.curmonth {
		tm.curmonth = m
		carry = tm.MonthCarry && len(tm.monthmask) > 0
		tm.monthmask = tm.Monthdays
	}
	var cur, passed bool
	tm.monthmask, cur, passed = pop(tm.monthmask, d.Day())
	return carry || (tm.MonthCarry && passed) || cur
}

func (tm *Timer) checkWeek(d time.Time) bool {
	if len(tm.Weekdays) == 0 {
		return true
	}
	_, week := d.ISOWeek()
	wd := int(d.Weekday())
	if wd == 0 {
		wd = 7
	}
	carry := false
	if week != tm.curweek {
		tm.curweek = week
		carry = tm.WeekCarry && len(tm.weekmask) > 0
		tm.weekmask = tm.Weekdays
	}
	var cur, passed bool
	tm.weekmask, cur, passed = pop(tm.weekmask, wd)
	return carry || (tm.WeekCarry && passed) || cur
}

// Check is backtrader's Timer.check at the clock time dt: whether the timer fires now.
func (tm *Timer) Check(dt time.Time) bool {
	if !tm.started {
		tm.started = true
		slices.Sort(tm.Weekdays)
		slices.Sort(tm.Monthdays)
		tm.curmonth, tm.curweek = -1, -1
		tm.reset(time.Time{})
	}
	day := dateOf(dt)
	if tm.lastcall.Equal(day) { // fired (or ruled out) today: await the next day
		return false
	}
	if dt.After(tm.nexteos) {
		tm.nexteos = day.Add(SessionEnd)
		tm.reset(time.Time{})
	}
	if day.After(tm.curdate) {
		tm.curdate = day
		ok := tm.checkMonth(day)
		if ok {
			ok = tm.checkWeek(day)
		}
		if !ok {
			tm.reset(day)
			return false
		}
	}
	if !tm.hasWhen {
		tm.dwhen = day.Add(tm.when + tm.Offset)
		tm.hasWhen = true
	}
	if dt.Before(tm.dwhen) {
		return false
	}
	tm.LastWhen = tm.dwhen
	if tm.Repeat <= 0 {
		tm.reset(day)
		return true
	}
	if dt.After(tm.nexteos) {
		tm.nexteos = day.Add(SessionEnd)
	}
	for {
		tm.dwhen = tm.dwhen.Add(tm.Repeat)
		if tm.dwhen.After(tm.nexteos) {
			tm.reset(day)
			break
		}
		if tm.dwhen.After(dt) {
			break
		}
	}
	return true
}

// TimerClock is the time timers see at step: the step's time, or, where every bar of the
// first feed is stamped at midnight (daily or coarser bars), the end of its session, as
// backtrader stamps a daily bar.
func (e *Engine) TimerClock() time.Time {
	t := e.Now()
	if e.dailyStamps {
		return dateOf(t).Add(SessionEnd)
	}
	return t
}

// midnightStamps tells whether every bar is stamped at midnight.
func midnightStamps(bars []Bar) bool {
	for _, b := range bars {
		if h, m, s := b.Time.Clock(); h != 0 || m != 0 || s != 0 || b.Time.Nanosecond() != 0 {
			return false
		}
	}
	return len(bars) > 0
}

// SetTimers says that the strategy, a TimerStrategy, has timers to run.
func (e *Engine) SetTimers(on bool) {
	e.timed = on
	if on && len(e.feeds) > 0 {
		e.dailyStamps = midnightStamps(e.feeds[0].Bars)
	}
}

// timers runs a TimerStrategy's timers of one kind on the current bar.
func (e *Engine) timers(s Strategy, cheat bool) error {
	ts, ok := s.(TimerStrategy)
	if !ok || !e.timed {
		return nil
	}
	if !cheat {
		return ts.Timers(e, false)
	}
	for k := range e.indCursor {
		if e.ticked[k] {
			e.indCursor[k]--
		}
	}
	err := ts.Timers(e, true)
	copy(e.indCursor, e.cursor)
	return err
}
