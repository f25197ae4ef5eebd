package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/events"
)

// WebSocket endpoints.
//
// /ws/{task_id} follows the spec: on connect the server subscribes the connection to the
// task and sends {"event":"connected","data":{"task_id":...}}; then, for a task that is
// already finished, its final state as a complete event (for a running one, its current
// progress). Client messages: {"action":"ping"} → {"event":"pong","data":null};
// {"action":"subscribe","channel":"backtest","task_id":"..."} adds a task; anything else is
// ignored. Events: progress, log, complete ({event, data} per the spec's Events table).
//
// /ws/logs is the session log channel. Every message either way is a JSON text frame
// {"event": <name>, "data": <object>}. On connect: {"event":"connected","data":{"status":"ok"}}.
// The client sends {"event":"subscribe_logs","data":{"session_id":"..."}} (ignored when the
// id is missing or empty; {"action":"subscribe_logs","session_id":"..."} is accepted too) and
// then receives {"event":"log_message","data":{name, levelname, message, timestamp, pathname,
// lineno}} for every log line of the backtests started with that session_id (a backtest's
// session is its task id unless the request gave one). {"event":"ping"} answers pong.

const (
	wsWriteWait   = 10 * time.Second
	wsPingEvery   = 30 * time.Second
	wsReadLimit   = 64 << 10
	wsStateWithin = 5 * time.Second
)

func (h *taskHandlers) upgrader() *websocket.Upgrader {
	origins := h.s.cfg.CORSOrigins
	anyOrigin := len(origins) == 0 || (len(origins) == 1 && origins[0] == "*")
	return &websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 1024,
		CheckOrigin: func(r *http.Request) bool {
			o := r.Header.Get("Origin")
			return anyOrigin || o == "" || slices.Contains(origins, o)
		},
	}
}

func (h *taskHandlers) hub() *events.Hub { return h.s.hub }

// wsConn runs one connection: a writer goroutine drains the subscriber's frames (closing
// the connection when a write fails or the hub dropped it), the caller's loop reads.
func (h *taskHandlers) wsConn(w http.ResponseWriter, r *http.Request, onOpen func(*events.Sub), onMessage func(*events.Sub, []byte)) {
	conn, err := h.upgrader().Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	hub := h.hub()
	sub := events.NewSub()
	defer func() {
		hub.Unsubscribe(sub)
		sub.Close()
		conn.Close()
	}()
	onOpen(sub)
	go func() {
		ping := time.NewTicker(wsPingEvery)
		defer ping.Stop()
		defer conn.Close() // ends the read loop
		for {
			select {
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
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(readWait))
		onMessage(sub, msg)
	}
}

var pongFrame = events.Encode(events.KindPong, nil)

func (h *taskHandlers) wsTask(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "task_id")
	h.wsConn(w, r, func(sub *events.Sub) {
		sub.Send(events.Encode(events.KindConnected, map[string]string{"task_id": id}))
		h.hub().SubscribeTask(sub, id)
		h.sendState(sub, id)
	}, func(sub *events.Sub, msg []byte) {
		var m struct {
			Action  string `json:"action"`
			Channel string `json:"channel"`
			TaskID  string `json:"task_id"`
		}
		if json.Unmarshal(msg, &m) != nil {
			return
		}
		switch m.Action {
		case "ping":
			sub.Send(pongFrame)
		case "subscribe":
			// Beyond events.MaxSubscriptions per connection, subscriptions are ignored.
			if m.Channel == "backtest" && m.TaskID != "" && h.hub().SubscribeTask(sub, m.TaskID) {
				h.sendState(sub, m.TaskID)
			}
		}
	})
}

// sendState queues the task's current state for a subscriber that just joined.
func (h *taskHandlers) sendState(sub *events.Sub, id string) {
	if h.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsStateWithin)
	defer cancel()
	complete, attempt, frame, err := h.svc.FinalState(ctx, id)
	if err != nil {
		h.s.log.Warn("websocket state", "task", id, "err", err)
		return
	}
	if frame == nil {
		return
	}
	if complete {
		sub.SendComplete(id, attempt, frame)
	} else {
		sub.Send(frame)
	}
}

func (h *taskHandlers) wsLogs(w http.ResponseWriter, r *http.Request) {
	h.wsConn(w, r, func(sub *events.Sub) {
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
		if json.Unmarshal(msg, &m) != nil {
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
				h.hub().SubscribeSession(sub, sid)
			}
		case "ping":
			sub.Send(pongFrame)
		}
	})
}
