package jsrt

import (
	"context"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// TestAddTimerErrors checks that a timer the engine cannot run is refused with a message
// that says why, and that a valid one reaches notifyTimer.
func TestAddTimerErrors(t *testing.T) {
	feeds := []engine.Feed{{Symbol: "RW", Bars: engine.RandomWalk(60, 3)}}
	cases := []struct {
		name, init, extra, want string
	}{
		{"no when", `this.addTimer({})`, "", "when is required"},
		{"bad time", `this.addTimer({ when: '25:00' })`, "", `"25:00" is not a time of day`},
		{"bad when", `this.addTimer({ when: 'noon' })`, "", "when must be 'session_start', 'session_end' or a time of day"},
		{"bad weekday", `this.addTimer({ when: 'session_start', weekdays: [0] })`, "", "weekdays must hold whole days from 1 to 7"},
		{"bad monthdays", `this.addTimer({ when: 'session_start', monthdays: 3 })`, "", "monthdays must be an array"},
		{"negative repeat", `this.addTimer({ when: '10:00', repeat: { minutes: -5 } })`, "", "repeat must not be negative"},
		{"after init", ``, `next() { this.addTimer({ when: 'session_start' }); }`, "addTimer must be called in init()"},
		{"a valid timer", `this.addTimer({ when: 'session_end', weekdays: [1, 2, 3, 4, 5], tag: 'x' })`,
			`notifyTimer(timer, when) { this.log('fired ' + timer.tid + ' ' + timer.tag + ' ' + when.toISOString()); }`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := "class T extends Strategy {\n  init() { " + c.init + " }\n  " + c.extra + "\n}\n"
			res, err := Run(context.Background(), RunConfig{Code: code, Feeds: feeds, Cash: 10000})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				fired := 0
				for _, l := range res.Logs {
					if strings.HasPrefix(l.Message, "fired 0 x ") && strings.HasSuffix(l.Message, "T23:59:59.999Z") {
						fired++
					}
				}
				if fired == 0 {
					t.Errorf("the timer never reached notifyTimer: %v", res.Logs)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}
