package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/proctest"
	"github.com/backtestd/backtestd/internal/store"
)

// notebookPython is Debian's Python 3, whose packages (python3-pandas, python3-sqlalchemy,
// python3-psycopg2, python3-matplotlib; .ci/run installs them) are what docs/notebook.md's
// running blocks may use. The `python3` first on PATH may be another one without them.
const notebookPython = "/usr/bin/python3"

// notebookBlocks returns the code of docs/notebook.md's ```python blocks, in order, and the
// number of ```python no-run blocks. A no-run block needs a package Debian does not ship
// (pyarrow for pandas' read_parquet, DuckDB): it is shown to readers but cannot run against
// Debian's Python, so the test counts it, logs it and skips it. Any other python info string
// is an error, so a typo cannot quietly take a block out of the test.
func notebookBlocks(text string) (run []string, noRun int, err error) {
	var fenced, keep bool
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case fenced && line == "```":
			fenced = false
			if keep {
				run = append(run, cur.String())
			} else {
				noRun++
			}
			cur.Reset()
		case fenced:
			cur.WriteString(line + "\n")
		case line == "```python":
			fenced, keep = true, true
		case line == "```python no-run":
			fenced, keep = true, false
		case strings.HasPrefix(line, "```python"):
			return nil, 0, fmt.Errorf("line %d: %q: a python block is ```python (runs in the test) or ```python no-run", n, line)
		}
	}
	if fenced {
		return nil, 0, fmt.Errorf("a python block is not closed")
	}
	return run, noRun, sc.Err()
}

