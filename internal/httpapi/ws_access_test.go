package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/auth"
)

// wsPassword passes the password rules (long, no user name in it, not a common one).
const wsPassword = "Tq8-vmz2-Lp4w-Rk7"

// wsUser is an account opened for a test: its API token and the token's id, and a session
// of the page (cookie and CSRF token) from a real sign-in.
type wsUser struct {
	name, token, tokenID string
	cookie               *http.Cookie
	csrf                 string
}

// addWSUser creates name with role, an API token of theirs, and signs them in.
func addWSUser(t *testing.T, e *taskEnv, a *auth.Service, name string, role auth.Role) wsUser {
	t.Helper()
	ctx := context.Background()
	if _, err := a.AddUser(ctx, name, role, wsPassword); err != nil {
		t.Fatal(err)
	}
	secret, tok, err := a.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: name, Name: "ws"})
	if err != nil {
		t.Fatal(err)
	}
	u := wsUser{name: name, token: secret, tokenID: tok.ID}
	resp, err := http.Post(e.srv.URL+"/api/auth/login", "application/json", strings.NewReader(fmt.Sprintf(`{"name":%q,"password":%q}`, name, wsPassword)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || resp.StatusCode != 200 || me.CSRF == "" {
		t.Fatalf("sign in %s: %d %v", name, resp.StatusCode, err)
	}
	u.csrf = me.CSRF
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			u.cookie = c
		}
	}
	if u.cookie == nil {
		t.Fatalf("sign in %s: no session cookie", name)
	}
	return u
}

// header is what a request of u's sends: the session cookie, or the API token.
func (u wsUser) header(viaCookie bool) http.Header {
	if viaCookie {
		return http.Header{"Cookie": {(&http.Cookie{Name: u.cookie.Name, Value: u.cookie.Value}).String()}}
	}
	return http.Header{"Authorization": {"Bearer " + u.token}}
}

// dialWS opens a WebSocket to path with h; it answers the handshake's status, and the
// connection (whose connected frame it has read) when it opened.
func dialWS(t *testing.T, e *taskEnv, path string, h http.Header) (*wsClient, int) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(e.srv.URL, "http")+path, h)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsClient{conn: conn}
	if f := c.next(t); f.Event != "connected" {
		t.Fatalf("%s: first frame %+v", path, f)
	}
	return c, resp.StatusCode
}

// The pings of /ws/logs and /ws/{task_id}.
const (
	logsPing = `{"event":"ping"}`
	taskPing = `{"action":"ping"}`
)

// untilPong sends a ping and returns the frames that arrive before its pong: messages are
// handled in order, so everything queued for the socket before the ping comes first.
func (c *wsClient) untilPong(t *testing.T, ping string) []frame {
	t.Helper()
	c.send(t, ping)
	var got []frame
	for {
		f := c.next(t)
		if f.Event == "pong" {
			return got
		}
		got = append(got, f)
	}
}

// closed reads until the connection ends and returns how: the close frame's error, and
// the data frames that came first.
func (c *wsClient) closed(t *testing.T, within time.Duration) (*websocket.CloseError, []string) {
	t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(within))
	var frames []string
	for {
		_, msg, err := c.conn.ReadMessage()
		if err == nil {
			frames = append(frames, string(msg))
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("socket did not get a close frame within %v: %v (frames before: %v)", within, err, frames)
		}
		return ce, frames
	}
}

