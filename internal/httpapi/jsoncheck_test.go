package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/apperr"
)

// TestCheckJSON holds the scan every JSON document passes before decoding to what it
// refuses (depth, duplicate keys at any depth, lone surrogates) and what it lets through.
func TestCheckJSON(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	nestObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	long := strings.Repeat("k", 5000)
	cases := []struct {
		name, doc string
		want      string // a part of the detail; "" for accepted
	}{
		{"flat object", `{"a":1,"b":"x","c":[1,2,{"d":null}]}`, ""},
		{"depth at the bound (arrays)", nest(MaxJSONDepth), ""},
		{"depth at the bound (objects)", nestObj(MaxJSONDepth), ""},
		{"depth over the bound (arrays)", nest(MaxJSONDepth + 1), "nested too deeply at byte " + strconv.Itoa(MaxJSONDepth)},
		{"depth over the bound (objects)", nestObj(MaxJSONDepth + 1), "at most " + strconv.Itoa(MaxJSONDepth) + " levels"},
		{"the red team's 9,990 levels", `{"strategy_params":` + nest(9990) + `}`, "nested too deeply"},
		{"brackets inside strings do not count", `{"a":"` + strings.Repeat("[{", 100) + `"}`, ""},
		{"duplicate key", `{"role":"viewer","role":"admin"}`, `Duplicate key "role" at byte 17`},
		{"duplicate key differing in case", `{"role":"viewer","Role":"admin"}`, `Duplicate key "Role"`},
		{"duplicate key written with an escape", `{"role":"viewer","r\u006fle":"admin"}`, `Duplicate key "role"`},
		{"duplicate key deep inside", `{"a":[{"b":{"c":1,"c":2}}]}`, `Duplicate key "c"`},
		{"duplicate among many keys", `{` + manyKeys(40) + `,"K7":0}`, `Duplicate key "K7"`},
		{"many keys, none twice", `{` + manyKeys(40) + `}`, ""},
		{"same key in sibling objects", `{"a":{"k":1},"b":{"k":2},"k":[{"k":1},{"k":2}]}`, ""},
		{"a value equal to a key", `{"k":"k","j":"k"}`, ""},
		{"long duplicate key quoted cut to 200 bytes", `{"` + long + `":1,"` + long + `":2}`, `"` + strings.Repeat("k", 200) + `… (5000 bytes)"`},
		{"lone high surrogate", `{"name":"a\ud800b"}`, `"\\ud800" is half of a UTF-16 surrogate pair`},
		{"high surrogate at the end", `{"name":"\ud800"}`, `surrogate pair`},
		{"two high surrogates", `{"name":"\ud800\ud800"}`, `surrogate pair`},
		{"lone low surrogate", `{"name":"\udc00"}`, `"\\udc00" is the low half`},
		{"lone surrogate in a key", `{"\udfff":1}`, `low half`},
		{"valid pair", `{"name":"\ud83d\ude00"}`, ""},
		{"escaped backslash before u", `{"name":"\\ud800"}`, ""},
		{"malformed JSON is left to the decoder", `{"a":[1,}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := checkJSON([]byte(c.doc))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || !strings.Contains(e.Detail, c.want) {
				t.Fatalf("got %v, want a 400 containing %q", err, c.want)
			}
			if len(e.Detail) > 400 {
				t.Errorf("detail of %d bytes quotes too much input", len(e.Detail))
			}
		})
	}
}

// manyKeys is n members "k0":0, "k1":1, ...
func manyKeys(n int) string {
	var m []string
	for i := range n {
		m = append(m, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	return strings.Join(m, ",")
}

// TestJSONBodiesChecked sends bodies through the API: every JSON route and the JSON bar
// import refuse what checkJSON refuses, and the simple-request types with 415.
func TestJSONBodiesChecked(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 0, true) // accounts on, as an admin: every route decodes
	deep := `{"strategy_id":"str_1","strategy_params":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		detail                          string
	}{
		{"deep params", "POST", "/api/backtests", "application/json", deep, 400, "nested too deeply"},
		{"duplicate role", "POST", "/api/users", "application/json", `{"name":"x","role":"viewer","role":"admin"}`, 400, "Duplicate key"},
		{"fine", "POST", "/api/admin/prune", "Application/JSON; charset=utf-8", `{"older_than":"3650d","dry_run":true}`, 200, ""},
		{"lone surrogate", "POST", "/api/strategies", "application/json", `{"name":"a\ud800"}`, 400, "surrogate"},
		{"invalid UTF-8", "POST", "/api/strategies", "application/json", "{\"name\":\"a\xff\"}", 400, "valid UTF-8"},
		{"bars: deep", "POST", "/api/data/testsrc/X/bars", "application/json", deep, 400, "nested too deeply"},
		{"bars: duplicate", "POST", "/api/data/testsrc/X/bars", "application/json", `[{"open":1,"open":2}]`, 400, "Duplicate key"},
		{"text/plain naming json", "POST", "/api/backtests", "text/plain; charset=application/json", `{}`, 415, "Content-Type must be application/json"},
		{"form", "POST", "/api/admin/prune", "application/x-www-form-urlencoded", `older_than=1d`, 415, "application/json"},
		{"no type", "POST", "/api/strategies", "", `{}`, 415, "the request has none"},
		{"json-ish type", "POST", "/api/strategies", "application/json-patch+json", `{}`, 415, "application/json"},
		{"bars: text/plain", "POST", "/api/data/testsrc/X/bars", "text/plain", "date,open\n", 415, "text/csv or application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+e.token)
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct{ Detail string }
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != c.status || !strings.Contains(out.Detail, c.detail) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, out.Detail, c.status, c.detail)
			}
		})
	}
}

// TestJSONCheckBoundsMatchDocs: the depth bound the docs and the API description state is
// MaxJSONDepth.
func TestJSONCheckBoundsMatchDocs(t *testing.T) {
	t.Parallel()
	for _, f := range []struct{ path, pattern string }{
		{"../../docs/team-and-security.md", `nested at most (\d+) levels deep`},
		{"../../api/openapi.yaml", `nested at most (\d+) levels deep`},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(f.pattern).FindSubmatch(b)
		if m == nil {
			t.Errorf("%s does not state the JSON depth bound (%q)", f.path, f.pattern)
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != MaxJSONDepth {
			t.Errorf("%s says %d levels, the code enforces %d", f.path, n, MaxJSONDepth)
		}
	}
}

// BenchmarkCheckJSON is what the scan adds to a body before decoding: a strategy upload
// (one long string) and bars as JSON (many small objects), 1 MiB each.
func BenchmarkCheckJSON(b *testing.B) {
	code := `{"name":"S","code":` + strconv.Quote(strings.Repeat("const x = a[i] + \"q\"; // é\n", 1<<20/30)) + `}`
	var bars strings.Builder
	bars.WriteString("[")
	for bars.Len() < 1<<20 {
		bars.WriteString(`{"datetime":"2024-01-02","open":1.5,"high":2.25,"low":0.5,"close":1.75,"volume":1000},`)
	}
	barsDoc := strings.TrimSuffix(bars.String(), ",") + "]"
	for _, c := range []struct{ name, doc string }{{"strategy", code}, {"bars", barsDoc}} {
		b.Run(c.name, func(b *testing.B) {
			doc := []byte(c.doc)
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if err := validJSON(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
