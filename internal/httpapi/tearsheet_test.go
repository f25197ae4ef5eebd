package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// uploadExample stores examples/<file> through the API and returns its id.
func (e *taskEnv) uploadExample(t *testing.T, file string) string {
	t.Helper()
	code, err := os.ReadFile(filepath.Join("..", "..", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"name": strings.TrimSuffix(file, ".js"), "code": string(code)})
	status, out := e.do(t, "POST", "/api/strategies", string(body))
	if status != 200 {
		t.Fatalf("upload %s: %d %v", file, status, out)
	}
	return out.(map[string]any)["id"].(string)
}

// TestFloatParameterOverAPI: examples/bollinger.js declares `devfactor: 2.0`, a float as in
// backtrader, so a run with 2.5 is accepted and runs; its int `period` refuses 2.5 and takes
// the whole float 3.0, as the reference's coercion says.
func TestFloatParameterOverAPI(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	id := e.uploadExample(t, "bollinger.js")

	_, params := e.do(t, "GET", "/api/strategies/"+id+"/parameters", "")
	types := map[string]any{}
	for _, p := range params.(map[string]any)["data"].([]any) {
		p := p.(map[string]any)
		types[p["name"].(string)] = p["type"]
	}
	if types["devfactor"] != "float" || types["period"] != "int" || types["size"] != "int" {
		t.Fatalf("parameter types %v", types)
	}

	submit := func(params string) (int, any) {
		return e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+id+`","start_date":"1970-01-01","end_date":"1979-12-31","strategy_params":`+params+`}`)
	}
	tests := []struct {
		name, params string
		status       int
		detail       string
		stored       map[string]any // the task's strategy_params
	}{
		{"float takes a fraction", `{"devfactor": 2.5}`, 200, "", map[string]any{"devfactor": 2.5}},
		{"int takes a whole float", `{"period": 3.0}`, 200, "", map[string]any{"period": 3.0}},
		{"int refuses a fraction", `{"period": 2.5}`, 400, "Parameter 'period': expected int, got float", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := submit(tc.params)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			m := body.(map[string]any)
			if tc.detail != "" {
				if m["detail"] != tc.detail {
					t.Fatalf("detail %q, want %q", m["detail"], tc.detail)
				}
				return
			}
			task := e.waitStatus(t, m["task_id"].(string), "completed", "failed")
			if task["status"] != "completed" {
				t.Fatalf("the run %s: %v", task["status"], task["error"])
			}
			for k, v := range tc.stored {
				if got := task["strategy_params"].(map[string]any)[k]; got != v {
					t.Errorf("stored %s = %v, want %v", k, got, v)
				}
			}
		})
	}
}

