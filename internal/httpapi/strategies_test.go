package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

const smaCode = `/**
 * Moving-average crossover.
 * fast: period of the fast moving average
 * slow: period of the slow moving average
 */
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10, ratio: 0.5, label: "x", on: true, steps: [1, 2] };

  init() {
    this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast),
                               ind.SMA(this.data.close, this.p.slow));
  }

  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: this.p.size });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}
`

const rsiCode = `/** Buy the dip. period: RSI period */
class Dip extends Strategy {
  static params = { period: 14 };
  next() {}
}
`

// bundle is a running API on a fresh database.
type bundle struct {
	url   string
	store *store.Store
	token string // with accounts on, root's API token sent with every request
}

func setup(t *testing.T) *bundle { return setupAccounts(t, false) }

// setupAccounts is setup with accounts on when accounts is set: requests carry the token
// of root, an admin.
func setupAccounts(t *testing.T, accounts bool) *bundle {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := httpapi.Deps{Store: st, Logger: log, Strategies: httpapi.StrategiesForTest(t, st)}
	b := &bundle{store: st}
	if accounts {
		deps.Auth, b.token = httpapi.AccountsForTest(t, st)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{}, deps))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

// do sends body (a string is sent as is, anything else as JSON) and returns the status
// and the raw response body.
func (b *bundle) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// call is do plus decoding the body into a generic value and checking the status.
func (b *bundle) call(t *testing.T, method, path string, body any, wantStatus int) map[string]any {
	t.Helper()
	status, raw := b.do(t, method, path, body)
	if status != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, wantStatus, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
	}
	return out
}

func (b *bundle) create(t *testing.T, name, code string) map[string]any {
	t.Helper()
	return b.call(t, "POST", "/api/strategies", map[string]any{"name": name, "description": "d", "code": code}, 200)
}

func (b *bundle) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	if err := b.store.Pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStrategyLifecycle runs the strategy routes without accounts and, with
// accounts on, as an admin with an API token: the same answers either way.
func TestStrategyLifecycle(t *testing.T) {
	t.Parallel()
	for _, accounts := range []bool{false, true} {
		t.Run(fmt.Sprintf("accounts=%v", accounts), func(t *testing.T) {
			t.Parallel()
			testStrategyLifecycle(t, setupAccounts(t, accounts))
		})
	}
}

