package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

// limitEnv is the API with the given WebSocket limits over a fresh database, served by a
// real HTTP server on a loopback port. It runs no workers: the sockets only need the task
// service's state queries, which a subscribe message triggers.
type limitEnv struct {
	srv *httptest.Server
	hub *events.Hub
}

func newLimitEnv(t *testing.T, cfg Config) *limitEnv {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	svc := tasks.New(tasks.Config{RunTimeout: 30 * time.Second}, st, quietLogger())
	hub := events.NewHub()
	srv := httptest.NewServer(New(cfg, Deps{Store: st, Logger: quietLogger(), Tasks: svc, Hub: hub}))
	t.Cleanup(srv.Close)
	return &limitEnv{srv: srv, hub: hub}
}

// refusal is a handshake the server answered without upgrading.
type refusal struct {
	status     int
	detail     string
	retryAfter string
}

// dialFrom opens a WebSocket to path from the local address from ("" for any). On
// success it has read the connected frame; otherwise it returns the server's refusal, or
// fails the test when the handshake failed for another reason.
func (e *limitEnv) dialFrom(t *testing.T, from, path string) (*websocket.Conn, *refusal) {
	t.Helper()
	d := &net.Dialer{Timeout: 20 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	dialer := websocket.Dialer{NetDialContext: d.DialContext, HandshakeTimeout: 20 * time.Second}
	conn, resp, err := dialer.Dial("ws"+strings.TrimPrefix(e.srv.URL, "http")+path, nil)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s from %q: %v", path, from, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var d struct {
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal(body, &d); err != nil || d.Detail == "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("refusal %d is not JSON {detail}: %q (%v)", resp.StatusCode, body, err)
		}
		return nil, &refusal{status: resp.StatusCode, detail: d.Detail, retryAfter: resp.Header.Get("Retry-After")}
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var f frame
	if err := conn.ReadJSON(&f); err != nil || f.Event != "connected" {
		t.Fatalf("first frame on %s: %+v, %v", path, f, err)
	}
	return conn, nil
}

// mustOpen dials and fails the test on a refusal.
func (e *limitEnv) mustOpen(t *testing.T, from, path string) *websocket.Conn {
	t.Helper()
	conn, ref := e.dialFrom(t, from, path)
	if ref != nil {
		t.Fatalf("dial %s from %q refused: %+v", path, from, ref)
	}
	return conn
}

// mustRefuse dials and fails the test unless the server refuses with status.
func (e *limitEnv) mustRefuse(t *testing.T, from, path string, status int, detail string) {
	t.Helper()
	conn, ref := e.dialFrom(t, from, path)
	if ref == nil {
		conn.Close()
		t.Fatalf("dial %s from %q accepted, want %d", path, from, status)
	}
	if ref.status != status || !strings.Contains(ref.detail, detail) || ref.retryAfter == "" {
		t.Fatalf("dial %s from %q: %+v, want %d with %q and Retry-After", path, from, ref, status, detail)
	}
}

