package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"
)

func TestUIServesBuildWithFallbackAndCaching(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"index.html":           {Data: []byte(`<meta name="base-path" content="" /><script type="module" src="/ui/assets/index-abc.js"></script>`)},
		"assets/index-abc.js":  {Data: []byte(`console.log(1)`)},
		"assets/style-def.css": {Data: []byte(`body{}`)},
	}
	tests := []struct {
		name, base, path string
		status           int
		body, cache, ct  string
	}{
		{"index", "", "/ui/", 200, `src="/ui/assets/index-abc.js"`, "no-cache", "text/html"},
		{"client route falls back to index", "", "/ui/runs/task_1", 200, `src="/ui/assets/index-abc.js"`, "no-cache", "text/html"},
		{"hashed asset is immutable", "", "/ui/assets/index-abc.js", 200, "console.log", "immutable", "javascript"},
		{"css asset", "", "/ui/assets/style-def.css", 200, "body{}", "immutable", "text/css"},
		{"missing asset is 404", "", "/ui/assets/gone.js", 404, "", "", ""},
		{"base path rewrites asset paths", "/backtests", "/backtests/ui/strategies", 200, `src="/backtests/ui/assets/index-abc.js"`, "no-cache", "text/html"},
		{"base path is told to the page", "/backtests", "/backtests/ui/", 200, `<meta name="base-path" content="/backtests" />`, "no-cache", "text/html"},
		{"no base path", "", "/ui/", 200, `<meta name="base-path" content="" />`, "no-cache", "text/html"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := chi.NewRouter()
			r.Get("/ui/*", newUI(files, tc.base).serve)
			var h http.Handler = r
			if tc.base != "" {
				outer := chi.NewRouter()
				outer.Mount(tc.base, r)
				h = outer
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			res, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if !strings.Contains(string(b), tc.body) {
				t.Errorf("body %q does not contain %q", b, tc.body)
			}
			if !strings.Contains(res.Header.Get("Cache-Control"), tc.cache) {
				t.Errorf("Cache-Control %q, want %q", res.Header.Get("Cache-Control"), tc.cache)
			}
			if !strings.Contains(res.Header.Get("Content-Type"), tc.ct) {
				t.Errorf("Content-Type %q, want %q", res.Header.Get("Content-Type"), tc.ct)
			}
		})
	}
}

func TestUIPlaceholderWithoutBuild(t *testing.T) {
	t.Parallel()
	r := chi.NewRouter()
	r.Get("/ui/*", newUI(nil, "").serve)
	srv := httptest.NewServer(r)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/ui/strategies")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), "built without the web page") {
		t.Fatalf("placeholder: %d %q", res.StatusCode, b)
	}
}

func TestRootRedirectsBrowsersToUI(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "/backtests"} {
		srv := httptest.NewServer(New(Config{BasePath: base}, Deps{Logger: quietLogger()}))
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(accept string) *http.Response {
			req, _ := http.NewRequest("GET", srv.URL+base+"/", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		if res := get("text/html,application/xhtml+xml,*/*;q=0.8"); res.StatusCode != http.StatusFound || res.Header.Get("Location") != base+"/ui/" {
			t.Errorf("base %q: browser got %d to %q, want 302 to %s/ui/", base, res.StatusCode, res.Header.Get("Location"), base)
		}
		for _, accept := range []string{"", "application/json", "*/*"} {
			if res := get(accept); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "json") {
				t.Errorf("base %q, Accept %q: got %d %s, want the JSON", base, accept, res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
		srv.Close()
	}
}