func testStrategyLifecycle(t *testing.T, b *bundle) {

	created := b.create(t, "SMA", smaCode)
	id, _ := created["id"].(string)
	if !regexp.MustCompile(`^str_[1-9][0-9]*$`).MatchString(id) {
		t.Fatalf("id %q is not of the form str_<n>", id)
	}
	for k, want := range map[string]any{"name": "SMA", "description": "d", "code": smaCode, "version": 1.0, "origin": "api"} {
		if created[k] != want {
			t.Errorf("created %s = %v, want %v", k, created[k], want)
		}
	}
	createdAt, _ := created["created_at"].(string)
	if _, err := time.Parse(time.RFC3339Nano, createdAt); err != nil {
		t.Errorf("created_at %q is not ISO 8601: %v", createdAt, err)
	}

	t.Run("params keep declaration order and types", func(t *testing.T) {
		_, raw := b.do(t, "GET", "/api/strategies/"+id, nil)
		want := `"params":{"fast":10,"slow":30,"size":10,"ratio":0.5,"label":"x","on":true,"steps":[1,2]}`
		if !strings.Contains(string(raw), want) {
			t.Fatalf("body %s does not contain %s", raw, want)
		}
		_, raw = b.do(t, "GET", "/api/strategies/"+id+"/params", nil)
		wantEnv := `{"code":"ok","message":"success","data":{"fast":10,"slow":30,"size":10,"ratio":0.5,"label":"x","on":true,"steps":[1,2]}}`
		if strings.TrimSpace(string(raw)) != wantEnv {
			t.Fatalf("params = %s, want %s", raw, wantEnv)
		}
	})

	t.Run("list is a bare array", func(t *testing.T) {
		status, raw := b.do(t, "GET", "/api/strategies", nil)
		var list []map[string]any
		if status != 200 || json.Unmarshal(raw, &list) != nil || len(list) != 1 || list[0]["id"] != id {
			t.Fatalf("list: %d %s", status, raw)
		}
	})

	t.Run("description defaults to the doc comment", func(t *testing.T) {
		got := b.call(t, "POST", "/api/strategies", map[string]any{"name": "Dip", "code": rsiCode}, 200)
		if got["description"] != "Buy the dip. period: RSI period" {
			t.Fatalf("description %q", got["description"])
		}
	})

	replaced := b.call(t, "PUT", "/api/strategies/"+id, map[string]any{"name": "Dip2", "code": rsiCode}, 200)
	if replaced["id"] != id || replaced["created_at"] != createdAt || replaced["name"] != "Dip2" || replaced["code"] != rsiCode || replaced["version"] != 2.0 {
		t.Fatalf("replace changed id/created_at or kept old fields: %v", replaced)
	}
	if p, _ := replaced["params"].(map[string]any); len(p) != 1 || p["period"] != 14.0 {
		t.Fatalf("replaced params %v", replaced["params"])
	}

	del := b.call(t, "DELETE", "/api/strategies/"+id, nil, 200)
	if del["code"] != "ok" || !strings.Contains(del["message"].(string), id) {
		t.Fatalf("delete answered %v", del)
	}
	if n := b.count(t, "SELECT count(*) FROM strategy_versions WHERE strategy_id = '"+id+"'"); n != 2 {
		t.Fatalf("%d versions kept after delete, want 2", n)
	}

	notFound := []struct{ method, path string }{
		{"GET", "/api/strategies/" + id},
		{"PUT", "/api/strategies/" + id},
		{"DELETE", "/api/strategies/" + id},
		{"GET", "/api/strategies/" + id + "/params"},
		{"GET", "/api/strategies/" + id + "/parameters"},
		{"GET", "/api/strategies/" + id + "/config"},
		{"POST", "/api/strategies/" + id + "/config"},
		{"GET", "/api/strategies/" + id + "/versions"},
		{"GET", "/api/strategies/" + id + "/versions/1"},
		{"GET", "/api/strategies/str_999999"},
		{"DELETE", "/api/strategies/nope"},
	}
	for _, tc := range notFound {
		t.Run("404 "+tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			switch {
			case tc.method == "PUT":
				body = map[string]any{"name": "x", "code": rsiCode}
			case tc.method == "POST":
				body = map[string]any{"params": map[string]any{}}
			}
			got := b.call(t, tc.method, tc.path, body, 404)
			wantID := strings.Split(strings.TrimPrefix(tc.path, "/api/strategies/"), "/")[0]
			if got["detail"] != "Strategy not found: "+wantID {
				t.Fatalf("detail %q", got["detail"])
			}
		})
	}
}

func TestStrategyVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, "v", rsiCode)["id"].(string)
	code2 := strings.Replace(rsiCode, "14", "21", 1)
	b.call(t, "PUT", "/api/strategies/"+id, map[string]any{"name": "v2", "code": code2}, 200)
	b.call(t, "PUT", "/api/strategies/"+id, map[string]any{"name": "v3", "code": smaCode}, 200)

	list := b.call(t, "GET", "/api/strategies/"+id+"/versions", nil, 200)
	items, _ := list["data"].([]any)
	if list["code"] != "ok" || len(items) != 3 {
		t.Fatalf("versions: %v", list)
	}
	for i, wantName := range []string{"v3", "v2", "v"} {
		v := items[i].(map[string]any)
		if v["version"] != float64(3-i) || v["name"] != wantName || v["origin"] != "api" || v["strategy_id"] != id {
			t.Errorf("versions[%d] = %v", i, v)
		}
		if _, hasCode := v["code"]; hasCode {
			t.Errorf("versions[%d] carries code in the list", i)
		}
	}

	one := b.call(t, "GET", "/api/strategies/"+id+"/versions/2", nil, 200)["data"].(map[string]any)
	sum := sha256.Sum256([]byte(code2))
	if one["code"] != code2 || one["content_hash"] != hex.EncodeToString(sum[:]) || one["class_name"] != "Dip" {
		t.Fatalf("version 2 = %v", one)
	}
	if p := one["params"].(map[string]any); p["period"] != 21.0 {
		t.Fatalf("version 2 params %v", p)
	}

	got := b.call(t, "GET", "/api/strategies/"+id+"/versions/9", nil, 404)
	if !strings.Contains(got["detail"].(string), "version 9") {
		t.Fatalf("missing version detail %q", got["detail"])
	}
	got = b.call(t, "GET", "/api/strategies/"+id+"/versions/abc", nil, 400)
	if !strings.Contains(got["detail"].(string), "Invalid version") {
		t.Fatalf("bad version detail %q", got["detail"])
	}
}

func TestStrategyBadCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name       string
		code       string
		wantStatus int
		wantDetail string
		wantLine   float64
	}{
		{"syntax error", "class A extends Strategy {\n  next() {\n    x = ;\n  }\n}", 400, "Invalid strategy code: Failed to load strategy: SyntaxError: Unexpected token ;", 3},
		{"runtime error at top level", "\nthrow new Error('boom')", 400, "Invalid strategy code: Failed to load strategy: Error: boom", 2},
		{"no subclass", "class Foo {\n  next() {}\n}", 400, "Invalid strategy code: Foo is not a Strategy subclass", 0},
		{"only Strategy itself", "const S = Strategy;\nS.params = { a: 1 };", 400, "Invalid strategy code: Failed to load strategy: no Strategy subclass found", 0},
		{"endless loop at top level", "while (true) {}", 400, "Invalid strategy code: Failed to load strategy: timed out while evaluating the code", 0},
		{"2 MB of junk", strings.Repeat("\x07junk{", 2_000_000/6), 413, "1048576 bytes (1 MiB)", 0},
		{"2 MB of printable junk", strings.Repeat("junk{(", 2_000_000/6), 413, "Strategy code too large: 1999998 bytes, the limit is 1048576 bytes (1 MiB)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			for _, req := range []struct{ method, path string }{{"POST", "/api/strategies"}} {
				got := b.call(t, req.method, req.path, map[string]any{"name": "bad", "code": tt.code}, tt.wantStatus)
				if d, _ := got["detail"].(string); !strings.HasSuffix(d, tt.wantDetail) {
					t.Fatalf("detail %q, want it to end in %q", d, tt.wantDetail)
				}
				if tt.wantLine > 0 && got["line"] != tt.wantLine {
					t.Fatalf("line %v, want %v (body %v)", got["line"], tt.wantLine, got)
				}
			}
			// A guard against hangs, not a timing assertion: the loader's own limit is 0.5 s
			// of computing, but a machine busier than the stress test took 16 s.
			if d := time.Since(start); d > time.Minute {
				t.Fatalf("took %s", d)
			}
		})
	}
	t.Run("replace with bad code keeps the strategy", func(t *testing.T) {
		t.Parallel()
		id := b.create(t, "good", rsiCode)["id"].(string)
		got := b.call(t, "PUT", "/api/strategies/"+id, map[string]any{"name": "bad", "code": "while(true){}"}, 400)
		if !strings.HasPrefix(got["detail"].(string), "Invalid strategy code: ") {
			t.Fatalf("detail %q", got["detail"])
		}
		after := b.call(t, "GET", "/api/strategies/"+id, nil, 200)
		if after["name"] != "good" || after["version"] != 1.0 {
			t.Fatalf("strategy changed by a refused replace: %v", after)
		}
	})
}

func TestStrategyBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	t.Run("NUL character in the name", func(t *testing.T) {
		// Valid JSON that PostgreSQL cannot store: a 400, not a 500.
		status, raw := b.do(t, "POST", "/api/strategies", map[string]any{"name": "a\x00b", "code": rsiCode})
		if status != 400 || !strings.Contains(string(raw), "without NUL") {
			t.Fatalf("got %d %s, want 400 naming the NUL character", status, raw)
		}
	})
	big := strings.Repeat("// pad\n", (1<<20)/7+1) + rsiCode
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantDetail string // substring
	}{
		{"malformed JSON", `{"name": "x", "code": `, 400, "Malformed JSON"},
		{"not JSON at all", `hello`, 400, "Malformed JSON"},
		{"empty body", ``, 400, "Request body is empty"},
		{"array instead of object", `[1, 2]`, 422, "must be a JSON object"},
		{"name of the wrong type", `{"name": 5, "code": "x"}`, 422, "Field 'name': expected string, got number"},
		{"code of the wrong type", `{"name": "x", "code": {"a": 1}}`, 422, "Field 'code': expected string, got object"},
		{"missing name", map[string]any{"code": rsiCode}, 422, "Field 'name' is required"},
		{"blank name", map[string]any{"name": "  ", "code": rsiCode}, 422, "Field 'name' is required"},
		{"missing code", map[string]any{"name": "x"}, 422, "Field 'code' is required"},
		{"unknown field", map[string]any{"name": "x", "code": rsiCode, "params": map[string]any{}}, 422, `Unknown field "params"`},
		{"trailing data", `{"name": "x", "code": "y"} {}`, 400, "unexpected data after the JSON object"},
		{"code over 1 MiB", map[string]any{"name": "x", "code": big}, 413, "the limit is 1048576 bytes (1 MiB)"},
		{"body over the body limit", `{"name": "x", "code": "` + strings.Repeat("a", 3<<20) + `"}`, 413, "limited to 1048576 bytes (1 MiB)"},
		{"description too long", map[string]any{"name": "x", "description": strings.Repeat("d", 10001), "code": rsiCode}, 422, "Field 'description' is too long"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 201), "code": rsiCode}, 422, "Field 'name' is too long"},
	}
	for _, tt := range tests {
		for _, method := range []string{"POST", "PUT"} {
			t.Run(method+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				path := "/api/strategies"
				if method == "PUT" {
					path = "/api/strategies/str_1"
				}
				status, raw := b.do(t, method, path, tt.body)
				if status != tt.wantStatus {
					t.Fatalf("status %d, want %d: %s", status, tt.wantStatus, raw)
				}
				var got map[string]any
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if d, _ := got["detail"].(string); !strings.Contains(d, tt.wantDetail) {
					t.Fatalf("detail %q, want it to contain %q", d, tt.wantDetail)
				}
			})
		}
	}
	// Parallel subtests finish before the parent's cleanups run.
	t.Cleanup(func() {
		if n := b.count(t, "SELECT count(*) FROM strategies") + b.count(t, "SELECT count(*) FROM strategy_versions"); n != 0 {
			t.Errorf("%d strategy rows written by refused requests", n)
		}
	})
}