// TestWebSocketsCloseWhenAccessEnds: a socket open as a user, by their API token or their
// page session, is closed by the server once that credential stops working or the user's
// role changes, whichever process made the change (here the API's own routes and a direct
// change to the database): close code 4401 or 4403 with a reason, the server's
// subscriptions gone, and a new socket with the same credential refused (or, after a role
// change, admitted with the new role).
func TestWebSocketsCloseWhenAccessEnds(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 0, true)
	a := auth.NewService(e.st, 0)
	// Generous: the service checks every 2 s (wsRecheckEvery); a loaded test machine is slower.
	const within = 20 * time.Second
	cases := []struct {
		name      string
		role      auth.Role
		viaCookie bool
		end       func(t *testing.T, u wsUser)
		code      int
		reason    string
		reconnect int // the status of a new upgrade with the same credential afterwards
	}{
		{"user disabled, token socket", auth.RoleResearcher, false, func(t *testing.T, u wsUser) {
			mustStatus(t, e, e.token, "PATCH", "/api/users/"+u.name, `{"disabled":true}`, 200)
		}, 4401, "API token", 401},
		{"user disabled, session socket", auth.RoleViewer, true, func(t *testing.T, u wsUser) {
			mustStatus(t, e, e.token, "PATCH", "/api/users/"+u.name, `{"disabled":true}`, 200)
		}, 4401, "Session", 401},
		{"token revoked", auth.RoleResearcher, false, func(t *testing.T, u wsUser) {
			mustStatus(t, e, e.token, "DELETE", "/api/tokens/"+u.tokenID, "", 200)
		}, 4401, "API token", 401},
		{"demoted", auth.RoleResearcher, false, func(t *testing.T, u wsUser) {
			mustStatus(t, e, e.token, "PATCH", "/api/users/"+u.name, `{"role":"viewer"}`, 200)
		}, 4403, "from researcher to viewer", 101},
		{"promoted, session socket", auth.RoleViewer, true, func(t *testing.T, u wsUser) {
			mustStatus(t, e, e.token, "PATCH", "/api/users/"+u.name, `{"role":"researcher"}`, 200)
		}, 4403, "from viewer to researcher", 101},
		{"signed out", auth.RoleResearcher, true, func(t *testing.T, u wsUser) {
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/auth/logout", nil)
			req.AddCookie(u.cookie)
			req.Header.Set(csrfHeader, u.csrf)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 204 {
				t.Fatalf("sign out: %v %v", resp, err)
			}
			resp.Body.Close()
		}, 4401, "Session", 401},
		{"session expired", auth.RoleViewer, true, func(t *testing.T, u wsUser) {
			if _, err := e.st.Pool.Exec(context.Background(), `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_name = $1`, u.name); err != nil {
				t.Fatal(err)
			}
		}, 4401, "Session", 401},
	}
	t.Run("cases", func(t *testing.T) {
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				u := addWSUser(t, e, a, fmt.Sprintf("ws%d", i), tc.role)
				h := u.header(tc.viaCookie)
				// Both kinds of socket: the session log channel and a task's.
				logs, _ := dialWS(t, e, "/ws/logs", h)
				logs.send(t, `{"event":"subscribe_logs","data":{"session_id":"s"}}`)
				if got := logs.untilPong(t, logsPing); len(got) != 0 {
					t.Fatalf("frames before pong: %v", got)
				}
				task, _ := dialWS(t, e, "/ws/task_404", h)
				if got := task.untilPong(t, taskPing); len(got) != 0 {
					t.Fatalf("frames before pong: %v", got)
				}
				start := time.Now()
				tc.end(t, u)
				for path, c := range map[string]*wsClient{"/ws/logs": logs, "/ws/task_404": task} {
					ce, frames := c.closed(t, within)
					if ce.Code != tc.code || !strings.Contains(ce.Text, tc.reason) || len(frames) != 0 {
						t.Errorf("%s: closed with %d %q after frames %v, want %d with %q and no frames", path, ce.Code, ce.Text, frames, tc.code, tc.reason)
					}
					t.Logf("%s closed %v after the change", path, time.Since(start).Round(time.Millisecond))
				}
				again, status := dialWS(t, e, "/ws/logs", h)
				if status != tc.reconnect {
					t.Fatalf("reconnect: %d, want %d", status, tc.reconnect)
				}
				if again != nil {
					if got := again.untilPong(t, logsPing); len(got) != 0 {
						t.Fatalf("frames before pong: %v", got)
					}
					again.conn.Close()
				}
			})
		}
	})
	// Every socket ended on the server's side too: none is left subscribed.
	waitFor(t, within, func() bool {
		tasks, sessions, subs := e.hub.Counts()
		return tasks+sessions+subs == 0
	})
}

