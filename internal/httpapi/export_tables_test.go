package httpapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/backtestd/backtestd/internal/csvsafe"
)

// getRaw sends a GET with the API token given ("" for none) and returns the answer as it is.
func (e *taskEnv) getRaw(t *testing.T, token, path string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// csvTable reads a plain CSV answer: its header and rows as maps by column.
func csvTable(t *testing.T, b []byte) ([]string, []map[string]string) {
	t.Helper()
	all, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(all) == 0 {
		t.Fatalf("not CSV with a header (%v):\n%.500s", err, b)
	}
	rows := make([]map[string]string, len(all)-1)
	for i, r := range all[1:] {
		rows[i] = map[string]string{}
		for c, name := range all[0] {
			rows[i][name] = r[c]
		}
	}
	return all[0], rows
}

// parquetTable reads a Parquet answer with parquet-go: its columns by name and its rows.
func parquetTable(t *testing.T, b []byte) (map[string]int, []parquet.Field, []parquet.Row) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not Parquet: %v", err)
	}
	fields := f.Schema().Fields()
	idx := map[string]int{}
	for i, c := range fields {
		idx[c.Name()] = i
	}
	r := parquet.NewReader(bytes.NewReader(b))
	defer r.Close()
	rows := make([]parquet.Row, f.NumRows())
	n := 0
	for n < len(rows) {
		k, err := r.ReadRows(rows[n:])
		n += k
		if err != nil {
			if err == io.EOF {
				break
			}
			t.Fatal(err)
		}
	}
	if n != len(rows) {
		t.Fatalf("read %d of %d rows", n, len(rows))
	}
	return idx, fields, rows
}