// canBind reports whether this machine lets a socket use the loopback address ip as its
// source (Linux routes all of 127/8 to the loopback interface; other systems may not).
func canBind(ip string) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func TestWebSocketConnectionCaps(t *testing.T) {
	t.Parallel()

	t.Run("per address: the next connection is refused with 429 until one closes", func(t *testing.T) {
		t.Parallel()
		const perAddr = 3
		e := newLimitEnv(t, Config{WSMaxConns: 50, WSMaxConnsPerAddr: perAddr})
		// Both endpoints count against the same cap.
		conns := []*websocket.Conn{
			e.mustOpen(t, "127.0.0.1", "/ws/task_1"),
			e.mustOpen(t, "127.0.0.1", "/ws/logs"),
			e.mustOpen(t, "127.0.0.1", "/ws/task_2"),
		}
		e.mustRefuse(t, "127.0.0.1", "/ws/task_1", http.StatusTooManyRequests, fmt.Sprintf("limit %d", perAddr))
		e.mustRefuse(t, "127.0.0.1", "/ws/logs", http.StatusTooManyRequests, "Too many WebSocket connections from your address")

		// Another client address has its own allowance.
		if canBind("127.0.0.2") {
			e.mustOpen(t, "127.0.0.2", "/ws/task_1").Close()
		} else {
			t.Log("cannot use 127.0.0.2 as a source address here; skipping the second-address check")
		}

		// Once a connection closes, the server notices (its read fails) and gives the place
		// back; until then a dial may still be refused, always with 429.
		conns[1].Close()
		deadline := time.Now().Add(30 * time.Second)
		for {
			conn, ref := e.dialFrom(t, "127.0.0.1", "/ws/task_1")
			if ref == nil {
				conns[1] = conn
				break
			}
			if ref.status != http.StatusTooManyRequests {
				t.Fatalf("while waiting for the freed place: %+v", ref)
			}
			if time.Now().After(deadline) {
				t.Fatal("a closed connection's place was not given back")
			}
			time.Sleep(20 * time.Millisecond)
		}
		e.mustRefuse(t, "127.0.0.1", "/ws/task_1", http.StatusTooManyRequests, "Too many")
	})

	t.Run("per process: the next connection is refused with 503 whatever its address", func(t *testing.T) {
		t.Parallel()
		e := newLimitEnv(t, Config{WSMaxConns: 2, WSMaxConnsPerAddr: 10})
		first := e.mustOpen(t, "127.0.0.1", "/ws/task_1")
		e.mustOpen(t, "127.0.0.1", "/ws/logs")
		e.mustRefuse(t, "127.0.0.1", "/ws/task_1", http.StatusServiceUnavailable, "limit of 2 WebSocket connections")
		if canBind("127.0.0.2") {
			e.mustRefuse(t, "127.0.0.2", "/ws/task_1", http.StatusServiceUnavailable, "limit of 2")
		}
		first.Close()
		deadline := time.Now().Add(30 * time.Second)
		for {
			conn, ref := e.dialFrom(t, "127.0.0.1", "/ws/task_1")
			if ref == nil {
				conn.Close()
				break
			}
			if ref.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("after closing a connection: %+v", ref)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("a plain request over the cap is refused too, not upgraded", func(t *testing.T) {
		t.Parallel()
		e := newLimitEnv(t, Config{WSMaxConnsPerAddr: 1})
		e.mustOpen(t, "", "/ws/task_1")
		resp, err := http.Get(e.srv.URL + "/ws/task_1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("GET over the cap: %d", resp.StatusCode)
		}
	})
}

func TestWebSocketMessageRateLimit(t *testing.T) {
	t.Parallel()
	const burst = 5
	e := newLimitEnv(t, Config{WSMsgRate: 1, WSMsgBurst: burst})

	for _, path := range []string{"/ws/task_1", "/ws/logs"} {
		t.Run(path, func(t *testing.T) {
			conn := e.mustOpen(t, "", path)
			ping := `{"action":"ping"}`
			if path == "/ws/logs" {
				ping = `{"event":"ping"}`
			}

			// Within the burst every message is served.
			for range burst {
				if err := conn.WriteMessage(websocket.TextMessage, []byte(ping)); err != nil {
					t.Fatal(err)
				}
			}
			for i := range burst {
				var f frame
				_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
				if err := conn.ReadJSON(&f); err != nil || f.Event != "pong" {
					t.Fatalf("answer %d within the burst: %+v, %v", i, f, err)
				}
			}

			// A flood (the issue's: subscribe after subscribe, each a database query) far
			// beyond one message a second ends the connection with 1008. The writer stops at
			// its first error: the server closes while messages are still on the way.
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10000 {
					msg := fmt.Sprintf(`{"action":"subscribe","channel":"backtest","task_id":"task_%d"}`, i+100)
					if path == "/ws/logs" {
						msg = fmt.Sprintf(`{"event":"subscribe_logs","data":{"session_id":"s%d"}}`, i)
					}
					if conn.WriteMessage(websocket.TextMessage, []byte(msg)) != nil {
						return
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			var err error
			for err == nil {
				_, _, err = conn.ReadMessage() // state frames of subscribed tasks, if any
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text != "message rate limit exceeded" {
				t.Fatalf("flood ended with %v, want close 1008 \"message rate limit exceeded\"", err)
			}
			conn.Close()
			wg.Wait()

			// The limit is per connection: a new one is served.
			again := e.mustOpen(t, "", path)
			if err := again.WriteMessage(websocket.TextMessage, []byte(ping)); err != nil {
				t.Fatal(err)
			}
			var f frame
			_ = again.SetReadDeadline(time.Now().Add(20 * time.Second))
			if err := again.ReadJSON(&f); err != nil || f.Event != "pong" {
				t.Fatalf("new connection: %+v, %v", f, err)
			}
			again.Close()
		})
	}

	// The closed connections left the hub, with their subscriptions.
	deadline := time.Now().Add(30 * time.Second)
	for {
		tasksN, sessions, subs := e.hub.Counts()
		if tasksN == 0 && sessions == 0 && subs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub still has %d tasks, %d sessions, %d subscribers", tasksN, sessions, subs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
