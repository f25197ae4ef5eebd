package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"
	"golang.org/x/time/rate"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/store"
)

// WebSocket endpoints.
//
// /ws/{task_id} (api/openapi.yaml): on connect the server subscribes the connection to the
// task and sends {"event":"connected","data":{"task_id":...}}; then, for a task that is
// already finished, its final state as a complete event (for a running one, its current
// progress). Client messages: {"action":"ping"} → {"event":"pong","data":null};
// {"action":"subscribe","channel":"backtest","task_id":"..."} adds a task; anything else is
// ignored. Events: progress, log, complete ({event, data} as api/openapi.yaml describes).
//
// /ws/logs is the session log channel. Every message either way is a JSON text frame
// {"event": <name>, "data": <object>}. On connect: {"event":"connected","data":{"status":"ok"}}.
// The client sends {"event":"subscribe_logs","data":{"session_id":"..."}} (ignored when the
// id is missing or empty; {"action":"subscribe_logs","session_id":"..."} is accepted too) and
// then receives {"event":"log_message","data":{name, levelname, message, timestamp, pathname,
// lineno}} for every log line of the backtests started with that session_id (a backtest's
// session is its task id unless the request gave one). {"event":"ping"} answers pong.
// With accounts a session belongs to its user (events.Session): a socket receives the lines
// of its own user's backtests only, and a backtest submitted with a session_id that another
// user also uses writes into its submitter's session of that name, never into the other's.
//
// Access ends on an open socket as on the next request. With accounts, every
// wsRecheckEvery each socket asks the database again who its credential (the cookie's
// session or the Authorization token it was opened with) belongs to, so a change made by
// any process reaches it. A credential that no longer works (signed out, session expired,
// user disabled, token revoked or expired) ends the socket with close code 4401
// (wsCloseUnauthenticated); a user whose role changed gets 4403 (wsCloseAccessChanged) and
// may reconnect with the new role. The reason says which; nothing is sent after the close.
//
// Limits (Config's WS* fields; see wsGate). Before the upgrade, a connection beyond the
// per-address cap is refused with 429 and one beyond the handler's cap with 503, both
// {"detail": ...} with Retry-After. After it, every client data message, whatever it says,
// takes a token from the connection's bucket (WSMsgRate per second, WSMsgBurst deep); a
// message finding the bucket empty ends the connection with close code 1008 (policy
// violation) and reason "message rate limit exceeded". Closing rather than answering an
// error frame and carrying on: the protocol needs a handful of messages per connection
// (the burst lets a page subscribe to its full events.MaxSubscriptions at once), so a
// client over the limit is broken or hostile; dropping its messages one by one would still
// cost a read and a parse each and leave a broken client believing it had subscribed,
// while a close is visible, costs nothing more, and a reconnect passes the caps again.

const (
	wsWriteWait   = 10 * time.Second
	wsPingEvery   = 30 * time.Second
	wsReadLimit   = 64 << 10
	wsStateWithin = 5 * time.Second
	// wsRecheckEvery is how often a socket's credential is checked again: a lost right
	// ends the socket within this (and one query) after the change. A check is the same
	// indexed query as a request's (about 0.2 ms), so 1,000 open sockets cost PostgreSQL
	// some 500 small queries a second.
	wsRecheckEvery = 2 * time.Second
)

// Close codes of a socket whose access ended (4000-4999 are the application's; these echo
// HTTP's 401 and 403).
const (
	wsCloseUnauthenticated = 4401
	wsCloseAccessChanged   = 4403
)

func (s *Server) upgrader() *websocket.Upgrader {
	// With accounts a browser's cookie opens the socket, so a page elsewhere must not:
	// only this service's own origin and listed ones (no cross-site WebSocket hijacking).
	anyOK := anyOrigin(s.cfg.CORSOrigins) && s.auth == nil
	return &websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 1024,
		// The same rule as a write's (crossSite): a browser's upgrade from another site is
		// refused unless its origin is listed.
		CheckOrigin: func(r *http.Request) bool { return anyOK || s.crossSite(r) == nil },
	}
}