// TestResultExportTables exports each table of a run of three strategies (testdata's
// multi_strategies.js) as plain CSV and as Parquet with an API token, as a notebook would:
// the row counts are the API's, fills and round trips name their symbol, strategy (the
// strategies route's label) and commission as the trades route does, Parquet's times are
// timestamps, and pandas reads the CSV as it is.
func TestResultExportTables(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 1, true)
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "backtrader", "strategies", "multi_strategies.js"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"name": "Three strategies", "code": string(raw)})
	status, out := e.do(t, "POST", "/api/strategies", string(body))
	if status != 200 {
		t.Fatalf("upload: %d %v", status, out)
	}
	sid := out.(map[string]any)["id"].(string)
	_, out = e.do(t, "POST", "/api/backtests", `{"strategy_id":"`+sid+`","start_date":"1970-01-01","end_date":"1979-12-31"}`)
	id := out.(map[string]any)["task_id"].(string)
	if task := e.waitStatus(t, id, "completed", "failed"); task["status"] != "completed" {
		t.Fatalf("the run %s: %v", task["status"], task["error"])
	}
	api := func(path string) any {
		t.Helper()
		status, out := e.do(t, "GET", "/api/results/"+id+path, "")
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		return out.(map[string]any)["data"]
	}
	var labels []string
	for _, s := range api("/strategies").([]any) {
		labels = append(labels, s.(map[string]any)["label"].(string))
	}
	if len(labels) != 3 {
		t.Fatalf("strategies %q, want 3", labels)
	}
	_, _, doc := e.getRaw(t, e.token, "/api/results/"+id+"/export?format=json")
	var full struct {
		Equity []struct {
			Date  string  `json:"date"`
			Value float64 `json:"value"`
		} `json:"equity_curve"`
	}
	if err := json.Unmarshal(doc, &full); err != nil {
		t.Fatal(err)
	}
	var metrics []map[string]any
	for _, g := range api("/statistics").(map[string]any)["groups"].([]any) {
		for _, m := range g.(map[string]any)["metrics"].([]any) {
			metrics = append(metrics, m.(map[string]any))
		}
	}
	list := func(kind string) []map[string]any {
		var out []map[string]any
		for {
			page := api(fmt.Sprintf("/trades?kind=%s&limit=1000&skip=%d", kind, len(out))).(map[string]any)
			items := page["trades"].([]any)
			for _, x := range items {
				out = append(out, x.(map[string]any))
			}
			if total := int(page["total"].(float64)); len(out) >= total || len(items) == 0 {
				if len(out) != total || total == 0 {
					t.Fatalf("%s: %d listed of %d", kind, len(out), total)
				}
				return out
			}
		}
	}
	fills, trips := list("executions"), list("round_trips")

	// want is, for each table, the API's rows and the columns checked against them: the
	// export's cell as text, and the API's value it must equal.
	type check struct {
		column string
		api    func(row int) string
	}
	str := func(rows []map[string]any, key string) func(int) string {
		return func(i int) string { return fmt.Sprint(rows[i][key]) }
	}
	num := func(rows []map[string]any, key string) func(int) string {
		return func(i int) string { return strconv.FormatFloat(rows[i][key].(float64), 'f', -1, 64) }
	}
	label := func(rows []map[string]any) func(int) string {
		return func(i int) string { return labels[int(rows[i]["strategy"].(float64))] }
	}
	tables := []struct {
		name, timeColumn string
		rows             int
		checks           []check
	}{
		{"executions", "date", len(fills), []check{{"date", str(fills, "date")}, {"symbol", str(fills, "symbol")}, {"strategy", label(fills)},
			{"type", str(fills, "type")}, {"price", num(fills, "price")}, {"size", num(fills, "size")}, {"commission", num(fills, "commission")}, {"pnl", num(fills, "pnl")}}},
		{"trades", "entry_date", len(trips), []check{{"entry_date", str(trips, "entry_date")}, {"symbol", str(trips, "symbol")}, {"strategy", label(trips)},
			{"pnl_net", num(trips, "pnl_net")}, {"commission", num(trips, "commission")}, {"bars_held", num(trips, "bars_held")}}},
		{"equity", "date", len(full.Equity), []check{{"date", func(i int) string { return full.Equity[i].Date }},
			{"value", func(i int) string { return strconv.FormatFloat(full.Equity[i].Value, 'f', -1, 64) }}}},
		{"statistics", "", len(metrics), []check{{"key", str(metrics, "key")}, {"display", str(metrics, "display")}}},
	}
	for _, tb := range tables {
		t.Run(tb.name+" csv", func(t *testing.T) {
			status, h, b := e.getRaw(t, e.token, "/api/results/"+id+"/export?format=csv&table="+tb.name)
			if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
				t.Fatalf("%d %s: %.300s", status, h.Get("Content-Type"), b)
			}
			header, rows := csvTable(t, b)
			if len(rows) != tb.rows {
				t.Fatalf("%d rows, the API has %d; header %q", len(rows), tb.rows, header)
			}
			for _, c := range tb.checks {
				for i := range rows {
					// Text a spreadsheet would evaluate ("-0.06%") is written as text.
					if got, want := rows[i][c.column], csvsafe.Cell(c.api(i)); got != want {
						t.Fatalf("row %d %s = %q, the API's %q", i, c.column, got, want)
					}
				}
			}
		})
		t.Run(tb.name+" parquet", func(t *testing.T) {
			status, h, b := e.getRaw(t, e.token, "/api/results/"+id+"/export?format=parquet&table="+tb.name)
			if status != 200 || h.Get("Content-Type") != "application/vnd.apache.parquet" {
				t.Fatalf("%d %s: %.300s", status, h.Get("Content-Type"), b)
			}
			idx, fields, rows := parquetTable(t, b)
			if len(rows) != tb.rows {
				t.Fatalf("%d rows, the API has %d", len(rows), tb.rows)
			}
			if tb.timeColumn != "" {
				c := fields[idx[tb.timeColumn]]
				if lt := c.Type().LogicalType().String(); !strings.HasPrefix(lt, "TIMESTAMP(isAdjustedToUTC=true") {
					t.Fatalf("%s: logical type %q, want a timestamp", tb.timeColumn, lt)
				}
			}
			for _, c := range tb.checks {
				col, ok := idx[c.column]
				if !ok {
					t.Fatalf("no column %s", c.column)
				}
				kind := fields[col].Type().Kind()
				for i, row := range rows {
					v := row[col]
					var got string
					switch {
					case kind == parquet.Int64 && c.column == tb.timeColumn || c.column == "date":
						got = time.UnixMicro(v.Int64()).UTC().Format(time.RFC3339)
						want := c.api(i)
						if len(want) == 10 {
							want += "T00:00:00Z"
						}
						if got != want {
							t.Fatalf("row %d %s = %s, the API's %s", i, c.column, got, want)
						}
						continue
					case kind == parquet.Double:
						got = strconv.FormatFloat(v.Double(), 'f', -1, 64)
					case kind == parquet.Int64:
						got = strconv.FormatInt(v.Int64(), 10)
					case kind == parquet.ByteArray:
						got = string(v.ByteArray())
					default:
						t.Fatalf("column %s of kind %v", c.column, kind)
					}
					if want := c.api(i); got != want {
						t.Fatalf("row %d %s = %q, the API's %q", i, c.column, got, want)
					}
				}
			}
		})
	}

	t.Run("every strategy and the commission are there", func(t *testing.T) {
		_, _, b := e.getRaw(t, e.token, "/api/results/"+id+"/export?format=csv&table=executions")
		_, rows := csvTable(t, b)
		seen, paid := map[string]bool{}, 0.0
		for _, r := range rows {
			seen[r["strategy"]] = true
			c, _ := strconv.ParseFloat(r["commission"], 64)
			paid += c
		}
		if len(seen) != 3 {
			t.Errorf("fills of %d strategies, want 3: %v", len(seen), seen)
		}
		if paid <= 0 {
			t.Errorf("no commission in %d fills", len(rows))
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, c := range []struct {
			path   string
			token  string
			status int
			detail string
		}{
			{"/api/results/" + id + "/export?format=csv&table=orders", e.token, 400, "Unsupported export table"},
			{"/api/results/" + id + "/export?format=parquet", e.token, 400, "table="},
			{"/api/results/" + id + "/export?format=html&table=trades", e.token, 400, "Unsupported format"},
			{"/api/results/tsk_nope/export?format=parquet&table=trades", e.token, 404, ""},
			{"/api/results/" + id + "/export?format=csv&table=trades", "", 401, ""},
		} {
			status, _, b := e.getRaw(t, c.token, c.path)
			if status != c.status || !strings.Contains(string(b), c.detail) {
				t.Errorf("GET %s: %d %s, want %d with %q", c.path, status, b, c.status, c.detail)
			}
		}
	})

	t.Run("the envelope export is unchanged", func(t *testing.T) {
		status, out := e.do(t, "GET", "/api/results/"+id+"/export?format=csv", "")
		if m, _ := out.(map[string]any); status != 200 || m["content_type"] != "text/csv" || !strings.HasPrefix(fmt.Sprint(m["data"]), "metric,value\n") {
			t.Errorf("format=csv without a table: %d %v", status, out)
		}
	})

	t.Run("pandas reads the CSV as it is", func(t *testing.T) {
		py := pandasPython(t)
		for _, tb := range tables {
			url := e.srv.URL + "/api/results/" + id + "/export?format=csv&table=" + tb.name
			script := `import sys, pandas as pd
df = pd.read_csv(sys.argv[1], storage_options={"Authorization": "Bearer " + sys.argv[2]})
print(len(df), ",".join(df.columns))`
			out, err := exec.Command(py, "-c", script, url, e.token).CombinedOutput()
			if err != nil {
				t.Fatalf("pandas on %s: %v\n%s", tb.name, err, out)
			}
			n, cols, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
			if n != strconv.Itoa(tb.rows) || !strings.Contains(cols, tb.checks[0].column) {
				t.Errorf("pandas reads %s as %s rows of %s; the API has %d rows", tb.name, n, cols, tb.rows)
			}
		}
	})
}

