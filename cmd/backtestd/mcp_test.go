package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/pgtest"
)

// asMainEnv set to 1 makes the test binary run main() (TestMain): a child process that is
// the program itself, as an agent starts `backtestd mcp`.
const asMainEnv = "BACKTESTD_TEST_AS_MAIN"

// startApp boots `backtestd serve` on a free port against db, with two workers.
func startApp(t *testing.T, db string, args ...string) string {
	t.Helper()
	cfg, _, err := config.Load("serve", append([]string{"-listen", "127.0.0.1:0", "-database-url", db, "-workers", "2"}, args...),
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	a, err := openApp(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-done
		a.Close()
	})
	return "http://" + a.Addr().String()
}

// bearer adds an API token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP is an MCP client session on base's /mcp (with token when not empty).
func connectHTTP(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectStdio starts `backtestd mcp` as a child process and is a client session on its
// stdin and stdout.
func connectStdio(t *testing.T, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"mcp"}, args...)...)
	cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("close stdio session: %v\n%s", err, stderr.String())
		}
	})
	return cs
}

// toolCall calls a tool and returns its text and whether it is a tool error.
func toolCall(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError
}

// okCall calls a tool that must succeed and decodes its JSON answer.
func okCall(t *testing.T, cs *mcp.ClientSession, name string, args any) map[string]any {
	t.Helper()
	text, isErr := toolCall(t, cs, name, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %s", name, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		var list []any
		if json.Unmarshal([]byte(text), &list) == nil {
			return map[string]any{"list": list}
		}
		t.Fatalf("%s: answer is not JSON: %v\n%s", name, err, text)
	}
	return m
}

const holdCode = `class Hold extends Strategy { static params = { size: 1 }; next() { if (!this.position.size) this.buy({ size: this.p.size }); } }`

