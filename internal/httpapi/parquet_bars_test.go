package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/tabular"
)

// postBars posts body to a symbol's bars route as contentType and returns the answer.
func (e *taskEnv) postBars(t *testing.T, symbol, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/data/testsrc/"+symbol+"/bars", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestParquetBarsRoute imports a Parquet file written by Apache Arrow (testdata/parquet),
// reads it back as JSON and as Parquet, imports that Parquet again to another symbol with
// the same bars, exports an older version after a re-import, and refuses bad files with a
// 400 that says why, importing nothing.
func TestParquetBarsRoute(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "parquet", "arrow_daily.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	const pq = "application/vnd.apache.parquet"
	if status, out := e.postBars(t, "PQX", pq, fixture); status != 200 || !strings.HasPrefix(out["message"].(string), "Imported 3 bars") {
		t.Fatalf("import: %d %v", status, out)
	}
	const span = "?start_date=2016-01-01&end_date=2016-12-31"
	jsonBars := func(symbol, extra string) string {
		t.Helper()
		status, out := e.do(t, "GET", "/api/data/testsrc/"+symbol+span+extra, "")
		if status != 200 {
			t.Fatalf("GET %s: %d %v", symbol, status, out)
		}
		b, _ := json.Marshal(out.(map[string]any)["data"].(map[string]any)["bars"])
		return string(b)
	}
	want := `[{"close":51.125,"datetime":"2016-07-13","high":52,"low":49.75,"open":50.5,"volume":250000},` +
		`{"close":52.125,"datetime":"2016-07-14","high":53,"low":50.75,"open":51.5,"volume":250001},` +
		`{"close":53.125,"datetime":"2016-07-15","high":54,"low":51.75,"open":52.5,"volume":250002}]`
	if got := jsonBars("PQX", ""); got != want {
		t.Fatalf("bars read back\n%s\nwant\n%s", got, want)
	}
	parquetBars := func(symbol, extra string) ([]byte, []engine.Bar) {
		t.Helper()
		status, h, b := e.getRaw(t, "", "/api/data/testsrc/"+symbol+span+"&format=parquet"+extra)
		if status != 200 || h.Get("Content-Type") != pq {
			t.Fatalf("export: %d %s %.200s", status, h.Get("Content-Type"), b)
		}
		bars, problems, err := tabular.ReadBars(b, time.UTC)
		if err != nil || len(problems) > 0 {
			t.Fatalf("the export does not read back: %v %v", err, problems)
		}
		return b, bars
	}
	exported, bars := parquetBars("PQX", "")
	if len(bars) != 3 || bars[2].Close != 53.125 || !bars[2].Time.Equal(time.Date(2016, 7, 15, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("exported bars %+v", bars)
	}
	if status, out := e.postBars(t, "PQY", pq, exported); status != 200 {
		t.Fatalf("re-import of the export: %d %v", status, out)
	}
	if got := jsonBars("PQY", ""); got != want {
		t.Fatalf("the round trip changed the bars:\n%s\nwant\n%s", got, want)
	}

	t.Run("a version", func(t *testing.T) {
		changed := append([]engine.Bar(nil), bars...)
		changed[1].Close = 52.5
		var b bytes.Buffer
		if err := tabular.WriteBars(&b, changed); err != nil {
			t.Fatal(err)
		}
		if status, out := e.postBars(t, "PQX", pq, b.Bytes()); status != 200 {
			t.Fatalf("re-import: %d %v", status, out)
		}
		if _, v1 := parquetBars("PQX", "&version=1"); v1[1].Close != 52.125 {
			t.Errorf("version 1's second close %v, want the first import's 52.125", v1[1].Close)
		}
		if _, latest := parquetBars("PQX", ""); latest[1].Close != 52.5 {
			t.Errorf("the latest second close %v, want 52.5", latest[1].Close)
		}
	})

	t.Run("bad files", func(t *testing.T) {
		table := func(cols ...tabular.Column) []byte {
			var b bytes.Buffer
			if err := tabular.WriteParquet(&b, tabular.Table{Rows: 3, Columns: cols}); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		day := tabular.Column{Name: "date", Kind: tabular.Date, Cell: func(i int) any { return time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC) }}
		price := func(name string, v ...float64) tabular.Column {
			return tabular.Column{Name: name, Kind: tabular.Float, Cell: func(i int) any {
				if len(v) > 0 {
					return v[i]
				}
				return 10.0
			}}
		}
		for _, c := range []struct {
			name, contentType string
			body              []byte
			status            int
			detail            string
			lines             int
		}{
			{"missing columns", pq, table(day, price("open"), price("high")), 400, "Invalid Parquet: missing column(s) low, close", 0},
			{"a text price", pq, table(day, price("open"), price("high"), price("low"),
				tabular.Column{Name: "close", Kind: tabular.String, Cell: func(int) any { return "10" }}), 400, `column "close" has type STRING`, 0},
			{"not Parquet", pq, []byte("date,open,high,low,close\n"), 400, "Invalid Parquet: not a Parquet file", 0},
			{"cut short", pq, fixture[:len(fixture)-40], 400, "Invalid Parquet", 0},
			{"bad rows", pq, table(day, price("open", 10, -1, 10), price("high", 10, 10, 8), price("low", 9, 9, 9), price("close")), 400,
				"Invalid Parquet at row 2: open -1 is not positive (prices must be greater than 0) (2 bad rows in all)", 2},
			{"another media type", "application/octet-stream", fixture, 415, "Content-Type must be", 0},
		} {
			status, out := e.postBars(t, "PQZ", c.contentType, c.body)
			detail, _ := out["detail"].(string)
			lines, _ := out["errors"].([]any) // each {line: the 1-based row, message}
			if status != c.status || !strings.Contains(detail, c.detail) || len(lines) != c.lines {
				t.Errorf("%s: %d %v, want %d with %q and %d lines", c.name, status, out, c.status, c.detail, c.lines)
			}
		}
		if status, out := e.do(t, "GET", "/api/data/testsrc/PQZ"+span, ""); status == 200 {
			if b := out.(map[string]any)["data"].(map[string]any)["bars"].([]any); len(b) > 0 {
				t.Errorf("bad files imported %d bars", len(b))
			}
		}
		if status, _, b := e.getRaw(t, "", "/api/data/testsrc/PQX"+span+"&format=xml"); status != 400 || !strings.Contains(string(b), "Unsupported format") {
			t.Errorf("format=xml: %d %s", status, b)
		}
	})
}
