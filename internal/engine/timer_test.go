package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTimerIntraday checks Timer on 15-minute bars from 09:00 to 16:45 against what
// backtrader's Timer.check gives for the same clock (timer.py, run on these times): a time
// of day plus an offset, repeated every 45 minutes within the day, on Tuesdays and
// Thursdays. The daily cases are pinned by the timer_* fixtures of testdata/backtrader.
func TestTimerIntraday(t *testing.T) {
	cases := []struct {
		name  string
		timer Timer
		want  string // "fired at>scheduled" pairs, as HH:MM on the day of month
	}{
		{"repeat on two weekdays", Timer{When: 10 * time.Hour, Offset: 5 * time.Minute, Repeat: 45 * time.Minute, Weekdays: []int{2, 4}},
			"02T10:15>02T10:05 02T11:00>02T10:50 02T11:45>02T11:35 02T12:30>02T12:20 02T13:15>02T13:05 02T14:00>02T13:50 02T14:45>02T14:35 02T15:30>02T15:20 02T16:15>02T16:05 " +
				"04T10:15>04T10:05 04T11:00>04T10:50 04T11:45>04T11:35 04T12:30>04T12:20 04T13:15>04T13:05 04T14:00>04T13:50 04T14:45>04T14:35 04T15:30>04T15:20 04T16:15>04T16:05"},
		{"once a day", Timer{When: 12*time.Hour + 7*time.Minute},
			"01T12:15>01T12:07 02T12:15>02T12:07 03T12:15>03T12:07 04T12:15>04T12:07 05T12:15>05T12:07"},
		{"session end: never within the bars", Timer{When: SessionEnd}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			tm := c.timer
			for dt := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC); dt.Before(time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)); dt = dt.Add(15 * time.Minute) {
				if dt.Hour() < 9 || dt.Hour() >= 17 {
					continue
				}
				if tm.Check(dt) {
					got = append(got, fmt.Sprintf("%s>%s", dt.Format("02T15:04"), tm.LastWhen.Format("02T15:04")))
				}
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("fired\n got %s\nwant %s", s, c.want)
			}
		})
	}
}