// TestMCPTools drives every tool through the SDK's client over both transports: the
// service's POST /mcp (streamable HTTP) and `backtestd mcp` as a child process (stdio),
// against one database whose runs the service's workers do.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	base := startApp(t, db)
	web := connectHTTP(t, base, "")

	tools, err := web.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s lacks a description or an input schema", tool.Name)
		}
	}
	for _, want := range []string{"list_strategies", "get_strategy", "list_versions", "save_strategy", "run_backtest", "get_task",
		"get_result_summary", "get_result_statistics", "get_result_trades", "start_study", "get_study", "check_lookahead",
		"reproduce_run", "diff_runs"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (has %v)", want, names)
		}
	}

	st := okCall(t, web, "save_strategy", map[string]any{"name": "Hold", "code": holdCode})
	sid, _ := st["id"].(string)
	if sid == "" || st["version"] != 1.0 {
		t.Fatalf("save_strategy answered %v", st)
	}
	st = okCall(t, web, "save_strategy", map[string]any{"strategy_id": sid, "name": "Hold", "code": strings.Replace(holdCode, "size: 1 };", "size: 2 };", 1)})
	if st["version"] != 2.0 {
		t.Fatalf("save_strategy of new code answered version %v, want 2", st["version"])
	}
	if vs := okCall(t, web, "list_versions", map[string]any{"strategy_id": sid}); !strings.Contains(fmt.Sprint(vs), "version:2") {
		t.Errorf("list_versions: %v", vs)
	}

	req := map[string]any{"strategy_id": sid, "symbol": "GLOBEX", "start_date": "2020-01-01", "end_date": "2020-12-31"}
	run := okCall(t, web, "run_backtest", merge(req, map[string]any{"wait_seconds": 240}))
	id, _ := run["task_id"].(string)
	if run["status"] != "completed" {
		t.Fatalf("run_backtest with wait: %v", run)
	}
	sum := okCall(t, web, "get_result_summary", map[string]any{"task_id": id})
	if sum["total_trades"] != 1.0 {
		t.Errorf("get_result_summary: %v", sum)
	}
	if stats := okCall(t, web, "get_result_statistics", map[string]any{"task_id": id}); len(stats) == 0 {
		t.Errorf("get_result_statistics: %v", stats)
	}
	trades := okCall(t, web, "get_result_trades", map[string]any{"task_id": id, "limit": 1, "kind": "executions"})
	if items, _ := trades["trades"].([]any); len(items) != 1 || trades["total"] != 1.0 {
		t.Errorf("get_result_trades limit 1: %v", trades)
	}

	again := okCall(t, web, "reproduce_run", map[string]any{"task_id": id, "wait_seconds": 240})
	if again["status"] != "completed" || again["task_id"] == id {
		t.Fatalf("reproduce_run: %v", again)
	}
	diff := okCall(t, web, "diff_runs", map[string]any{"task_id": id, "against": again["task_id"]})
	if len(diff) == 0 {
		t.Errorf("diff_runs: %v", diff)
	}
	look := okCall(t, web, "check_lookahead", merge(req, map[string]any{"version": 2}))
	if look["lookahead"] != false || look["strategy_version"] != 2.0 {
		t.Errorf("check_lookahead: %v", look)
	}

	study := okCall(t, web, "start_study", merge(req, map[string]any{"space": map[string]any{"size": []int{1, 2, 3}}}))
	studyID, _ := study["id"].(string)
	got := okCall(t, web, "get_study", map[string]any{"study_id": studyID, "wait_seconds": 300})
	if s, _ := got["study"].(map[string]any); s["status"] != "completed" {
		t.Fatalf("get_study with wait: %v", got)
	}
	if !strings.Contains(fmt.Sprint(got["results"]), "size") {
		t.Errorf("get_study results lack the parameter: %v", got["results"])
	}

	// Bad arguments are tool errors that say what is wrong.
	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_task", map[string]any{"task_id": ""}, "task_id is required"},
		{"get_task", map[string]any{"task_id": "task_nope"}, "404"},
		{"get_task", map[string]any{"task_id": id, "wait_seconds": 100000}, "wait_seconds must be from 0 to 600"},
		{"run_backtest", map[string]any{"symbol": "GLOBEX"}, "strategy_id"},
		{"run_backtest", merge(req, map[string]any{"start_date": "2020-13-45"}), "start_date"},
		{"get_result_trades", map[string]any{"task_id": id, "limit": -1}, "limit"},
		{"save_strategy", map[string]any{"name": "Broken", "code": "class X extends Strategy { next( { }"}, "400"},
		{"start_study", req, `missing properties: ["space"]`},
		{"diff_runs", map[string]any{"task_id": id}, `missing properties: ["against"]`},
		{"diff_runs", map[string]any{"task_id": id, "against": ""}, "against is required"},
		{"start_study", merge(req, map[string]any{"space": map[string]any{}}), "space is required"},
		{"check_lookahead", merge(req, map[string]any{"version": 0}), "version must be 1 or more"},
	}
	for _, b := range bad {
		text, isErr := toolCall(t, web, b.tool, b.args)
		if !isErr || !strings.Contains(text, b.want) {
			t.Errorf("%s(%v): error=%v %q, want a tool error with %q", b.tool, b.args, isErr, text, b.want)
		}
	}

	// stdio: the same tools from a child process, against the same database.
	cli := connectStdio(t, nil, "-database-url", db, "-workers", "0")
	list := okCall(t, cli, "list_strategies", map[string]any{})
	if !strings.Contains(fmt.Sprint(list), sid) {
		t.Errorf("list_strategies over stdio lacks %s: %v", sid, list)
	}
	queued := okCall(t, cli, "run_backtest", req)
	if queued["status"] != "pending" && queued["status"] != "running" && queued["status"] != "completed" {
		t.Errorf("run_backtest without wait over stdio: %v", queued)
	}
	done := okCall(t, cli, "get_task", map[string]any{"task_id": queued["task_id"], "wait_seconds": 240})
	if done["status"] != "completed" {
		t.Fatalf("get_task with wait over stdio: %v", done)
	}
	if s := okCall(t, cli, "get_result_summary", map[string]any{"task_id": queued["task_id"]}); s["total_trades"] != 1.0 {
		t.Errorf("get_result_summary over stdio: %v", s)
	}
	if text, isErr := toolCall(t, cli, "get_result_summary", map[string]any{"task_id": "task_nope"}); !isErr || !strings.Contains(text, "404") {
		t.Errorf("get_result_summary of an unknown task over stdio: error=%v %q", isErr, text)
	}
}