// wsConn runs one connection: a writer goroutine drains the subscriber's frames (closing
// the connection when a write fails or the hub dropped it), the caller's loop reads.
// It holds one of the gate's places from before the upgrade until it returns.
func (s *Server) wsConn(w http.ResponseWriter, r *http.Request, onOpen func(*events.Sub), onMessage func(*events.Sub, []byte)) {
	gate := s.ws
	addr := clientAddr(r)
	if status, detail := gate.acquire(addr); status != 0 {
		gate.refused.Do(func() {
			s.log.WarnContext(r.Context(), "websocket connection refused (logged at most once a minute)", "addr", addr, "status", status, "detail", detail)
		})
		w.Header().Set("Retry-After", "10")
		writeJSON(w, status, map[string]string{"detail": detail})
		return
	}
	defer gate.release(addr)
	conn, err := s.upgrader().Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	hub := s.hub
	sub := events.NewSub()
	defer func() {
		hub.Unsubscribe(sub)
		sub.Close()
		conn.Close()
	}()
	onOpen(sub)
	readDone := make(chan struct{})
	defer close(readDone)
	var recheck <-chan time.Time // nil, never ready, without accounts
	if s.auth != nil {
		t := time.NewTicker(wsRecheckEvery)
		defer t.Stop()
		recheck = t.C
	}
	go func() {
		ping := time.NewTicker(wsPingEvery)
		defer ping.Stop()
		defer conn.Close() // ends the read loop
		for {
			select {
			case <-recheck:
				// Here in the writer, so that no frame follows the close.
				if code, reason := s.socketAccess(r); code != 0 {
					hub.Unsubscribe(sub)
					sub.Close()
					s.log.InfoContext(r.Context(), "websocket closed: access ended", "user", caller(r).User, "code", code, "reason", reason, "path", r.URL.Path)
					closeAndWait(conn, code, reason, readDone)
					return
				}
			case f := <-sub.C:
				_ = conn.SetWriteDeadline(time.Now().Add(wsWriteWait))
				if err := conn.WriteMessage(websocket.TextMessage, f); err != nil {
					hub.Unsubscribe(sub)
					sub.Close()
					return
				}
			case <-ping.C:
				if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteWait)); err != nil {
					hub.Unsubscribe(sub)
					sub.Close()
					return
				}
			case <-sub.Done():
				return
			}
		}
	}()
	conn.SetReadLimit(wsReadLimit)
	// A peer that neither sends nor answers our pings is gone: stop waiting for it.
	readWait := 2*wsPingEvery + wsWriteWait
	_ = conn.SetReadDeadline(time.Now().Add(readWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(readWait)) })
	limit := gate.messageLimiter()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if !limit.Allow() {
			s.log.InfoContext(r.Context(), "websocket closed: message rate limit exceeded", "addr", addr, "path", r.URL.Path)
			closeForPolicy(conn, "message rate limit exceeded")
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(readWait))
		onMessage(sub, msg)
	}
}

// socketAccess checks again, against the database, the credential r (a socket's upgrade
// request) came with. It answers 0 while the credential stands for the same user and role
// as at the upgrade, otherwise the close code and reason to end the socket with. A check
// that could not be made (the database did not answer) keeps the socket until the next.
func (s *Server) socketAccess(r *http.Request) (code int, reason string) {
	ctx, cancel := context.WithTimeout(r.Context(), wsRecheckEvery)
	defer cancel()
	now, err := s.authenticate(r.WithContext(ctx))
	if e, ok := apperr.As(err); ok && e.Kind == apperr.KindUnauthenticated {
		return wsCloseUnauthenticated, closeReason(e.Detail)
	}
	if err != nil {
		if r.Context().Err() == nil { // not merely the socket ending
			s.ws.recheckFailed.Do(func() {
				s.log.WarnContext(r.Context(), "websocket credential check failed; the socket stays open until a check succeeds (logged at most once a minute)", "err", err)
			})
		}
		return 0, ""
	}
	was := caller(r)
	if now == nil || now.User != was.User {
		return wsCloseUnauthenticated, "Signed out: sign in again"
	}
	if now.Role != was.Role {
		return wsCloseAccessChanged, closeReason(fmt.Sprintf("Your role changed from %s to %s: reconnect", was.Role, now.Role))
	}
	return 0, ""
}

