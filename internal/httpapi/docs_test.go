package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"gopkg.in/yaml.v3"

	"github.com/backtestd/backtestd/api"
	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

var paramRe = regexp.MustCompile(`\{[^}]*\}`)

// normalise makes a router pattern and a document path comparable: parameter names are
// dropped and a trailing slash is ignored.
func normalise(p string) string {
	p = paramRe.ReplaceAllString(p, "{}")
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}

type openapiDoc struct {
	OpenAPI    string                    `yaml:"openapi"`
	Paths      map[string]map[string]any `yaml:"paths"`
	Components map[string]map[string]any `yaml:"components"`
}

func loadDoc(t *testing.T) (*openapiDoc, any) {
	t.Helper()
	var doc openapiDoc
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("api/openapi.yaml is not valid YAML: %v", err)
	}
	var tree any
	if err := yaml.Unmarshal(api.OpenAPI, &tree); err != nil {
		t.Fatal(err)
	}
	return &doc, tree
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true, "trace": true}

// TestOpenAPICoversEveryRoute fails when a route of the router is missing from
// api/openapi.yaml. Routes ending in a wildcard (static file trees such as the docs assets
// and the web page's assets) are not operations and are left out.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	h := httpapi.New(httpapi.Config{}, httpapi.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Strategies: httpapi.StrategiesForTest(t, st)})
	routes, isChi := h.(chi.Routes)
	if !isChi {
		t.Fatalf("httpapi.New without a base path returned %T, not a chi router", h)
	}
	doc, _ := loadDoc(t)
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			if httpMethods[m] {
				documented[strings.ToUpper(m)+" "+normalise(p)] = true
			}
		}
	}
	var missing []string
	seen := 0
	err = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasSuffix(route, "*") {
			return nil
		}
		seen++
		key := method + " " + normalise(route)
		if !documented[key] {
			missing = append(missing, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("only %d routes walked; the walk is not seeing the router", seen)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("routes missing from api/openapi.yaml (add them under paths:):\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestOpenAPIDocument checks the document's shape: OpenAPI 3.1, every operation has
// responses and an operationId (unique), and every $ref resolves.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc, tree := loadDoc(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	ids := map[string]string{}
	for p, ops := range doc.Paths {
		if !strings.HasPrefix(p, "/") {
			t.Errorf("path %q does not start with /", p)
		}
		for m, raw := range ops {
			if !httpMethods[m] {
				continue
			}
			op, _ := raw.(map[string]any)
			if _, ok := op["responses"]; !ok {
				t.Errorf("%s %s has no responses", m, p)
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				t.Errorf("%s %s has no operationId", m, p)
			} else if other, dup := ids[id]; dup {
				t.Errorf("operationId %s used by %s and %s %s", id, other, m, p)
			}
			ids[id] = m + " " + p
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "$ref" {
					ref, _ := e.(string)
					if !resolves(tree, ref) {
						t.Errorf("$ref %q does not resolve", ref)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(tree)
}

func resolves(tree any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	cur := tree
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

func TestDocsServed(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	for _, base := range []string{"", "/bt"} {
		t.Run("base path "+base, func(t *testing.T) {
			srv := httptest.NewServer(httpapi.New(httpapi.Config{BasePath: base}, httpapi.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Strategies: httpapi.StrategiesForTest(t, st)}))
			defer srv.Close()
			get := func(path string) (int, string, string) {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
			}
			status, ct, page := get(base + "/docs")
			if status != 200 || !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("/docs: %d %s", status, ct)
			}
			for _, want := range []string{base + "/docs/assets/swagger-ui-bundle.js", base + "/docs/assets/swagger-ui.css", `"` + base + `/openapi.yaml"`} {
				if !strings.Contains(page, want) {
					t.Errorf("docs page does not refer to %s:\n%s", want, page)
				}
			}
			status, _, body := get(base + "/openapi.yaml")
			wantServer := "\nservers:\n  - url: /\n"
			if base != "" {
				wantServer = "\nservers:\n  - url: " + base + "\n"
			}
			if status != 200 || !strings.Contains(body, wantServer) || len(body) < len(api.OpenAPI) {
				t.Fatalf("/openapi.yaml: %d, %d bytes, servers entry %q missing", status, len(body), wantServer)
			}
			for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
				status, _, body := get(base + "/docs/assets/" + asset)
				if status != 200 || len(body) < 10000 {
					t.Errorf("asset %s: %d, %d bytes", asset, status, len(body))
				}
			}
			if status, _, _ := get(base + "/docs/assets/../../openapi.yaml.nope"); status != 404 {
				t.Errorf("unknown asset: %d", status)
			}
			if status, _, _ := get(base + "/docs/assets/nope.js"); status != 404 {
				t.Errorf("unknown asset: %d", status)
			}
		})
	}
}