// mustStatus sends a request with token and fails the test unless it answers want.
func mustStatus(t *testing.T, e *taskEnv, token, method, path, body string, want int) {
	t.Helper()
	if s, out := e.doAs(t, token, method, path, body); s != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, s, out, want)
	}
}

// TestSessionLogChannelIsOwned: two users who use the same session_id have two channels. A
// task submitted with another user's session id is accepted and writes into its
// submitter's session of that name only; a socket subscribing to that id reads only its
// own user's lines.
func TestSessionLogChannelIsOwned(t *testing.T) {
	t.Parallel()
	e := newTaskEnvAccounts(t, 2, true)
	a := auth.NewService(e.st, 0)
	alice := addWSUser(t, e, a, "alice", auth.RoleResearcher)
	bob := addWSUser(t, e, a, "bob", auth.RoleResearcher)
	vic := addWSUser(t, e, a, "vic", auth.RoleViewer)
	subscribe := `{"event":"subscribe_logs","data":{"session_id":"shared"}}`
	sockets := map[string]*wsClient{}
	for _, u := range []struct {
		wsUser
		viaCookie bool
	}{{alice, true}, {bob, false}, {vic, true}} {
		c, _ := dialWS(t, e, "/ws/logs", u.header(u.viaCookie))
		c.send(t, subscribe)
		if got := c.untilPong(t, logsPing); len(got) != 0 { // subscribed once the pong is back
			t.Fatalf("%s: frames before pong: %v", u.name, got)
		}
		sockets[u.name] = c
	}
	run := func(u wsUser) string {
		t.Helper()
		code, body := e.doAs(t, u.token, "POST", "/api/backtests", `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31","session_id":"shared"}`)
		m, _ := body.(map[string]any)
		if code != 200 || m["created_by"] != u.name || m["session_id"] != "shared" {
			t.Fatalf("%s submits with session shared: %d %v", u.name, code, body)
		}
		id := m["task_id"].(string)
		e.waitStatus(t, id, "completed")
		return id
	}
	// ownLines reads owner's socket: at least one line of task, then every frame up to a
	// pong must be a line of task.
	ownLines := func(owner, task string) {
		t.Helper()
		c := sockets[owner]
		check := func(f frame) {
			var rec struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(f.Data, &rec)
			if f.Event != "log_message" || !strings.HasSuffix(rec.Name, "."+task) {
				t.Fatalf("%s's socket: %s %s, want lines of %s only", owner, f.Event, f.Data, task)
			}
		}
		check(c.next(t))
		for _, f := range c.untilPong(t, logsPing) {
			check(f)
		}
	}
	// nothing asserts that a socket got no frame up to a pong sent now: anything queued for
	// it before (a line of the task just finished) would come first.
	nothing := func(who string) {
		t.Helper()
		if got := sockets[who].untilPong(t, logsPing); len(got) != 0 {
			t.Fatalf("%s's socket got %d frames of another user's session, first %s %s", who, len(got), got[0].Event, got[0].Data)
		}
	}

	bobs := run(bob) // bob uses the id alice subscribed to first
	ownLines("bob", bobs)
	nothing("alice")
	nothing("vic")

	alices := run(alice)
	ownLines("alice", alices)
	nothing("bob")
	nothing("vic")

	// A socket's subscription to another user's session id is its own session: vic's
	// socket, subscribed to "shared" like the others, has seen neither user's lines
	// (checked above), and a task's own socket still streams to anyone who may read it.
	c, _ := dialWS(t, e, "/ws/"+alices, vic.header(true))
	if f := c.next(t); f.Event != "complete" {
		t.Fatalf("vic reading alice's task: %s %s", f.Event, f.Data)
	}
}
