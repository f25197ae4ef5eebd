package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBarVersionsInBrowser imports a symbol's bars, then the same bars with one close
// corrected, and checks that the symbol's page lists the two versions as the API does,
// newest first, the second saying one bar changed and from when.
func TestBarVersionsInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	csvOf := func(fix float64) string {
		var b strings.Builder
		b.WriteString("date,open,high,low,close,volume\n")
		day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 30 {
			c := 100 + float64(i)
			if i == 20 {
				c += fix
			}
			fmt.Fprintf(&b, "%s,%g,%g,%g,%g,1000\n", day.AddDate(0, 0, i).Format(time.DateOnly), c, c+1, c-1, c)
		}
		return b.String()
	}
	for _, fix := range []float64{0, 0.5} {
		resp, err := http.Post(srv.url+"/api/data/builtin/VERS/bars?timeframe=1d", "text/csv", strings.NewReader(csvOf(fix)))
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("import: %d", resp.StatusCode)
		}
	}
	var vs []struct {
		Version int `json:"version"`
		Changes struct {
			Changed int `json:"changed"`
		} `json:"changes"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/VERS/versions", &vs))
	if len(vs) != 2 || vs[0].Version != 2 || vs[0].Changes.Changed != 1 {
		t.Fatalf("versions: %+v", vs)
	}

	ctx, errs := newBrowser(t, chromium, 1440, 900, 3*time.Minute)
	var rows []string
	var changes string
	must(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.url+"/ui/data/builtin/VERS"),
		waitJS(`document.querySelectorAll('#versions-table tbody tr').length > 0`, 60*time.Second),
		chromedp.Evaluate(`[...document.querySelectorAll('#versions-table tbody tr')].map(r => r.dataset.version)`, &rows),
		chromedp.Evaluate(`document.querySelector('#versions-table tbody tr .version-changes').textContent`, &changes),
	))
	if strings.Join(rows, ",") != "2,1" {
		t.Errorf("the page lists versions %v, the API 2,1", rows)
	}
	if !strings.Contains(changes, "1 changed") || !strings.Contains(changes, "2020-01-21") {
		t.Errorf("version 2's changes read %q, want 1 changed from 2020-01-21", changes)
	}
	if e := errs.list(); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}
}
