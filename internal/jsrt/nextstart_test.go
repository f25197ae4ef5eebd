package jsrt

import (
	"context"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// nextStart runs, as backtrader's nextstart, on every step at which a feed sits exactly
// at its minimum period: with a weekly feed resampled from the daily one, every daily
// bar that has the weekly feed's warm-up bar as its latest (testdata/backtrader's
// multiframe_nextstart pins two feeds of their own timeframes against real backtrader).
func TestNextStartWhileSlowerFeedWarms(t *testing.T) {
	t.Parallel()
	code := `class W extends Strategy {
		static resample = { timeframe: 'weeks' };
		init() { this.sma = ind.SMA(this.datas[1].close, 2); }
		nextStart() { this.log('start ' + this.data.length + ' ' + this.datas[1].length); }
		next() { this.log('next ' + this.data.length + ' ' + this.datas[1].length); }
	}`
	res, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: walk(40)}}})
	if err != nil {
		t.Fatal(err)
	}
	var starts, nexts []string
	firstWeekly := ""
	for _, l := range strategyLines(res) {
		f := strings.Fields(l)
		switch f[0] {
		case "start":
			starts = append(starts, f[1])
			if firstWeekly == "" {
				firstWeekly = f[2]
			}
			if f[2] != firstWeekly {
				t.Errorf("nextStart with %s weekly bars, then with %s", firstWeekly, f[2])
			}
		case "next":
			nexts = append(nexts, f[1])
			if len(starts) == 0 || f[2] == firstWeekly {
				t.Errorf("next() at %s with %s weekly bars, during or before the nextStart steps %v", f[1], f[2], starts)
			}
		}
	}
	if firstWeekly != "2" || len(starts) < 2 || len(nexts) == 0 {
		t.Errorf("nextStart at %v with %s weekly bars, then %d next(); want several, with 2", starts, firstWeekly, len(nexts))
	}
}
