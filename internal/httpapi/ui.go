package httpapi

import (
	"bytes"
	"html"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/web"
)

// mountUI mounts the web page under /ui/: files of the embedded build by name, hashed
// assets cached as immutable, and index.html for every other path (the page routes on the
// client). Without a build it serves web.Placeholder.
func (s *Server) mountUI(r chi.Router) {
	u := newUI(web.App(), s.cfg.BasePath)
	r.Get("/ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.cfg.BasePath+"/ui/", http.StatusMovedPermanently)
	})
	r.Get("/ui/*", u.serve)
	r.Head("/ui/*", u.serve)
}

type ui struct {
	files   fs.FS  // nil without a build
	index   []byte // index.html with asset paths under the base path
	started time.Time
}

func newUI(files fs.FS, basePath string) *ui {
	u := &ui{files: files, started: time.Now()}
	if files == nil {
		u.index = []byte(web.Placeholder)
		return u
	}
	idx, err := fs.ReadFile(files, "index.html")
	if err != nil {
		u.files, u.index = nil, []byte(web.Placeholder)
		return u
	}
	if basePath != "" {
		// The build refers to its files as /ui/...; under BASE_PATH they live at <base>/ui/...
		idx = bytes.ReplaceAll(idx, []byte(`"/ui/`), []byte(`"`+basePath+`/ui/`))
		// The page reads the prefix of its API calls from here rather than guessing it.
		idx = bytes.Replace(idx, []byte(`<meta name="base-path" content="" />`),
			[]byte(`<meta name="base-path" content="`+html.EscapeString(basePath)+`" />`), 1)
	}
	u.index = idx
	return u
}

func (u *ui) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", pagePolicy)
	name := strings.TrimPrefix(path.Clean("/"+chi.URLParam(r, "*")), "/")
	if u.files != nil && name != "" && name != "index.html" {
		if f, err := u.files.Open(name); err == nil {
			defer f.Close()
			if st, err := f.Stat(); err == nil && !st.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					// Vite puts a content hash in every asset name: the name changes when the content does.
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				} else {
					w.Header().Set("Cache-Control", "no-cache")
				}
				if gz := u.precompressed(name, r); gz != nil {
					defer gz.Close()
					if rs, ok := gz.(io.ReadSeeker); ok {
						w.Header().Set("Content-Encoding", "gzip")
						w.Header().Add("Vary", "Accept-Encoding")
						http.ServeContent(w, r, name, u.started, rs) // the type is the name's, not .gz's
						return
					}
				}
				if rs, ok := f.(io.ReadSeeker); ok {
					http.ServeContent(w, r, name, u.started, rs)
					return
				}
			}
		}
		if strings.HasPrefix(name, "assets/") {
			// A missing asset is a 404, not the page: a script tag must not receive HTML.
			http.Error(w, "asset not found", http.StatusNotFound)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "index.html", u.started, bytes.NewReader(u.index))
}

// wantsHTML tells a browser navigating to a page (Accept lists text/html) from an API client.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// precompressed opens name's gzip file (name.gz, written by web/build.sh) when the client
// accepts gzip and there is one.
func (u *ui) precompressed(name string, r *http.Request) fs.File {
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		return nil
	}
	f, err := u.files.Open(name + ".gz")
	if err != nil {
		return nil
	}
	return f
}
