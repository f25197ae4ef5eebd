package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/api"
)

// docsUI is a vendored Swagger UI (npm swagger-ui-dist), so /docs works offline.
//
//go:embed docsui/swagger-ui-bundle.js docsui/swagger-ui.css docsui/favicon-32x32.png
var docsUI embed.FS

var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>backtestd API</title>
<link rel="icon" type="image/png" href="{{.Base}}/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="{{.Base}}/docs/assets/swagger-ui.css">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{.Base}}/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: {{.Spec}},
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
});
</script>
</body>
</html>
`))

// mountDocs mounts GET /docs and /openapi.yaml: the API document and its interactive viewer.
func (s *Server) mountDocs(r chi.Router) {
	assets, err := fs.Sub(docsUI, "docsui")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	doc := api.OpenAPI
	if s.cfg.BasePath != "" {
		// Point "try it out" requests at the prefix the service is served under.
		doc = bytes.Replace(doc, []byte("\nservers:\n  - url: /\n"), []byte("\nservers:\n  - url: "+s.cfg.BasePath+"\n"), 1)
	}
	r.Get("/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(doc)
	})
	var page bytes.Buffer
	if err := docsPage.Execute(&page, map[string]string{"Base": s.cfg.BasePath, "Spec": s.cfg.BasePath + "/openapi.yaml"}); err != nil {
		panic(err) // the template and its data are fixed once the API is built
	}
	policy := docsPolicy(page.Bytes())
	r.Get("/docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", policy)
		_, _ = w.Write(page.Bytes())
	})
	r.Get("/docs/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.cfg.BasePath+"/docs", http.StatusMovedPermanently)
	})
	r.Get("/docs/assets/*", func(w http.ResponseWriter, r *http.Request) {
		name := path.Clean(chi.URLParam(r, "*"))
		if _, err := fs.Stat(assets, name); err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeFileFS(w, r, assets, name)
	})
}

// docsPolicy is pagePolicy with the docs page's one inline script (Swagger UI's set-up,
// which names the API document under the base path) allowed by its hash.
func docsPolicy(page []byte) string {
	_, rest, _ := bytes.Cut(page, []byte("<script>"))
	script, _, _ := bytes.Cut(rest, []byte("</script>"))
	sum := sha256.Sum256(script)
	return strings.Replace(pagePolicy, "script-src 'self'", "script-src 'self' 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", 1)
}