func merge(a, b map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// TestMCPRoles: with accounts, POST /mcp without a token is a 401; a viewer's tools read
// but cannot run or write (the API's 403 as a tool error); a researcher runs; over stdio
// the tools act with BACKTESTD_TOKEN's user. Cross-site and non-JSON posts are refused.
func TestMCPRoles(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	noEnv := func(string) string { return "" }
	cmd := func(stdin string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append(args, "--database-url", db), noEnv, strings.NewReader(stdin), &out, &errOut); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	cmd("quiet-maple-3141\n", "user", "add", "--name", "ada", "--role", "admin")
	cmd("tiger-lily-9041\n", "user", "add", "--name", "rita", "--role", "researcher")
	cmd("blue-heron-2718\n", "user", "add", "--name", "vic", "--role", "viewer")
	tokenRE := regexp.MustCompile(`btd_\S+`)
	researcher := tokenRE.FindString(cmd("", "token", "create", "--user", "rita"))
	viewer := tokenRE.FindString(cmd("", "token", "create", "--user", "vic"))
	if researcher == "" || viewer == "" {
		t.Fatal("token create printed no token")
	}
	base := startApp(t, db, "-auth", "on")

	post := func(header map[string]string, body string) (int, string) {
		t.Helper()
		r, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"a bad token", map[string]string{"Authorization": "Bearer btd_nope"}, http.StatusUnauthorized},
		{"cross-site", map[string]string{"Authorization": "Bearer " + viewer, "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"text/plain", map[string]string{"Authorization": "Bearer " + viewer, "Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"a viewer", map[string]string{"Authorization": "Bearer " + viewer}, http.StatusOK},
	} {
		if code, body := post(c.header, initBody); code != c.want {
			t.Errorf("POST /mcp with %s: %d %s, want %d", c.name, code, body, c.want)
		}
	}

	rita := connectHTTP(t, base, researcher)
	st := okCall(t, rita, "save_strategy", map[string]any{"name": "Hold", "code": holdCode})
	sid, _ := st["id"].(string)
	req := map[string]any{"strategy_id": sid, "symbol": "GLOBEX", "start_date": "2020-01-01", "end_date": "2020-12-31"}
	run := okCall(t, rita, "run_backtest", merge(req, map[string]any{"wait_seconds": 240}))
	if run["status"] != "completed" || run["created_by"] != "rita" {
		t.Fatalf("a researcher's run_backtest: %v", run)
	}

	vic := connectHTTP(t, base, viewer)
	if list := okCall(t, vic, "list_strategies", map[string]any{}); !strings.Contains(fmt.Sprint(list), sid) {
		t.Errorf("a viewer's list_strategies: %v", list)
	}
	if s := okCall(t, vic, "get_result_summary", map[string]any{"task_id": run["task_id"]}); s["total_trades"] != 1.0 {
		t.Errorf("a viewer's get_result_summary: %v", s)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"run_backtest", req},
		{"save_strategy", map[string]any{"name": "Mine", "code": holdCode}},
		{"reproduce_run", map[string]any{"task_id": run["task_id"]}},
		{"start_study", merge(req, map[string]any{"space": map[string]any{"size": []int{1, 2}}})},
	} {
		if text, isErr := toolCall(t, vic, c.tool, c.args); !isErr || !strings.Contains(text, "403") {
			t.Errorf("a viewer's %s: error=%v %q, want a 403 tool error", c.tool, isErr, text)
		}
	}

	// stdio acts with BACKTESTD_TOKEN's user, or with none (401) without it.
	asVic := connectStdio(t, []string{"BACKTESTD_TOKEN=" + viewer}, "-database-url", db, "-workers", "0", "-auth", "on")
	if list := okCall(t, asVic, "list_strategies", map[string]any{}); !strings.Contains(fmt.Sprint(list), sid) {
		t.Errorf("list_strategies over stdio as a viewer: %v", list)
	}
	if text, isErr := toolCall(t, asVic, "run_backtest", req); !isErr || !strings.Contains(text, "403") {
		t.Errorf("run_backtest over stdio as a viewer: error=%v %q, want 403", isErr, text)
	}
	nobody := connectStdio(t, nil, "-database-url", db, "-workers", "0", "-auth", "on")
	if text, isErr := toolCall(t, nobody, "list_strategies", map[string]any{}); !isErr || !strings.Contains(text, "401") {
		t.Errorf("list_strategies over stdio without a token: error=%v %q, want 401", isErr, text)
	}
}
