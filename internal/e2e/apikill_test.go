package e2e

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/proctest"
)

// The API process is killed (SIGKILL) while the page watches a run that a separate worker
// process runs: the page says it is reconnecting, and once an API process serves again it
// catches up from what is stored — the run's status and every log line, none twice.
func TestPageCatchesUpAfterAPIKill(t *testing.T) {
	chromium := requireBrowser(t)
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	// A fixed address, so the restarted API is where the page reconnects to.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env := []string{"SAMPLE_DATA=true", "STRATEGY_DIRS=", "BASE_PATH="}
	startAPI := func() *proctest.Proc {
		return proctest.Start(t, env, "serve", "--listen", addr, "--database-url", dbURL, "--workers", "0")
	}
	api := startAPI()
	base := api.URL(t)
	waitSampleData(t, base, api)
	proctest.Start(t, env, "worker", "--database-url", dbURL, "--workers", "1")

	var strategy struct {
		ID string `json:"id"`
	}
	if err := postJSON(base+"/api/strategies", map[string]any{"name": "E2E slow", "code": strategyCode}, &strategy); err != nil {
		t.Fatal(err)
	}
	var task struct {
		TaskID string `json:"task_id"`
	}
	// About 1,000 bars at 20 ms each: long enough to kill and restart the API mid-run.
	if err := postJSON(base+"/api/backtests", map[string]any{"strategy_id": strategy.ID, "start_date": "2020-01-01",
		"end_date": "2023-12-31", "strategy_params": map[string]any{"delay": 20}}, &task); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(profileDir(t)), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelTimeout()

	status := `document.querySelector('.page-head .status')?.dataset.status`
	wsState := `(document.querySelector('#ws-state')?.textContent ?? '')`
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(base+"/ui/runs/"+task.TaskID),
		waitJS(status+` === 'running' && document.querySelectorAll('#log .ll').length > 0 && `+wsState+`.includes('live')`, time.Minute),
	))
	if err := api.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	must(t, chromedp.Run(ctx, waitJS(wsState+`.includes('reconnecting')`, 30*time.Second)))
	var state string
	must(t, chromedp.Run(ctx, chromedp.Evaluate(status, &state)))
	if state != "running" {
		t.Fatalf("the task was %s when the API was killed: the run is too short for this test", state)
	}

	time.Sleep(time.Second)
	again := startAPI()
	again.URL(t)
	// Back and live while the run goes on: the lines logged while the page was cut off are
	// fetched at once, not only when the run completes.
	must(t, chromedp.Run(ctx, waitJS(wsState+`.includes('live')`, time.Minute)))
	var stored []map[string]any
	if err := getEnvelope(base+"/api/backtests/"+task.TaskID+"/logs?limit=10000", &stored); err != nil {
		t.Fatal(err)
	}
	must(t, chromedp.Run(ctx, chromedp.Evaluate(status, &state)))
	if state == "running" {
		want, _ := json.Marshal(messages(stored))
		shownAll := `((want) => { const have = new Set(Array.from(document.querySelectorAll('#log .ll .msg'), (e) => e.textContent)); return want.every((m) => have.has(m)); })(` + string(want) + `)`
		must(t, chromedp.Run(ctx, waitJS(shownAll+` || `+status+` !== 'running'`, 30*time.Second)))
		must(t, chromedp.Run(ctx, chromedp.Evaluate(status, &state)))
		if state != "running" {
			t.Fatalf("the page showed the lines logged while it was cut off only when the run completed (%s), not when it reconnected", state)
		}
	} else {
		t.Logf("the run completed before the page reconnected: only the catch-up at completion is checked")
	}
	must(t, chromedp.Run(ctx, waitJS(status+` === 'completed'`, 3*time.Minute)))
	t.Logf("page shows the run completed %s after the API was killed", time.Since(killed).Round(time.Millisecond))

	var logs []map[string]any
	if err := getEnvelope(base+"/api/backtests/"+task.TaskID+"/logs?limit=10000", &logs); err != nil {
		t.Fatal(err)
	}
	var shown int
	must(t, chromedp.Run(ctx,
		waitJS(`document.querySelectorAll('#log .ll').length >= `+strconv.Itoa(len(logs)), 30*time.Second),
		chromedp.Evaluate(`document.querySelectorAll('#log .ll').length`, &shown),
	))
	if len(logs) == 0 || shown != len(logs) {
		t.Fatalf("the page shows %d log lines, %d are stored", shown, len(logs))
	}
}

func messages(lines []map[string]any) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _ = l["message"].(string)
	}
	return out
}