func TestNotebookBlocksParse(t *testing.T) {
	md := "# x\n```python\na = 1\n```\n```sh\necho\n```\n```python no-run\nimport pyarrow\n```\n```python\nb = 2\n```\n"
	run, noRun, err := notebookBlocks(md)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(run, "|") != "a = 1\n|b = 2\n" || noRun != 1 {
		t.Fatalf("blocks %q, %d no-run; want the two running ones and 1", run, noRun)
	}
	for _, bad := range []string{"```python\nx\n", "```python norun\nx\n```\n", "```python3\nx\n```\n"} {
		if _, _, err := notebookBlocks(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// TestNotebookDoc runs docs/notebook.md's python blocks, as written, in one Debian Python
// process against a live service with accounts on: a fresh database holding a completed
// backtest of examples/sma_cross.js and a finished fast × slow study of it, an API token, and
// a role made by `backtestd bi-role create`. The blocks read them from BASE_URL, TOKEN,
// RESULT_ID, STUDY_ID and BI_DSN. Every block must succeed, and what the page reads must be
// what the API answers: the frames' row counts equal the API's totals, the heatmap is a PNG
// of the study's grid, the Parquet download is Parquet.
func TestNotebookDoc(t *testing.T) {
	if out, err := exec.Command(notebookPython, "-c", "import pandas, sqlalchemy, psycopg2, matplotlib").CombinedOutput(); err != nil {
		t.Fatalf("%s lacks a package of docs/notebook.md (apt-get install python3-pandas python3-sqlalchemy python3-psycopg2 python3-matplotlib; .ci/run installs them): %v\n%s", notebookPython, err, out)
	}
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "docs", "notebook.md"))
	must(t, err)
	blocks, noRun, err := notebookBlocks(string(md))
	must(t, err)
	script := strings.Join(blocks, "\n")
	// The names the checks below read: if the page stops defining them, the test says so
	// rather than checking nothing.
	for _, want := range []string{"trades = ", "executions = ", "board = ", "grid = ", `"heatmap.png"`, `"trades.parquet"`, "sql_trades = ", "pd.read_sql(", "storage_options=auth"} {
		if !strings.Contains(script, want) {
			t.Fatalf("docs/notebook.md's python blocks no longer contain %q: the test would not check it", want)
		}
	}
	t.Logf("docs/notebook.md: %d python blocks run, %d python no-run blocks skipped (they need pyarrow or DuckDB, which Debian does not package)", len(blocks), noRun)

	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, dbURL, 2)
	must(t, err)
	a := auth.NewService(st, 0)
	_, err = a.AddUser(ctx, "root", auth.RoleAdmin, teamPasswords["root"])
	must(t, err)
	token, _, err := a.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: "root"})
	must(t, err)
	st.Close()

	p := proctest.Start(t, []string{"SAMPLE_DATA=true", "STRATEGY_DIRS=", "BASE_PATH=", "AUTH=on"},
		"serve", "--listen", "127.0.0.1:0", "--database-url", dbURL, "--workers", "2", "--log-level", "info")
	api := &tokenClient{base: p.URL(t), token: token}
	deadline := time.Now().Add(60 * time.Second)
	for { // a backtest needs the sample symbols
		var syms []any
		if err := api.envelope("GET", "/api/data/builtin/symbols", nil, &syms); err == nil && len(syms) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sample symbols after 60 s:\n%s", proctest.Tail(p.Log(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}

	code, err := os.ReadFile(filepath.Join(root, "examples", "sma_cross.js"))
	must(t, err)
	var strategy struct{ ID string }
	must(t, api.do("POST", "/api/strategies", map[string]any{"name": "SMA cross", "code": string(code)}, &strategy))
	run := map[string]any{"strategy_id": strategy.ID, "symbol": "ACME", "start_date": "2015-01-01", "end_date": "2024-12-31"}
	var task struct {
		TaskID string `json:"task_id"`
	}
	must(t, api.do("POST", "/api/backtests", run, &task))
	study := map[string]any{"space": map[string]any{"fast": []int{5, 10, 15, 20}, "slow": []int{40, 60, 80}}, "objective": "sharpe_ratio"}
	for k, v := range run {
		study[k] = v
	}
	var created struct{ ID string }
	must(t, api.do("POST", "/api/studies", study, &created))
	api.waitDone(t, "/api/backtests/"+task.TaskID, p)
	api.waitDone(t, "/api/studies/"+created.ID, p)

	// The BI role, made as docs/sql.md says; roles are the server's, so it goes at the end.
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	role, password := "bi_notebook_"+hex.EncodeToString(suffix[:]), "Notebook-bi-pw-5821"
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Logf("dropping role %s: %v", role, err)
			return
		}
		defer c.Close(context.Background())
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE IF EXISTS " + role} {
			if _, err := c.Exec(context.Background(), q); err != nil {
				t.Logf("%s: %v", q, err)
			}
		}
	})
	birole := exec.Command(proctest.Binary(t), "bi-role", "create", role, "--database-url", dbURL)
	birole.Stdin = strings.NewReader(password + "\n")
	if out, err := birole.CombinedOutput(); err != nil {
		t.Fatalf("backtestd bi-role create: %v\n%s", err, out)
	}
	dsn, err := url.Parse(dbURL)
	if err != nil || dsn.Scheme == "" {
		t.Fatalf("the test database's address %q is not a URL (%v): BI_DSN is built from it", dbURL, err)
	}
	dsn.Scheme, dsn.User = "postgresql", url.UserPassword(role, password) // SQLAlchemy 1.4 wants postgresql://

	// What the page's frames hold, written by the same process after its blocks.
	dir := t.TempDir()
	checks := filepath.Join(dir, "checks.json")
	script += fmt.Sprintf(`
import json
with open(%q, "w") as f:
    json.dump({"trades": len(trades), "executions": len(executions), "equity": len(equity),
               "board": len(board), "grid": list(grid.shape), "sql_trades": len(sql_trades)}, f)
`, checks)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	py := exec.CommandContext(ctx, notebookPython, "-")
	py.Dir = dir
	py.Stdin = strings.NewReader(script)
	py.Env = append(os.Environ(), "BASE_URL="+api.base, "TOKEN="+token, "RESULT_ID="+task.TaskID,
		"STUDY_ID="+created.ID, "BI_DSN="+dsn.String(), "MPLCONFIGDIR="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/notebook.md's python blocks failed (%v):\n%s\nservice log:\n%s", err, proctest.Tail(string(out), 60), proctest.Tail(p.Log(), 30))
	}
	t.Logf("the blocks' output:\n%s", proctest.Tail(string(out), 40))

	var got struct {
		Trades, Executions, Equity, Board int
		SQLTrades                         int `json:"sql_trades"`
		Grid                              []int
	}
	raw, err := os.ReadFile(checks)
	must(t, err)
	must(t, json.Unmarshal(raw, &got))

	total := func(kind string) int {
		var page struct{ Total int }
		must(t, api.envelope("GET", "/api/results/"+task.TaskID+"/trades?limit=1&kind="+kind, nil, &page))
		return page.Total
	}
	roundTrips, fills := total("round_trips"), total("executions")
	if roundTrips == 0 || fills == 0 {
		t.Fatalf("the backtest has %d round trips and %d fills: the frames would prove nothing", roundTrips, fills)
	}
	if got.Trades != roundTrips || got.SQLTrades != roundTrips {
		t.Errorf("trades frame %d rows, bi_trades frame %d, want the API's %d round trips", got.Trades, got.SQLTrades, roundTrips)
	}
	if got.Executions != fills {
		t.Errorf("executions frame %d rows, want the API's %d fills", got.Executions, fills)
	}
	if got.Equity == 0 {
		t.Error("the equity frame is empty")
	}
	var board struct{ Total int }
	must(t, api.do("GET", "/api/studies/"+created.ID+"/results?limit=1", nil, &board))
	if got.Board != board.Total || board.Total != 12 {
		t.Errorf("leaderboard frame %d rows, the API's %d, want 12 (4 fast × 3 slow)", got.Board, board.Total)
	}
	if fmt.Sprint(got.Grid) != "[3 4]" {
		t.Errorf("the heatmap's grid is %v, want 3 slow × 4 fast", got.Grid)
	}
	for file, magic := range map[string]string{"heatmap.png": "\x89PNG\r\n\x1a\n", "trades.parquet": "PAR1"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !bytes.HasPrefix(b, []byte(magic)) || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v; want a file starting %q", file, len(b), err, magic)
		}
	}
}

// tokenClient calls the API with a bearer token.
type tokenClient struct{ base, token string }

// do sends a request and decodes a 2xx answer's JSON into into.
func (c *tokenClient) do(method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, raw)
	}
	return json.Unmarshal(raw, into)
}

// envelope is do for the routes that answer {data: …}.
func (c *tokenClient) envelope(method, path string, body, into any) error {
	var env struct{ Data json.RawMessage }
	if err := c.do(method, path, body, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, into)
}

// waitDone polls a task or study until it has completed, and fails the test if it fails.
func (c *tokenClient) waitDone(t *testing.T, path string, p *proctest.Proc) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var s struct{ Status string }
		must(t, c.do("GET", path, nil, &s))
		switch s.Status {
		case "completed":
			return
		case "failed", "cancelled":
			t.Fatalf("%s is %s:\n%s", path, s.Status, proctest.Tail(p.Log(), 30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %s after 2 minutes:\n%s", path, s.Status, proctest.Tail(p.Log(), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
