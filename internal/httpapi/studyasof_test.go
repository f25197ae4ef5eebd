package httpapi

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestStudyAsOf: a study with as_of runs every combination on the bar versions current then,
// so after a re-import its figures are those of backtests as of the same time, not of the
// latest bars, and its best combination promoted to a backtest reads the same versions.
func TestStudyAsOf(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	bars := provBars()
	e.importBars(t, bars)
	_, body := e.do(t, "GET", "/api/data/testsrc/PROVX/versions", "")
	asOf := field(body, "data").([]any)[0].(map[string]any)["created_at"].(string)
	for i := 200; i < 500; i++ { // version 2: a corrected stretch
		bars[i].Close *= 1.05
		bars[i].High = math.Max(bars[i].High, bars[i].Close)
	}
	e.importBars(t, bars)

	study := func(extra string) map[string]any {
		t.Helper()
		code, body := e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31",
			"space":{"fast":[5,10],"slow":[30]}`+extra+`}`)
		if code != 200 {
			t.Fatalf("study%s: %d %v", extra, code, body)
		}
		return e.waitStudy(t, body.(map[string]any)["id"].(string), "completed")
	}
	finals := func(id string) map[string]float64 {
		t.Helper()
		_, body := e.do(t, "GET", "/api/studies/"+id+"/results?limit=10", "")
		out := map[string]float64{}
		for _, r := range body.(map[string]any)["trials"].([]any) {
			row := r.(map[string]any)
			out[fmt.Sprint(row["params"].(map[string]any)["fast"])] = row["final_value"].(float64)
		}
		return out
	}
	then := study(`,"as_of":"` + asOf + `"`)
	latest := study("")
	thenF, latestF := finals(then["id"].(string)), finals(latest["id"].(string))
	for _, fast := range []int{5, 10} {
		code, body := e.do(t, "POST", "/api/backtests", fmt.Sprintf(`{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","strategy_params":{"fast":%d,"slow":30},"as_of":"%s"}`, fast, asOf))
		if code != 200 {
			t.Fatalf("backtest as of: %d %v", code, body)
		}
		run := e.waitStatus(t, body.(map[string]any)["task_id"].(string), "completed")
		_, sum := e.do(t, "GET", "/api/results/"+run["task_id"].(string)+"/summary", "")
		want := field(sum, "data", "final_value").(float64)
		key := fmt.Sprint(fast)
		if thenF[key] != want {
			t.Errorf("fast %d: the study as of %s ended at %v, a backtest as of then at %v", fast, asOf, thenF[key], want)
		}
		if latestF[key] == want {
			t.Errorf("fast %d: the study on the latest bars ended as the one as of before the re-import (%v): the test's change did not matter", fast, want)
		}
	}

	// Its best promoted to a backtest reads version 1 too.
	code, body := e.do(t, "POST", "/api/studies/"+then["id"].(string)+"/promote", fmt.Sprintf(`{"idx":%v}`, then["best"].(map[string]any)["idx"]))
	if code != 200 {
		t.Fatalf("promote: %d %v", code, body)
	}
	promoted := e.waitStatus(t, body.(map[string]any)["task_id"].(string), "completed")
	if v := promoted["provenance"].(map[string]any)["data"].([]any)[0].(map[string]any)["version"]; v != 1.0 {
		t.Errorf("the promoted combination read version %v, want 1", v)
	}

	code, body = e.do(t, "POST", "/api/studies", `{"strategy_id":"str_1","symbol":"PROVX","start_date":"2002-06-01","end_date":"2004-12-31","space":{"fast":[5,10]},"as_of":"2001-01-01T00:00:00Z"}`)
	if code != 400 || !strings.Contains(fmt.Sprint(body), "before the first version") {
		t.Errorf("a study as of before the first version: %d %v", code, body)
	}
}
