package httpapi

import (
	"bytes"
	"compress/gzip"
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

// Responses of 1 KiB and more are gzipped for clients that accept it, smaller ones are
// not; pre-compressed assets are served as they are, with their own type.
func TestCompression(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	script := strings.Repeat("console.log('backtestd');\n", 200)
	_, _ = zw.Write([]byte(script))
	_ = zw.Close()
	files := fstest.MapFS{
		"index.html":             {Data: []byte(`<script type="module" src="/ui/assets/index-abc.js"></script>`)},
		"assets/index-abc.js":    {Data: []byte(script)},
		"assets/index-abc.js.gz": {Data: gz.Bytes()},
	}
	r := chi.NewRouter()
	r.Use(compression())
	r.Get("/ui/*", newUI(files, "").serve)
	r.Get("/big", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"text": strings.Repeat("x", 4096)})
	})
	r.Get("/small", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}} // see the raw encoding
	get := func(path string, gzipOK bool) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if gzipOK {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		return res, b
	}
	for _, c := range []struct {
		path     string
		gzipOK   bool
		encoding string
		ct       string
	}{
		{"/big", true, "gzip", "application/json"},
		{"/big", false, "", "application/json"},
		{"/small", true, "", "application/json"},
		{"/ui/assets/index-abc.js", true, "gzip", "javascript"},
		{"/ui/assets/index-abc.js", false, "", "javascript"},
	} {
		res, body := get(c.path, c.gzipOK)
		if res.Header.Get("Content-Encoding") != c.encoding || !strings.Contains(res.Header.Get("Content-Type"), c.ct) {
			t.Errorf("%s (gzip %v): encoding %q type %q, want %q %q", c.path, c.gzipOK, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"), c.encoding, c.ct)
		}
		if strings.HasPrefix(c.path, "/ui/") && string(body) != script {
			t.Errorf("%s (gzip %v): the body is not the script", c.path, c.gzipOK)
		}
	}
}