// pandasPython is the Python with pandas that the notebook checks run: Debian's
// python3-pandas for /usr/bin/python3 (.ci/run installs it).
func pandasPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import pandas").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import pandas (apt-get install python3-pandas; .ci/run installs it): %v\n%s", py, err, out)
	}
	return py
}

// TestStudyResultsExport exports a study's leaderboard as plain CSV and as Parquet: every
// combination, in the leaderboard's order, its parameters as columns (integers as
// integers), its objective as the JSON leaderboard's.
func TestStudyResultsExport(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 2, true)
	code, body := e.do(t, "POST", "/api/studies", fmt.Sprintf(studyBody, `,"objective":"total_return"`))
	if code != 200 {
		t.Fatalf("create: %d %v", code, body)
	}
	id := body.(map[string]any)["id"].(string)
	e.waitStudy(t, id, "completed")
	_, out := e.do(t, "GET", "/api/studies/"+id+"/results?limit=1000", "")
	board := out.(map[string]any)
	var trials []map[string]any
	for _, x := range board["trials"].([]any) {
		trials = append(trials, x.(map[string]any))
	}
	if total := int(board["total"].(float64)); total != len(trials) || total != 7 {
		t.Fatalf("the leaderboard lists %d of %d combinations, want 7", len(trials), total)
	}
	param := func(i int, name string) string { return fmt.Sprint(trials[i]["params"].(map[string]any)[name]) }
	objective := func(i int) string { return strconv.FormatFloat(trials[i]["objective"].(float64), 'f', -1, 64) }

	t.Run("csv", func(t *testing.T) {
		status, h, b := e.getRaw(t, e.token, "/api/studies/"+id+"/results?format=csv")
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
			t.Fatalf("%d %s: %.300s", status, h.Get("Content-Type"), b)
		}
		header, rows := csvTable(t, b)
		if len(rows) != len(trials) {
			t.Fatalf("%d rows, the leaderboard has %d", len(rows), len(trials))
		}
		if strings.Join(header[:3], ",") != "idx,fast,slow" {
			t.Errorf("header %q: want idx and the parameters first", header)
		}
		for i, r := range rows {
			if r["idx"] != fmt.Sprint(trials[i]["idx"]) || r["fast"] != param(i, "fast") || r["slow"] != param(i, "slow") ||
				r["objective"] != objective(i) || r["status"] != "completed" {
				t.Errorf("row %d %v, the leaderboard's %v", i, r, trials[i])
			}
		}
	})
	t.Run("parquet", func(t *testing.T) {
		status, h, b := e.getRaw(t, e.token, "/api/studies/"+id+"/results?format=parquet")
		if status != 200 || h.Get("Content-Type") != "application/vnd.apache.parquet" {
			t.Fatalf("%d %s: %.300s", status, h.Get("Content-Type"), b)
		}
		idx, fields, rows := parquetTable(t, b)
		if len(rows) != len(trials) {
			t.Fatalf("%d rows, the leaderboard has %d", len(rows), len(trials))
		}
		for _, name := range []string{"fast", "slow", "idx", "total_trades"} {
			if k := fields[idx[name]].Type().Kind(); k != parquet.Int64 {
				t.Errorf("column %s of kind %v, want INT64", name, k)
			}
		}
		if k := fields[idx["objective"]].Type().Kind(); k != parquet.Double {
			t.Errorf("objective of kind %v, want DOUBLE", k)
		}
		for i, r := range rows {
			got := []string{strconv.FormatInt(r[idx["fast"]].Int64(), 10), strconv.FormatInt(r[idx["slow"]].Int64(), 10),
				strconv.FormatFloat(r[idx["objective"]].Double(), 'f', -1, 64)}
			if want := []string{param(i, "fast"), param(i, "slow"), objective(i)}; strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("row %d: %q, the leaderboard's %q", i, got, want)
			}
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		for _, c := range []struct {
			path, token string
			status      int
		}{
			{"/api/studies/" + id + "/results?format=xlsx", e.token, 400},
			{"/api/studies/study_nope/results?format=csv", e.token, 404},
			{"/api/studies/" + id + "/results?format=csv&fold=9", e.token, 400},
			{"/api/studies/" + id + "/results?format=parquet", "", 401},
		} {
			if status, _, b := e.getRaw(t, c.token, c.path); status != c.status {
				t.Errorf("GET %s: %d %s, want %d", c.path, status, b, c.status)
			}
		}
	})
}