func TestStrategyParametersAndConfig(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, "SMA", smaCode)["id"].(string)

	params := b.call(t, "GET", "/api/strategies/"+id+"/parameters", nil, 200)
	list := params["data"].([]any)
	if params["code"] != "ok" || len(list) != 7 {
		t.Fatalf("parameters: %v", params)
	}
	first := list[0].(map[string]any)
	want := map[string]any{"name": "fast", "value": 10.0, "type": "int", "default": 10.0, "description": "period of the fast moving average"}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("parameters[0].%s = %v, want %v", k, first[k], v)
		}
	}
	types := []string{}
	for _, p := range list {
		types = append(types, p.(map[string]any)["type"].(string))
	}
	if strings.Join(types, ",") != "int,int,int,float,str,bool,list" {
		t.Errorf("types %v", types)
	}

	_, raw := b.do(t, "GET", "/api/strategies/"+id+"/config", nil)
	wantExport := `{"strategy_id":"` + id + `","version":1,"params":{"fast":10,"slow":30,"size":10,"ratio":0.5,"label":"x","on":true,"steps":[1,2]}}`
	if strings.TrimSpace(string(raw)) != wantExport {
		t.Fatalf("export = %s, want %s", raw, wantExport)
	}

	imported := b.call(t, "POST", "/api/strategies/"+id+"/config",
		map[string]any{"params": map[string]any{"fast": "5", "ratio": 2, "on": "no"}}, 200)
	data := imported["data"].(map[string]any)["params"].(map[string]any)
	if data["fast"] != 5.0 || data["ratio"] != 2.0 || data["on"] != false || data["slow"] != 30.0 {
		t.Fatalf("imported params %v", data)
	}
	_, raw = b.do(t, "GET", "/api/strategies/"+id+"/config", nil)
	if !strings.Contains(string(raw), `"params":{"fast":5,"slow":30,"size":10,"ratio":2,"label":"x","on":false,`) {
		t.Fatalf("export after import = %s", raw)
	}
	after := b.call(t, "GET", "/api/strategies/"+id+"/parameters", nil, 200)["data"].([]any)[0].(map[string]any)
	if after["value"] != 5.0 || after["default"] != 10.0 {
		t.Fatalf("parameter info after import %v", after)
	}

	t.Run("an exported configuration imports back", func(t *testing.T) {
		_, exported := b.do(t, "GET", "/api/strategies/"+id+"/config", nil)
		b.call(t, "POST", "/api/strategies/"+id+"/config", string(exported), 200)
	})

	bad := []struct {
		name, body string
		wantStatus int
		wantDetail string
	}{
		{"unknown parameter", `{"params": {"nope": 1}}`, 400, "Unknown parameter: nope"},
		{"wrong type", `{"params": {"fast": "abc"}}`, 400, "Parameter 'fast': expected int, got str"},
		{"float for int", `{"params": {"slow": 1.5}}`, 400, "Parameter 'slow': expected int, got float"},
		{"missing params", `{"strategy_id": "x"}`, 422, "Field 'params' is required"},
		{"params not an object", `{"params": [1]}`, 422, "Field 'params': expected object"},
		{"unknown field", `{"params": {}, "extra": 1}`, 422, `Unknown field "extra"`},
		{"malformed", `{"params": `, 400, "Malformed JSON"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got := b.call(t, "POST", "/api/strategies/"+id+"/config", tt.body, tt.wantStatus)
			if d, _ := got["detail"].(string); !strings.Contains(d, tt.wantDetail) {
				t.Fatalf("detail %q, want %q", d, tt.wantDetail)
			}
		})
	}

	t.Run("replace keeps the saved values that still fit", func(t *testing.T) {
		code := strings.Replace(smaCode, "fast: 10,", "", 1)
		b.call(t, "PUT", "/api/strategies/"+id, map[string]any{"name": "SMA", "code": code}, 200)
		_, raw := b.do(t, "GET", "/api/strategies/"+id+"/config", nil)
		if !strings.Contains(string(raw), `"version":2,"params":{"slow":30,"size":10,"ratio":2,"label":"x","on":false,`) {
			t.Fatalf("config after replace = %s", raw)
		}
	})
}

func TestStrategyTemplates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := b.call(t, "GET", "/api/strategies/templates", nil, 200)
	list, _ := got["data"].([]any)
	if got["code"] != "ok" || len(list) == 0 {
		t.Fatalf("templates: %v", got)
	}
	var sma map[string]any
	for _, e := range list {
		if m := e.(map[string]any); m["name"] == "sma_cross" {
			sma = m
		}
	}
	if sma == nil || sma["class_name"] != "SmaCross" || sma["description"] == "" || !strings.Contains(sma["code"].(string), "extends Strategy") {
		t.Fatalf("sma_cross template: %v", sma)
	}
	if p := sma["params"].(map[string]any); p["fast"] != 10.0 {
		t.Fatalf("template params %v", p)
	}
	// Every template uploads as a strategy.
	for _, e := range list {
		m := e.(map[string]any)
		b.call(t, "POST", "/api/strategies", map[string]any{"name": m["name"], "code": m["code"]}, 200)
	}
}