// closeReason fits text into a close frame's reason (at most 123 bytes).
func closeReason(text string) string { return store.Truncate(text, 120) }

// closeAndWait sends a close frame with code and reason from the writer, then gives the
// read loop (which ends when readDone closes) a second to read the peer's close reply, so
// that the peer gets to read the reason; the caller then closes the connection.
func closeAndWait(conn *websocket.Conn, code int, reason string, readDone <-chan struct{}) {
	msg := websocket.FormatCloseMessage(code, reason)
	if conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wsWriteWait)) != nil {
		return
	}
	select {
	case <-readDone:
	case <-time.After(time.Second):
	}
}

// closeForPolicy sends a close frame with code 1008 and reason, then reads (and ignores)
// what the peer still sends for at most a second, so that its close reply, not a TCP reset
// over unread data, ends the connection and the peer gets to read the reason.
func closeForPolicy(conn *websocket.Conn, reason string) {
	msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, reason)
	if conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wsWriteWait)) != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}

// Defaults of the WebSocket limits in Config.
const (
	// DefaultWSMaxConns bounds one handler's open WebSocket connections. One costs a file
	// descriptor, two goroutines, a few KiB of buffers and a queue of events.SubBuffer
	// frames, some tens of KiB in all: 10,000 of them stay within a few hundred MiB and
	// leave room under common descriptor limits (Go raises the soft limit to the hard one,
	// often 65,536 or more) for HTTP, PostgreSQL and runner processes, while being far
	// more sockets than one process's users keep pages open.
	DefaultWSMaxConns = 10000
	// DefaultWSMaxConnsPerAddr bounds the connections from one client address. A page holds
	// one or two sockets and a browser opens a few hundred at most in all (Firefox 200,
	// Chrome about 255), so no single user is refused and an office behind one NAT address
	// has room, while one address can hold no more than about a 40th of DefaultWSMaxConns.
	// Load tests that open thousands of sockets from one machine must raise it.
	DefaultWSMaxConnsPerAddr = 256
	// DefaultWSMsgRate and DefaultWSMsgBurst bound client messages on one connection: a page
	// sends a few subscribes and a ping now and then; the burst lets it subscribe to its
	// events.MaxSubscriptions tasks at once.
	DefaultWSMsgRate  = 20.0
	DefaultWSMsgBurst = events.MaxSubscriptions
)

// wsGate counts a handler's open WebSocket connections, in all and per client address,
// and hands each connection its message limiter. It is safe for concurrent use.
type wsGate struct {
	maxConns, maxPerAddr int // <= 0: no limit
	msgRate              rate.Limit
	msgBurst             int
	refused              rate.Sometimes // paces the refusal warning
	recheckFailed        rate.Sometimes // paces the warning of a credential check that failed

	mu     sync.Mutex
	open   int
	byAddr map[string]int
}

func newWSGate(cfg Config) *wsGate {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	g := &wsGate{
		maxConns:      def(cfg.WSMaxConns, DefaultWSMaxConns),
		maxPerAddr:    def(cfg.WSMaxConnsPerAddr, DefaultWSMaxConnsPerAddr),
		msgRate:       rate.Limit(cfg.WSMsgRate),
		msgBurst:      max(cfg.WSMsgBurst, 0),
		refused:       rate.Sometimes{Interval: time.Minute},
		recheckFailed: rate.Sometimes{Interval: time.Minute},
		byAddr:        map[string]int{},
	}
	if g.msgBurst == 0 {
		g.msgBurst = DefaultWSMsgBurst
	}
	switch {
	case cfg.WSMsgRate == 0:
		g.msgRate = DefaultWSMsgRate
	case cfg.WSMsgRate < 0:
		g.msgRate = rate.Inf
	}
	return g
}

// acquire takes a place for a connection from addr. It answers 0 when it did (the caller
// must release it), otherwise the status and detail to refuse the request with.
func (g *wsGate) acquire(addr string) (status int, detail string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxPerAddr > 0 && g.byAddr[addr] >= g.maxPerAddr {
		return http.StatusTooManyRequests, fmt.Sprintf("Too many WebSocket connections from your address (limit %d); close one and retry", g.maxPerAddr)
	}
	if g.maxConns > 0 && g.open >= g.maxConns {
		return http.StatusServiceUnavailable, fmt.Sprintf("The server has reached its limit of %d WebSocket connections; retry later", g.maxConns)
	}
	g.open++
	g.byAddr[addr]++
	return 0, ""
}

