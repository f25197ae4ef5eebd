package jsrt

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// joined tells whether a fixture's strategy joins its feeds into one (a static chain or
// rollover): its bars are then the joined feed's, not the first file's.
func joined(raw []byte) bool {
	var w struct {
		Joined string `json:"joined"`
	}
	return json.Unmarshal(raw, &w) == nil && w.Joined != ""
}

// checkRolls compares the contract a joined feed's bars came from, where it changes
// (backtrader's data._d, recorded as "rolls"), with the twins' "roll <date> <contract>"
// log lines, which read this.data.contract.
func checkRolls(t *testing.T, raw []byte, res *engine.Result) {
	t.Helper()
	var w struct {
		Rolls *[][2]string `json:"rolls"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	if w.Rolls == nil {
		return
	}
	var got []string
	for _, l := range res.Logs {
		if l.Source == "strategy" && strings.HasPrefix(l.Message, "roll ") {
			got = append(got, l.Message)
		}
	}
	var want []string
	for _, r := range *w.Rolls {
		want = append(want, fmt.Sprintf("roll %s %s", r[0], r[1]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("contracts:\n got %q\nwant %q", got, want)
	}
}
