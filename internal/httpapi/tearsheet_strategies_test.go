package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestReportTearsheetByStrategy exports the HTML report of a run of three strategies on one
// broker (testdata's multi_strategies.js, its last strategy renamed to text a page must not
// run) and reads it as TestReportTearsheet does: the By strategy table holds the strategies
// route's figures, and the round trips and executions name each one's strategy as the
// trades route does, by the route's labels. A run of one strategy has neither.
func TestReportTearsheetByStrategy(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", "multi_strategies.js"))
	if err != nil {
		t.Fatal(err)
	}
	const evil = `<img src=x onerror=alert(1)> "Hold" & 'co'`
	code := strings.Replace(string(raw), "const strategies = [MultiCross, { strategy: MultiCross, params: { fast: 5, slow: 20, size: 5 } }, MultiHold];",
		"class Evil extends MultiHold { static name = "+jsString(evil)+"; }\nconst strategies = [MultiCross, { strategy: MultiCross, params: { fast: 5, slow: 20, size: 5 } }, Evil];", 1)
	if code == string(raw) {
		t.Fatal("multi_strategies.js no longer ends with its strategies array")
	}
	run := func(name, code string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"name": name, "code": code})
		status, out := e.do(t, "POST", "/api/strategies", string(body))
		if status != 200 {
			t.Fatalf("upload: %d %v", status, out)
		}
		id := out.(map[string]any)["id"].(string)
		_, out = e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+id+`","start_date":"1970-01-01","end_date":"1979-12-31"}`)
		taskID := out.(map[string]any)["task_id"].(string)
		if task := e.waitStatus(t, taskID, "completed", "failed"); task["status"] != "completed" {
			t.Fatalf("the run %s: %v", task["status"], task["error"])
		}
		return taskID
	}
	export := func(taskID string) (string, *html.Node) {
		t.Helper()
		resp, err := http.Get(e.srv.URL + "/api/results/" + taskID + "/export?format=html")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("export %s: %d", taskID, resp.StatusCode)
		}
		doc, err := html.Parse(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw), doc
	}
	api := func(taskID, path string) any {
		t.Helper()
		status, out := e.do(t, "GET", "/api/results/"+taskID+path, "")
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		return out.(map[string]any)["data"]
	}
	multi := run("Three strategies", code)
	page, doc := export(multi)

	t.Run("the strategy names are text", func(t *testing.T) {
		if strings.Contains(page, "<img") || !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("the strategy's name reaches the report unescaped")
		}
		if imgs := findAll(doc, func(n *html.Node) bool { return n.Data == "img" }); len(imgs) > 0 {
			t.Errorf("the report has %d img elements", len(imgs))
		}
		for _, bad := range []string{"<script", "<link", "@import", "url(", " style="} {
			if strings.Contains(page, bad) {
				t.Errorf("the report is not self-contained: %q", bad)
			}
		}
	})

	strategies := api(multi, "/strategies").([]any)
	names := make([]string, len(strategies))
	t.Run("by strategy", func(t *testing.T) {
		rows := tableRows(t, doc, "strategies")
		if len(strategies) != 3 || len(rows) != 3 {
			t.Fatalf("%d strategy rows, the route has %d", len(rows), len(strategies))
		}
		for i, s := range strategies {
			s := s.(map[string]any)
			names[i] = s["name"].(string)
			want := []string{numOf(float64(i), 0), names[i], numOf(s["orders"], 0), numOf(s["executions"], 0),
				numOf(s["trades"], 0) + " (" + numOf(s["won"], 0) + " won, " + numOf(s["lost"], 0) + " lost)",
				numOf(s["open_trades"], 0), numOf(s["pnl_closed"], 2), numOf(s["commission"], 2),
				numOf(s["sqn"].(map[string]any)["sqn"], 2), numOf(s["first_next_bar"], 0)}
			if strings.Join(rows[i], "|") != strings.Join(want, "|") {
				t.Errorf("strategy row %d reads %q, the route's %q", i, rows[i], want)
			}
			if s["executions"].(float64) == 0 {
				t.Errorf("strategy %d (%s) has no fills: the run shows nothing of it", i, names[i])
			}
		}
		if names[2] != evil {
			t.Errorf("the third strategy is named %q, want %q", names[2], evil)
		}
	})

	// The first two strategies share a name (two MultiCross with other parameters): the
	// trades and fills number them, as By strategy's # does.
	if names[0] != names[1] || names[0] == names[2] {
		t.Fatalf("strategy names %q: the test wants the first two alike", names)
	}
	labels := make([]string, len(strategies))
	for i, s := range strategies {
		labels[i], _ = s.(map[string]any)["label"].(string)
	}
	if want := []string{names[0] + " #0", names[1] + " #1", names[2]}; !slices.Equal(labels, want) {
		t.Fatalf("the strategies route labels them %q, want %q", labels, want)
	}
	t.Run("trades name their strategy", func(t *testing.T) {
		for _, c := range []struct {
			kind, table string
			column      int // the Strategy column: after # of a round trip, after the date of a fill
		}{{"round_trips", "round-trips", 1}, {"executions", "executions", 1}} {
			list := api(multi, "/trades?kind="+c.kind+"&limit=1000").(map[string]any)["trades"].([]any)
			rows := tableRows(t, doc, c.table)
			if len(rows) != len(list) || len(list) == 0 {
				t.Fatalf("%s: %d rows, the route has %d", c.kind, len(rows), len(list))
			}
			per := map[int]int{}
			for i, x := range list {
				k := int(x.(map[string]any)["strategy"].(float64))
				want := labels[k]
				per[k]++
				if rows[i][c.column] != want {
					t.Errorf("%s row %d: strategy %q, the route's %q", c.kind, i, rows[i][c.column], want)
				}
			}
			if len(per) != 3 {
				t.Errorf("%s of %d strategies, want 3: %v", c.kind, len(per), per)
			}
		}
	})

	t.Run("a run of one strategy has no strategy column", func(t *testing.T) {
		one := run("One strategy", strings.Replace(string(raw), "const strategies = ", "const others = ", 1))
		page, doc := export(one)
		if strings.Contains(page, `id="strategies"`) || strings.Contains(page, "By strategy") {
			t.Error("a run of one strategy has a By strategy section")
		}
		for _, h := range findAll(doc, func(n *html.Node) bool { return n.Data == "th" }) {
			if textOf(h) == "Strategy" {
				t.Error("a run of one strategy has a Strategy column")
			}
		}
	})
}

// jsString writes s as a JavaScript string literal (JSON's is one).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
