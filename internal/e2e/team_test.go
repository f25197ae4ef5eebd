package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/proctest"
	"github.com/backtestd/backtestd/internal/store"
)

// teamPasswords are the test users' passwords (long enough, not containing the name,
// not common: see auth.checkPassword).
var teamPasswords = map[string]string{"root": "tiger-lily-9041", "alice": "blue-heron-2718", "vic": "quiet-maple-3141"}

// TestTeamInBrowser: a team deployment in Chromium. The page sends a stranger to sign in;
// a researcher signs in, creates a strategy and runs it; a viewer sees everything but is
// refused a change, with the service's reason on the page.
func TestTeamInBrowser(t *testing.T) {
	chromium := requireBrowser(t)
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.NewService(st, 0)
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"root", auth.RoleAdmin}, {"alice", auth.RoleResearcher}, {"vic", auth.RoleViewer}} {
		if _, err := a.AddUser(ctx, u.name, u.role, teamPasswords[u.name]); err != nil {
			t.Fatal(err)
		}
	}
	token, _, err := a.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	p := proctest.Start(t, []string{"SAMPLE_DATA=true", "STRATEGY_DIRS=", "BASE_PATH=", "AUTH=on"},
		"serve", "--listen", "127.0.0.1:0", "--database-url", dbURL, "--workers", "2", "--log-level", "info")
	url := p.URL(t)
	deadline := time.Now().Add(60 * time.Second)
	for { // the run form needs a symbol
		req, _ := http.NewRequest("GET", url+"/api/data/builtin/symbols", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		var body struct{ Data []any }
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if len(body.Data) > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sample symbols after 60 s:\n%s", proctest.Tail(p.Log(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}

	bctx, _ := newBrowser(t, chromium, 1280, 900, 120*time.Second)
	ui := url + "/ui"
	signIn := func(name string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.WaitVisible(`form[aria-labelledby="login-title"] input[name="username"]`),
			chromedp.SetValue(`input[name="username"]`, name),
			chromedp.SetValue(`input[name="password"]`, teamPasswords[name]),
			chromedp.Click(`form[aria-labelledby="login-title"] button[type="submit"]`),
			chromedp.WaitVisible(`#who-user`),
		}
	}

	t.Log("a stranger is sent to sign in, then back where they were going")
	must(t, chromedp.Run(bctx,
		chromedp.Navigate(ui+"/runs"),
		waitJS(`location.pathname.endsWith('/ui/login')`, 10*time.Second),
		chromedp.WaitVisible(`input[name="username"]`),
		chromedp.SetValue(`input[name="username"]`, "alice"),
		chromedp.SetValue(`input[name="password"]`, "wrong-password"),
		chromedp.Click(`form[aria-labelledby="login-title"] button[type="submit"]`),
		waitJS(`document.querySelector('#login-error').textContent.includes('Wrong user name or password')`, 10*time.Second),
		signIn("alice"),
		waitJS(`location.pathname.endsWith('/ui/runs')`, 10*time.Second),
	))
	var who string
	must(t, chromedp.Run(bctx, chromedp.Text(`#who-user`, &who)))
	if who != "alice · researcher" {
		t.Errorf("header shows %q", who)
	}

	t.Log("the researcher creates a strategy and runs it")
	must(t, chromedp.Run(bctx,
		chromedp.Navigate(ui+"/strategies/new"),
		chromedp.WaitVisible(`#code-editor .cm-content`),
		chromedp.SetValue(`input[placeholder="e.g. SMA crossover"]`, "Alice cross"),
		setEditor(strategyCode),
		chromedp.Click(`button.btn.primary`),
		waitJS(`/\/ui\/strategies\/str_\d+$/.test(location.pathname)`, 15*time.Second),
	))
	var sid string
	must(t, chromedp.Run(bctx, chromedp.Evaluate(`location.pathname.split('/').pop()`, &sid)))
	must(t, chromedp.Run(bctx,
		chromedp.Navigate(ui+"/runs?strategy="+sid),
		chromedp.WaitVisible(`form.run-form button[type="submit"]`),
		waitJS(`document.querySelector('input[name="symbol"]').value !== ''`, 10*time.Second),
		chromedp.SetValue(`input[name="start_date"]`, "2020-01-01"),
		chromedp.SetValue(`input[name="end_date"]`, "2022-12-31"),
		chromedp.Click(`form.run-form button[type="submit"]`),
		waitJS(`/\/ui\/runs\/task_\d+$/.test(location.pathname)`, 10*time.Second),
		waitJS(`document.querySelector('.page-head .status')?.dataset.status === 'completed'`, 60*time.Second),
	))
	var meta string
	must(t, chromedp.Run(bctx, chromedp.Text(`dl`, &meta)))
	if !strings.Contains(meta, "Submitted by") || !strings.Contains(meta, "alice") {
		t.Errorf("the task page does not say who submitted it: %q", meta)
	}

	t.Log("the researcher makes an API token on the account page")
	must(t, chromedp.Run(bctx,
		chromedp.Click(`#who-user`),
		waitJS(`location.pathname.endsWith('/ui/account')`, 10*time.Second),
		chromedp.WaitVisible(`#account-user`),
		chromedp.Click(`form.form-row button[type="submit"]`),
		chromedp.WaitVisible(`#new-token input`),
		waitJS(`document.querySelectorAll('#token-list tbody tr').length === 1`, 10*time.Second),
	))
	var secret string
	must(t, chromedp.Run(bctx, chromedp.Value(`#new-token input`, &secret)))
	req, _ := http.NewRequest("GET", url+"/api/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the token made on the page does not work: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	t.Log("sign out; the viewer signs in and is refused a change")
	must(t, chromedp.Run(bctx,
		chromedp.Click(`#sign-out`),
		waitJS(`location.pathname.endsWith('/ui/login')`, 10*time.Second),
		signIn("vic"),
		chromedp.Navigate(ui+"/strategies/"+sid),
		chromedp.WaitVisible(`#code-editor .cm-content`),
		setEditor(strings.Replace(strategyCode, "E2E moving-average crossover.", "Changed by the viewer.", 1)),
		chromedp.Click(`button.btn.primary`),
		waitJS(`[...document.querySelectorAll('.toast, .load-error, [role=alert]')].some(e => e.textContent.includes('Forbidden'))`, 10*time.Second),
	))
	var text string
	must(t, chromedp.Run(bctx, chromedp.Evaluate(`[...document.querySelectorAll('.toast, .load-error, [role=alert]')].map(e => e.textContent).join(' | ')`, &text)))
	if !strings.Contains(text, "the viewer role may only read") {
		t.Errorf("the refusal does not say why: %q", text)
	}
}
