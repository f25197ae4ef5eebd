package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backtestd/backtestd/web"
)

// browserErrors collects console errors and uncaught exceptions of the page.
type browserErrors struct {
	mu   sync.Mutex
	errs []string
}

func (b *browserErrors) add(s string) {
	b.mu.Lock()
	b.errs = append(b.errs, s)
	b.mu.Unlock()
}

func (b *browserErrors) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// requireBrowser returns Chromium's path; without it or without the built page the test is
// skipped (failed under CI, see requireOrSkip).
func requireBrowser(t *testing.T) string {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		requireOrSkip(t, "no Chromium found (install Debian's chromium or set CHROMIUM)")
	}
	if web.App() == nil {
		requireOrSkip(t, "the web page is not built (web/dist/app is missing: run web/build.sh, which needs Node)")
	}
	return chromium
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setEditor replaces the CodeMirror document through the page's test handle.
func setEditor(code string) chromedp.Action {
	b, _ := json.Marshal(code)
	return chromedp.Evaluate(`document.querySelector('#code-editor').__editor.set(`+string(b)+`)`, nil)
}

// waitJS polls a JavaScript condition until it is true.
// pressEnterOn focuses the element sel and presses Enter until done holds (15 s at most).
// The page re-renders a running task's buttons as its state changes, so a button found a
// moment ago may be gone when the key arrives; on a busy machine that happens.
func pressEnterOn(sel, done string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		focus := fmt.Sprintf(`(() => { const b = document.querySelector(%q); if (!b) return false; b.focus(); return document.activeElement === b; })()`, sel)
		deadline := time.Now().Add(15 * time.Second)
		for {
			if waitJS(done, 0).Do(ctx) == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pressing Enter on %s: still not %s", sel, done)
			}
			var focused bool
			if err := chromedp.Evaluate(focus, &focused).Do(ctx); err != nil {
				return err
			}
			if focused {
				if err := chromedp.KeyEvent("\r").Do(ctx); err != nil {
					return err
				}
				if waitJS(done, 2*time.Second).Do(ctx) == nil {
					return nil
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func waitJS(expr string, timeout time.Duration) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		deadline := time.Now().Add(timeout)
		for {
			var ok bool
			if err := chromedp.Evaluate(`!!(`+expr+`)`, &ok).Do(ctx); err != nil {
				return err
			}
			if ok {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("timed out after %v waiting for %s", timeout, expr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			return b
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(filepath.Dir(path))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("download %s did not appear (have %v)", filepath.Base(path), names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitTask(t *testing.T, base, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/api/backtests/" + id)
		if err == nil {
			var task struct {
				Status string  `json:"status"`
				Error  *string `json:"error"`
			}
			_ = json.NewDecoder(res.Body).Decode(&task)
			res.Body.Close()
			switch task.Status {
			case "completed":
				return
			case "failed", "cancelled":
				t.Fatalf("task %s %s: %v", id, task.Status, task.Error)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s did not complete in 30 s", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// profileDir is a Chromium profile folder owned by the test. Chromium's helper processes
// can still write into it for a moment after the browser is stopped, which makes
// t.TempDir's strict removal fail the test; this folder is removed after the browser has
// exited (the test's deferred cancels run before cleanups), retrying while it changes.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "backtestd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("profile folder %s left behind: still in use", dir)
	})
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.Sleep(150*time.Millisecond), chromedp.FullScreenshot(&buf, 100)); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}
