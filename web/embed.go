// Package web holds the built web page. `web/build.sh` (run by `make run`, `make test` and
// `make build` when Node is available) writes it to web/dist/app; the binary embeds whatever
// is there. A Go build without Node embeds only dist/.placeholder, and the server answers
// /ui/ with a page that says how to build the real one.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// App returns the built page (index.html and assets/), or nil when it was not built.
func App() fs.FS {
	sub, err := fs.Sub(dist, "dist/app")
	if err != nil {
		return nil
	}
	if _, err := fs.Stat(sub, "index.html"); err != nil {
		return nil
	}
	return sub
}

// Placeholder is served at /ui/ when the page was not built.
const Placeholder = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>backtestd</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5;color:#1d2330}code{background:#eef1f6;padding:.1rem .3rem;border-radius:4px}</style>
</head><body>
<h1>backtestd</h1>
<p>The API is running, but this binary was built without the web page.</p>
<p>Install Node.js (20 or newer) and run <code>make run</code>, or build it by hand with
<code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code> and rebuild the binary.</p>
<p>The API documentation is at <a href="../docs">/docs</a>.</p>
</body></html>
`