// TestReportTearsheet renders the HTML report of a real run through the API and reads it as a
// person would: every headline figure and statistic equals the API's, formatted here by the
// convention (en-US grouping, "−" for minus, 2 decimals, "%"), and the monthly and yearly
// returns, parameters, trades and executions tables hold the API's rows.
func TestReportTearsheet(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 1)
	id := e.uploadExample(t, "bollinger.js")
	_, body := e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+id+`","start_date":"1970-01-01","end_date":"1979-12-31","strategy_params":{"devfactor":1.5}}`)
	taskID := body.(map[string]any)["task_id"].(string)
	if task := e.waitStatus(t, taskID, "completed", "failed"); task["status"] != "completed" {
		t.Fatalf("the run %s: %v", task["status"], task["error"])
	}
	api := func(path string) map[string]any {
		t.Helper()
		status, out := e.do(t, "GET", "/api/results/"+taskID+path, "")
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		return out.(map[string]any)["data"].(map[string]any)
	}

	resp, err := http.Get(e.srv.URL + "/api/results/" + taskID + "/export?format=html")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("export: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	page := string(raw)
	for _, bad := range []string{"<script", "<link", "@import", "url(", " style="} { // a strict CSP allows the one <style> element
		if strings.Contains(page, bad) {
			t.Errorf("the report is not self-contained: %q", bad)
		}
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("headline figures", func(t *testing.T) {
		sum := api("/summary")
		want := map[string]string{
			"total_return": pctOf(sum["total_return"], 100), "annual_return": pctOf(sum["annual_return"], 100),
			"sharpe_ratio": numOf(sum["sharpe_ratio"], 2), "max_drawdown_pct": pctOf(sum["max_drawdown_pct"], 1),
			"final_value": numOf(sum["final_value"], 2), "initial_cash": numOf(sum["initial_cash"], 2),
			"max_drawdown": numOf(sum["max_drawdown"], 2), "total_trades": numOf(sum["total_trades"], 0),
			"win_rate": pctOf(sum["win_rate"], 1), "profit_factor": numOf(sum["profit_factor"], 2),
			"avg_win": numOf(sum["avg_win"], 2), "avg_loss": numOf(sum["avg_loss"], 2),
		}
		cards := findAll(doc, func(n *html.Node) bool { return n.Data == "li" && hasClass(n, "card") })
		if len(cards) != len(want) {
			t.Fatalf("%d headline cards, want %d", len(cards), len(want))
		}
		for _, c := range cards {
			key := attr(c, "data-key")
			value := textOf(findAll(c, func(n *html.Node) bool { return hasClass(n, "value") })[0])
			label := textOf(findAll(c, func(n *html.Node) bool { return hasClass(n, "label") })[0])
			if value != want[key] {
				t.Errorf("%s (%s) reads %q, the API's %v is %q", label, key, value, sum[key], want[key])
			}
			if label == "" || label == key {
				t.Errorf("%s has no label: %q", key, label)
			}
		}
		if !strings.Contains(page, "−") && sum["total_return"].(float64) < 0 {
			t.Error("no minus sign in a report with a loss")
		}
	})

	t.Run("statistics", func(t *testing.T) {
		n := 0
		for _, g := range api("/statistics")["groups"].([]any) {
			for _, m := range g.(map[string]any)["metrics"].([]any) {
				m := m.(map[string]any)
				cell := findAll(doc, func(n *html.Node) bool { return n.Data == "td" && attr(n, "data-key") == m["key"] })
				if len(cell) != 1 {
					t.Errorf("statistic %s: %d cells", m["key"], len(cell))
					continue
				}
				if got, want := textOf(cell[0]), displayOf(m["display"].(string)); got != want {
					t.Errorf("statistic %s reads %q, the API's display %q is %q", m["key"], got, m["display"], want)
				}
				if label := textOf(cell[0].PrevSibling); label != m["label"] {
					t.Errorf("statistic %s labelled %q, the API's %q", m["key"], label, m["label"])
				}
				n++
			}
		}
		if n < 24 {
			t.Errorf("only %d statistics", n)
		}
	})

	t.Run("monthly and yearly returns", func(t *testing.T) {
		heat := api("/chart?chart_type=monthly_heatmap")
		years := heat["yAxis"].(map[string]any)["data"].([]any)
		rows := tableRows(t, doc, "monthly-returns")
		if len(rows) != len(years) {
			t.Fatalf("%d monthly rows, the API has %d years", len(rows), len(years))
		}
		for _, d := range heat["series"].([]any)[0].(map[string]any)["data"].([]any) {
			cell := d.([]any)
			m, yi, v := int(cell[0].(float64)), int(cell[1].(float64)), cell[2].(float64)
			got := rows[yi][1+m]
			if got == "" && v == 0 { // no bars that month
				continue
			}
			if want := signedOf(v); got != want {
				t.Errorf("%v-%02d reads %q, the API's %v is %q", years[yi], m+1, got, v, want)
			}
		}
		yearly := api("/chart?chart_type=yearly_returns")
		labels := yearly["xAxis"].(map[string]any)["data"].([]any)
		yrows := tableRows(t, doc, "yearly-returns")
		if len(yrows) != len(labels) {
			t.Fatalf("%d yearly rows, the API has %d", len(yrows), len(labels))
		}
		for i, d := range yearly["series"].([]any)[0].(map[string]any)["data"].([]any) {
			v := d.(map[string]any)["value"].(float64)
			if yrows[i][0] != labels[i] || yrows[i][1] != pctOf(v, 1) {
				t.Errorf("year row %v, the API's %v is %s", yrows[i], labels[i], pctOf(v, 1))
			}
			if rows[i][13] != signedOf(v) {
				t.Errorf("the monthly table's %v total reads %q, want %q", labels[i], rows[i][13], signedOf(v))
			}
		}
	})

	t.Run("trades and executions", func(t *testing.T) {
		trips := api("/trades?kind=round_trips&limit=1000")
		trows := tableRows(t, doc, "round-trips")
		list := trips["trades"].([]any)
		if len(trows) != len(list) || len(list) == 0 {
			t.Fatalf("%d round trip rows, the API has %d", len(trows), len(list))
		}
		for i, rt := range list {
			rt := rt.(map[string]any)
			// columns: #, side, entry, exit, held, size, entry price, exit price, net P&L, fees, return
			if trows[i][2] != rt["entry_date"] || trows[i][5] != numOf(math.Abs(rt["size"].(float64)), 0) ||
				trows[i][6] != numOf(rt["entry_price"], 2) || trows[i][8] != numOf(rt["pnl_net"], 2) {
				t.Errorf("round trip %d reads %v, the API's %v", i+1, trows[i], rt)
			}
		}
		fills := api("/trades?kind=executions&limit=1000")
		frows := tableRows(t, doc, "executions")
		flist := fills["trades"].([]any)
		if len(frows) != len(flist) {
			t.Fatalf("%d execution rows, the API has %d", len(frows), len(flist))
		}
		for i, f := range flist {
			f := f.(map[string]any)
			if frows[i][0] != f["date"] || frows[i][1] != f["type"] || frows[i][2] != numOf(f["price"], 2) {
				t.Errorf("execution %d reads %v, the API's %v", i+1, frows[i], f)
			}
		}
	})

	t.Run("parameters and strategy version", func(t *testing.T) {
		rows := tableRows(t, doc, "parameters")
		got := map[string][]string{}
		for _, r := range rows {
			got[r[0]] = r
		}
		for name, want := range map[string][]string{
			"devfactor": {"devfactor", "1.5", "2.0", "float"},
			"period":    {"period", "20", "20", "int"},
			"size":      {"size", "10", "10", "int"},
		} {
			if r := got[name]; len(r) < 4 || strings.Join(r[:4], "|") != strings.Join(want, "|") {
				t.Errorf("parameter row %v, want %v", r, want)
			}
		}
		_, strat := e.do(t, "GET", "/api/strategies/"+id+"/versions", "")
		hash := fmt.Sprint(firstVersionHash(strat))
		for key, want := range map[string]string{"strategy": "bollinger (" + id + ", version 1)", "content_hash": hash, "task_id": taskID} {
			dd := findAll(doc, func(n *html.Node) bool { return n.Data == "dd" && attr(n, "data-key") == key })
			if len(dd) != 1 || textOf(dd[0]) != want {
				t.Errorf("fact %s: %d elements, want %q", key, len(dd), want)
				for _, d := range dd {
					t.Logf("  reads %q", textOf(d))
				}
			}
		}
	})

	t.Run("charts have axes", func(t *testing.T) {
		svgs := findAll(doc, func(n *html.Node) bool { return n.Data == "svg" })
		if len(svgs) != 2 {
			t.Fatalf("%d charts", len(svgs))
		}
		for _, s := range svgs {
			var labels []string
			for _, n := range findAll(s, func(n *html.Node) bool { return n.Data == "text" }) {
				labels = append(labels, textOf(n))
			}
			joined := strings.Join(labels, " ")
			if !strings.Contains(joined, "1975") || len(labels) < 6 {
				t.Errorf("chart %s has no date axis: %q", attr(s, "aria-label"), joined)
			}
		}
	})
}

func firstVersionHash(body any) any {
	m, _ := body.(map[string]any)
	list, _ := m["data"].([]any)
	if len(list) == 0 {
		return nil
	}
	return list[0].(map[string]any)["content_hash"]
}

// The convention, written independently of the report's code with x/text's en-US printer.
var enUS = message.NewPrinter(language.AmericanEnglish)

func numOf(v any, digits int) string {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) {
		return "—"
	}
	s := enUS.Sprintf("%.*f", digits, f)
	if strings.HasPrefix(s, "-") {
		if strings.Trim(s, "-0.,") == "" {
			return s[1:]
		}
		return "−" + s[1:]
	}
	return s
}

