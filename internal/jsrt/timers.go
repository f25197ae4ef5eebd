package jsrt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/backtestd/backtestd/internal/engine"
)

// jsTimer is a timer a strategy added with this.addTimer, and the object notifyTimer gets.
type jsTimer struct {
	t   engine.Timer
	obj *goja.Object
}

var clockTime = regexp.MustCompile(`^(\d{1,2}):(\d{2})(?::(\d{2}))?$`)

// addTimer is this.addTimer(opts), backtrader's add_timer: {when: 'session_start' |
// 'session_end' | 'HH:MM[:SS]', offset, repeat (durations: {days, hours, minutes,
// seconds}), weekdays: [1-7], weekcarry (false), monthdays: [1-31], monthcarry (true),
// cheat (false)}; other fields are kept on the timer object notifyTimer receives.
func (h *host) addTimer(v goja.Value) goja.Value {
	if h.inited {
		h.throw("addTimer must be called in init()")
	}
	o, ok := v.(*goja.Object)
	if !ok || v == nil {
		h.throw("addTimer expects an options object {when: 'session_start' | 'session_end' | 'HH:MM', ...}")
	}
	op := opts{o: o}
	var tm engine.Timer
	when := op.get("when")
	if when == nil {
		h.throw("addTimer: when is required ('session_start', 'session_end' or 'HH:MM')")
	}
	switch w := strings.ToLower(when.String()); w {
	case "session_start":
		tm.When = engine.SessionStart
	case "session_end":
		tm.When = engine.SessionEnd
	default:
		m := clockTime.FindStringSubmatch(w)
		if m == nil {
			h.throw("addTimer: when must be 'session_start', 'session_end' or a time of day 'HH:MM[:SS]', got %q", when.String())
		}
		hh, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		ss := 0
		if m[3] != "" {
			ss, _ = strconv.Atoi(m[3])
		}
		if hh > 23 || mm > 59 || ss > 59 {
			h.throw("addTimer: %q is not a time of day", when.String())
		}
		tm.When = time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second
	}
	tm.Offset = h.duration(op, "offset")
	tm.Repeat = h.duration(op, "repeat")
	if tm.Repeat < 0 {
		h.throw("addTimer: repeat must not be negative")
	}
	tm.Weekdays = h.days(op, "weekdays", 7)
	tm.Monthdays = h.days(op, "monthdays", 31)
	tm.WeekCarry = h.flag(op, "weekcarry", false)
	tm.MonthCarry = h.flag(op, "monthcarry", true)
	tm.Cheat = h.flag(op, "cheat", false)
	obj := h.rt.NewObject()
	for _, k := range o.Keys() {
		_ = obj.Set(k, o.Get(k))
	}
	_ = obj.Set("tid", len(h.timers))
	h.timers = append(h.timers, &jsTimer{t: tm, obj: obj})
	h.eng.SetTimers(true)
	return obj
}

// duration reads a duration option: {days, hours, minutes, seconds} or a number of seconds.
func (h *host) duration(op opts, name string) time.Duration {
	v := op.get(name)
	if v == nil {
		return 0
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Object" {
		var d float64
		for _, u := range []struct {
			key string
			per float64
		}{{"days", 86400}, {"hours", 3600}, {"minutes", 60}, {"seconds", 1}} {
			d += h.num(opts{o: o}, u.key, 0) * u.per
		}
		return h.seconds(name, d)
	}
	return h.seconds(name, h.num(op, name, 0))
}

func (h *host) seconds(name string, s float64) time.Duration {
	if math.IsNaN(s) || math.Abs(s) > 366*86400 {
		h.throw("addTimer: %s must be a duration of at most a year", name)
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

func (h *host) days(op opts, name string, most int) []int {
	v := op.get(name)
	if v == nil {
		return nil
	}
	list, ok := v.Export().([]any)
	if !ok {
		h.throw("addTimer: %s must be an array of days from 1 to %d", name, most)
	}
	out := make([]int, 0, len(list))
	for _, x := range list {
		f := h.rt.ToValue(x).ToFloat()
		if f != math.Trunc(f) || f < 1 || f > float64(most) {
			h.throw("addTimer: %s must hold whole days from 1 to %d, got %v", name, most, x)
		}
		out = append(out, int(f))
	}
	return out
}

func (h *host) flag(op opts, name string, def bool) bool {
	v := op.get(name)
	if v == nil {
		return def
	}
	return v.ToBoolean()
}

// Timers implements engine.TimerStrategy: each timer of the kind asked for checks the
// clock and, when it fires, notifyTimer(timer, when) runs with its scheduled time.
func (h *host) Timers(e *engine.Engine, cheat bool) error {
	clock := e.TimerClock()
	for _, t := range h.timers {
		if t.t.Cheat != cheat || !t.t.Check(clock) {
			continue
		}
		if h.notifyTimer == nil {
			continue
		}
		when, err := h.rt.New(h.rt.Get("Date"), h.rt.ToValue(t.t.LastWhen.UnixMilli()))
		if err != nil {
			return fmt.Errorf("notifyTimer: %w", err)
		}
		if _, err := h.notifyTimer(h.inst, t.obj, when); err != nil {
			return err
		}
	}
	return nil
}
