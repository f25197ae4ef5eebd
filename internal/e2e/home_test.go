package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/proctest"
	"github.com/backtestd/backtestd/internal/store"
)

// TestHomeAndUploadInBrowser: the start page lists the newest runs (their returns as the
// API's figures read) and studies; a strategy file is loaded into the editor with the file
// picker and by dropping it on the editor, and saved as the file's code; at 1440 and 390 px.
func TestHomeAndUploadInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	srv := startServer(t)
	var strat struct {
		ID string `json:"id"`
	}
	const stratName = "Home page cross"
	must(t, postJSON(srv.url+"/api/strategies", map[string]any{"name": stratName, "code": strategyCode}, &strat))
	for _, fast := range []int{4, 6} {
		var task struct {
			TaskID string `json:"task_id"`
		}
		must(t, postJSON(srv.url+"/api/backtests", map[string]any{"strategy_id": strat.ID, "strategy_params": map[string]any{"fast": fast, "slow": 20}, "start_date": "2018-01-01", "end_date": "2019-12-31"}, &task))
		waitTask(t, srv.url, task.TaskID)
	}
	var syms []struct {
		Symbol string `json:"symbol"`
	}
	must(t, getEnvelope(srv.url+"/api/data/builtin/symbols", &syms))
	var st struct {
		ID string `json:"id"`
	}
	must(t, postJSON(srv.url+"/api/studies", map[string]any{"strategy_id": strat.ID, "symbol": syms[0].Symbol, "start_date": "2018-01-01", "end_date": "2019-12-31",
		"space": map[string]any{"fast": []int{5, 10}}}, &st))
	_, newest := listRuns(t, srv.url, "limit=8")
	file := filepath.Join(t.TempDir(), "uploaded_cross.js")
	must(t, os.WriteFile(file, []byte(strategyCode), 0o644))

	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, 2*time.Minute)
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			var rows [][]string
			var studies []string
			var overflow bool
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/"),
				waitJS(`document.querySelectorAll('#recent-runs tbody tr').length > 0 && document.querySelectorAll('#recent-studies tbody tr').length > 0`, 20*time.Second),
				chromedp.Evaluate(`[...document.querySelectorAll('#recent-runs tbody tr')].map(r => [r.dataset.task].concat([...r.cells].map(c => c.textContent)))`, &rows),
				chromedp.Evaluate(`[...document.querySelectorAll('#recent-studies tbody tr')].map(r => r.dataset.study)`, &studies),
				chromedp.Evaluate(fmt.Sprintf(`document.documentElement.scrollWidth > %d`, size.w+1), &overflow),
			))
			if len(rows) != len(newest) {
				t.Fatalf("start page lists %d runs, the API's newest are %d", len(rows), len(newest))
			}
			for i, r := range newest {
				// [id, run, status, strategy, symbol, return, sharpe, created]
				if rows[i][0] != r.TaskID || rows[i][3] != stratName || rows[i][5] != fmtPctOf(r.Figures.TotalReturn) || rows[i][6] != fmtFixed(r.Figures.Sharpe, 2) {
					t.Errorf("start page row %d reads %q; the API's run %s returned %s, Sharpe %s", i, rows[i], r.TaskID, fmtPctOf(r.Figures.TotalReturn), fmtFixed(r.Figures.Sharpe, 2))
				}
			}
			if len(studies) != 1 || studies[0] != st.ID {
				t.Errorf("start page lists studies %v, want %s", studies, st.ID)
			}
			if overflow {
				t.Errorf("start page wider than %d px", size.w)
			}

			// A file picked: its code in the editor, the name from its class; saved as it is.
			var code, name string
			must(t, chromedp.Run(ctx,
				chromedp.Navigate(srv.url+"/ui/strategies/new"),
				chromedp.WaitVisible(`#strategy-open-file`),
				waitJS(`!!document.querySelector('#code-editor').__editor`, 15*time.Second),
				chromedp.SetUploadFiles(`#strategy-file`, []string{file}, chromedp.ByQuery),
				waitJS(`document.querySelector('#code-editor').dataset.loadedFile === 'uploaded_cross.js'`, 10*time.Second),
				chromedp.Evaluate(`document.querySelector('#code-editor').__editor.get()`, &code),
				chromedp.Value(`.form-row input[type="text"]`, &name),
			))
			if code != strategyCode || name != "E2ECross" {
				t.Errorf("picked file: editor holds %d bytes (want %d), name %q (want E2ECross)", len(code), len(strategyCode), name)
			}
			// A file dropped on the editor replaces the code.
			dropped := strings.Replace(strategyCode, "size: 10", "size: 7", 1)
			must(t, chromedp.Run(ctx,
				chromedp.Evaluate(fmt.Sprintf(`(() => { const dt = new DataTransfer(); dt.items.add(new File([%q], 'dropped.js', {type: 'text/javascript'}));
					document.querySelector('#code-editor .cm-content').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true})); })()`, dropped), nil),
				waitJS(`document.querySelector('#code-editor').dataset.loadedFile === 'dropped.js'`, 10*time.Second),
				chromedp.Evaluate(`document.querySelector('#code-editor').__editor.get()`, &code),
			))
			if code != dropped {
				t.Errorf("dropped file: the editor holds %q…", code[:min(80, len(code))])
			}
			must(t, chromedp.Run(ctx,
				chromedp.Click(`.editor-foot .btn.primary`),
				waitJS(`/\/ui\/strategies\/str_\d+$/.test(location.pathname)`, 15*time.Second),
			))
			var sid string
			must(t, chromedp.Run(ctx, chromedp.Evaluate(`location.pathname.split('/').pop()`, &sid)))
			var saved struct {
				Name string `json:"name"`
				Code string `json:"code"`
			}
			must(t, getJSON(srv.url+"/api/strategies/"+sid, &saved))
			if saved.Code != dropped || saved.Name != "E2ECross" {
				t.Errorf("saved strategy %q with %d bytes of code; want E2ECross and the dropped file's %d", saved.Name, len(saved.Code), len(dropped))
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

// TestSignedOutInBrowser: with accounts on, a first visit opens on the sign-in form with no
// navigation and no request answered 401 (a newcomer's console stays clean); signed in, the
// navigation is there.
func TestSignedOutInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(context.Background(), dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"root", auth.RoleAdmin}, {"ann", auth.RoleResearcher}} {
		if _, err := auth.NewService(st, 0).AddUser(context.Background(), u.name, u.role, "signed-out page 4 tests"); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	p := proctest.Start(t, []string{"SAMPLE_DATA=false", "STRATEGY_DIRS=", "BASE_PATH=", "AUTH=on"},
		"serve", "--listen", "127.0.0.1:0", "--database-url", dbURL, "--workers", "1", "--log-level", "info")
	url := p.URL(t)
	res, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	must(t, json.NewDecoder(res.Body).Decode(&health))
	res.Body.Close()
	if health["accounts"] != true {
		t.Fatalf("/health with AUTH=on: %v", health)
	}
	for _, size := range []struct{ w, h int }{{1440, 900}, {390, 844}} {
		t.Run(fmt.Sprintf("%dpx", size.w), func(t *testing.T) {
			ctx, errs := newBrowser(t, chromium, size.w, size.h, time.Minute)
			var mu sync.Mutex
			var refused []string
			chromedp.ListenTarget(ctx, func(ev any) {
				switch ev := ev.(type) {
				case *network.EventResponseReceived:
					if ev.Response.Status == http.StatusUnauthorized {
						mu.Lock()
						refused = append(refused, ev.Response.URL)
						mu.Unlock()
					}
				case *cdplog.EventEntryAdded:
					if ev.Entry.Level == cdplog.LevelError {
						mu.Lock()
						refused = append(refused, "console: "+ev.Entry.Text)
						mu.Unlock()
					}
				}
			})
			if size.w < 600 {
				must(t, chromedp.Run(ctx, chromedp.EmulateViewport(int64(size.w), int64(size.h), chromedp.EmulateMobile)))
			}
			var navShown, toggleShown bool
			must(t, chromedp.Run(ctx,
				network.Enable(),
				chromedp.Navigate(url+"/ui/runs"),
				waitJS(`location.pathname.endsWith('/ui/login') && document.querySelector('form[aria-labelledby="login-title"]') !== null`, 15*time.Second),
				chromedp.Evaluate(`getComputedStyle(document.querySelector('#nav')).display !== 'none'`, &navShown),
				chromedp.Evaluate(`getComputedStyle(document.querySelector('.menu-toggle')).display !== 'none'`, &toggleShown),
				chromedp.ActionFunc(func(context.Context) error { time.Sleep(500 * time.Millisecond); return nil }),
			))
			if navShown || toggleShown {
				t.Errorf("signed out, the navigation shows (nav %v, menu %v)", navShown, toggleShown)
			}
			mu.Lock()
			got := append([]string(nil), refused...)
			mu.Unlock()
			if len(got) > 0 {
				t.Errorf("a first visit signed out: %q", got)
			}
			// Signed in, the navigation is back, and the start page is the recent work.
			must(t, chromedp.Run(ctx,
				chromedp.SetValue(`input[name="username"]`, "ann"),
				chromedp.SetValue(`input[name="password"]`, "signed-out page 4 tests"),
				chromedp.Click(`form[aria-labelledby="login-title"] button[type="submit"]`),
				chromedp.WaitVisible(`#who-user`),
				chromedp.Navigate(url+"/ui/"),
				waitJS(`document.querySelector('#recent-runs') !== null`, 15*time.Second),
				chromedp.Evaluate(`getComputedStyle(document.querySelector(window.innerWidth < 600 ? '.menu-toggle' : '#nav')).display !== 'none'`, &navShown),
			))
			if !navShown {
				t.Error("signed in, the navigation is hidden")
			}
			if e := errs.list(); len(e) > 0 {
				t.Errorf("browser errors:\n%s", strings.Join(e, "\n"))
			}
		})
	}
}

// docShot writes what the viewport shows, or one element, to docs/screenshots/name.png when
// DOCS_SCREENSHOTS is set: the pictures in the repository are taken by the tests that check
// what they show (`DOCS_SCREENSHOTS=1 go test ./internal/e2e -run 'TradeCharts|StudyPage'`).
func docShot(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	if os.Getenv("DOCS_SCREENSHOTS") == "" {
		return
	}
	dir := filepath.Join(repoRoot(t), "docs", "screenshots")
	must(t, os.MkdirAll(dir, 0o755))
	var buf []byte
	action := chromedp.CaptureScreenshot(&buf)
	if sel != "" {
		action = chromedp.Screenshot(sel, &buf, chromedp.NodeVisible)
	}
	// The page's sticky header would lie across an element taken below the fold.
	hide := chromedp.Evaluate(fmt.Sprintf(`document.querySelector('header.top').style.visibility = %q`, map[bool]string{true: "hidden", false: ""}[sel != ""]), nil)
	defer func() {
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('header.top').style.visibility = ''`, nil))
	}()
	if err := chromedp.Run(ctx, hide, chromedp.Sleep(300*time.Millisecond), action); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	must(t, os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644))
}