// pctOf writes v×scale as a percent with 2 decimals.
func pctOf(v any, scale float64) string {
	f, ok := v.(float64)
	if !ok {
		return "—"
	}
	return numOf(f*scale, 2) + "%"
}

func signedOf(v float64) string {
	s := numOf(v, 2)
	if v > 0 && strings.Trim(s, "0.,") != "" {
		return "+" + s
	}
	return s
}

// displayOf re-writes a statistics display text ("-1234.50%", "12 days") by the convention.
func displayOf(display string) string {
	i := strings.IndexFunc(display, func(r rune) bool { return !strings.ContainsRune("-0123456789.", r) })
	if i < 0 {
		i = len(display)
	}
	if i == 0 {
		return display
	}
	f, err := strconv.ParseFloat(display[:i], 64)
	if err != nil {
		return display
	}
	digits := 0
	if j := strings.IndexByte(display[:i], '.'); j >= 0 {
		digits = i - j - 1
	}
	unit := display[i:]
	if display[:i] == "1" && unit == " days" {
		unit = " day"
	}
	return numOf(f, digits) + unit
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
		out = append(out, findAll(c, match)...)
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// textOf is an element's rendered text, spaces collapsed.
func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// tableRows returns the text of the body rows' cells of the table with id.
func tableRows(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	tables := findAll(doc, func(n *html.Node) bool { return n.Data == "table" && attr(n, "id") == id })
	if len(tables) != 1 {
		t.Fatalf("%d tables %q", len(tables), id)
	}
	var rows [][]string
	for _, tb := range findAll(tables[0], func(n *html.Node) bool { return n.Data == "tbody" }) {
		for _, tr := range findAll(tb, func(n *html.Node) bool { return n.Data == "tr" }) {
			var cells []string
			for c := tr.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
					cells = append(cells, textOf(c))
				}
			}
			rows = append(rows, cells)
		}
	}
	return rows
}