// count is how many connections are open.
func (g *wsGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// release gives back a place taken by acquire.
func (g *wsGate) release(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open--
	if g.byAddr[addr]--; g.byAddr[addr] <= 0 {
		delete(g.byAddr, addr)
	}
}

// messageLimiter is a fresh token bucket for one connection's client messages.
func (g *wsGate) messageLimiter() *rate.Limiter {
	return rate.NewLimiter(g.msgRate, g.msgBurst)
}

// clientAddr is the host part of the request's RemoteAddr: the peer of the TCP
// connection. X-Forwarded-For and similar headers are not trusted: any client can set
// them. Behind a reverse proxy every client would share the proxy's address, so the
// per-address cap then needs a trusted-proxy setting that this service does not have yet
// (or middleware, when the handler is mounted in another program, that rewrites
// RemoteAddr from a header only that proxy can set).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

var pongFrame = events.Encode(events.KindPong, nil)

// mountSockets mounts the WebSocket endpoints: /ws/logs for log sessions, /ws/{task_id}
// for the progress of a task or, with an id study_…, of a study.
func (s *Server) mountSockets(r chi.Router) {
	if s.hub == nil {
		s.hub = events.NewHub() // no listener: sockets work, task events never come
	}
	tasks := &taskHandlers{s: s, svc: s.tasks}
	studies := &studyHandlers{s: s, svc: s.studies}
	r.Get("/ws/logs", s.wsLogs) // before /ws/{task_id}
	r.Get("/ws/{task_id}", s.wsProgress(tasks, studies))
}

// wsProgress serves /ws/{task_id}: the handlers of the resource the id names send its
// current state.
func (s *Server) wsProgress(tasks *taskHandlers, studies *studyHandlers) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "task_id")
		s.wsConn(w, r, func(sub *events.Sub) {
			if strings.HasPrefix(id, "study_") { // a study's progress
				sub.Send(events.Encode(events.KindConnected, map[string]string{"study_id": id}))
				s.hub.SubscribeTask(sub, id)
				studies.sendState(sub, id)
				return
			}
			sub.Send(events.Encode(events.KindConnected, map[string]string{"task_id": id}))
			s.hub.SubscribeTask(sub, id)
			tasks.sendState(sub, id)
		}, func(sub *events.Sub, msg []byte) {
			var m struct {
				Action  string `json:"action"`
				Channel string `json:"channel"`
				TaskID  string `json:"task_id"`
			}
			if decodeMessage(msg, &m) != nil {
				return
			}
			switch m.Action {
			case "ping":
				sub.Send(pongFrame)
			case "subscribe":
				// Beyond events.MaxSubscriptions per connection, subscriptions are ignored.
				if m.Channel == "backtest" && m.TaskID != "" && s.hub.SubscribeTask(sub, m.TaskID) {
					tasks.sendState(sub, m.TaskID)
				}
			}
		})
	}
}

func (s *Server) wsLogs(w http.ResponseWriter, r *http.Request) {
	s.wsConn(w, r, func(sub *events.Sub) {
		sub.Send(events.Encode(events.KindLogConnected, map[string]string{"status": "ok"}))
	}, func(sub *events.Sub, msg []byte) {
		var m struct {
			Event     string `json:"event"`
			Action    string `json:"action"`
			SessionID string `json:"session_id"`
			Data      struct {
				SessionID string `json:"session_id"`
			} `json:"data"`
		}
		if decodeMessage(msg, &m) != nil {
			return
		}
		name := m.Event
		if name == "" {
			name = m.Action
		}
		switch name {
		case events.KindSubscribeLogs:
			sid := strings.TrimSpace(m.Data.SessionID)
			if sid == "" {
				sid = strings.TrimSpace(m.SessionID)
			}
			if sid != "" {
				// The caller's own session of that name only (events.Session).
				s.hub.SubscribeSession(sub, events.Session{Owner: caller(r).User, ID: sid})
			}
		case "ping":
			sub.Send(pongFrame)
		}
	})
}
