package events

import (
	"fmt"
	"sync"
)

// SubBuffer is how many frames a subscriber may fall behind. Progress and log frames stop
// being queued CompleteReserve frames short of it (progress is superseded by the next one,
// and every log line is stored and served by the logs route), so a burst never costs a
// reader its connection nor its complete event.
const SubBuffer = 256

// CompleteReserve is the room kept in a subscriber's buffer for complete events.
const CompleteReserve = 32

// Sub is one subscriber (a WebSocket connection): frames to send arrive on C in order.
// A subscriber that cannot take even a complete event is closed and removed from the hub,
// so that a connection whose send fails is removed.
type Sub struct {
	C    chan []byte
	done chan struct{}
	once sync.Once

	mu   sync.Mutex
	sent map[string]bool // task attempts whose complete event was already queued
}

// NewSub returns an open subscriber.
func NewSub() *Sub {
	return &Sub{C: make(chan []byte, SubBuffer), done: make(chan struct{}), sent: map[string]bool{}}
}

// Send queues frame without blocking; false means the subscriber is closed or full.
func (s *Sub) Send(frame []byte) bool {
	select {
	case <-s.done:
		return false
	default:
	}
	select {
	case s.C <- frame:
		return true
	default:
		return false
	}
}

// Offer queues a frame that may be skipped (progress, log) unless it would eat into the
// room kept for complete events; false means the subscriber is closed.
func (s *Sub) Offer(frame []byte) bool {
	if len(s.C) >= SubBuffer-CompleteReserve {
		select {
		case <-s.done:
			return false
		default:
			return true // skipped: the reader is behind
		}
	}
	return s.Send(frame)
}

// SendComplete queues the complete frame of a task's attempt unless one was queued already
// (a late joiner may see the final state both from the table and from the notification).
func (s *Sub) SendComplete(taskID string, attempt int, frame []byte) bool {
	key := fmt.Sprintf("%s#%d", taskID, attempt)
	s.mu.Lock()
	if s.sent[key] {
		s.mu.Unlock()
		return true
	}
	s.sent[key] = true
	s.mu.Unlock()
	return s.Send(frame)
}

// Close marks the subscriber closed; Done is closed then.
func (s *Sub) Close() { s.once.Do(func() { close(s.done) }) }

// Done is closed when the subscriber is closed.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Hub is the in-process fan-out: task subscribers (`/ws/{task_id}`) and session log
// subscribers (`/ws/logs`, one channel per Session: owner and id).
type Hub struct {
	mu       sync.RWMutex
	tasks    map[string]map[*Sub]struct{}
	sessions map[string]map[*Sub]struct{} // by sessionKey
	keys     map[*Sub][]string            // "t:<id>" or "s:<sessionKey>" per subscription, for removal
}

// sessionKey is a session's key in Hub.sessions. User names cannot hold a NUL, so no two
// sessions share a key.
func sessionKey(s Session) string { return s.Owner + "\x00" + s.ID }

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{tasks: map[string]map[*Sub]struct{}{}, sessions: map[string]map[*Sub]struct{}{}, keys: map[*Sub][]string{}}
}

// SubscribeTask adds s to taskID's subscriber set; false when s is at MaxSubscriptions.
func (h *Hub) SubscribeTask(s *Sub, taskID string) bool { return h.add(h.tasks, s, "t:", taskID) }

// SubscribeSession adds s to a session log channel. The caller decides who may: a
// WebSocket joins only sessions owned by its own user.
func (h *Hub) SubscribeSession(s *Sub, session Session) bool {
	return h.add(h.sessions, s, "s:", sessionKey(session))
}

// MaxSubscriptions bounds the channels one subscriber (one WebSocket) may join, so a
// client cannot grow the hub without limit.
const MaxSubscriptions = 100

// add subscribes s to id; it reports false when s already has MaxSubscriptions others.
func (h *Hub) add(m map[string]map[*Sub]struct{}, s *Sub, prefix, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := m[id]
	if _, dup := set[s]; dup {
		return true
	}
	if len(h.keys[s]) >= MaxSubscriptions {
		return false
	}
	if set == nil {
		set = map[*Sub]struct{}{}
		m[id] = set
	}
	set[s] = struct{}{}
	h.keys[s] = append(h.keys[s], prefix+id)
	return true
}

// Unsubscribe removes s from every set; a set left empty is dropped.
func (h *Hub) Unsubscribe(s *Sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range h.keys[s] {
		m := h.tasks
		if k[0] == 's' {
			m = h.sessions
		}
		id := k[2:]
		if set := m[id]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(m, id)
			}
		}
	}
	delete(h.keys, s)
}

// Counts reports how many tasks and sessions have subscribers, and how many subscribers
// there are in all.
func (h *Hub) Counts() (tasks, sessions, subs int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.tasks), len(h.sessions), len(h.keys)
}

// TaskIDs lists the tasks that have subscribers.
func (h *Hub) TaskIDs() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ids := make([]string, 0, len(h.tasks))
	for id := range h.tasks {
		ids = append(ids, id)
	}
	return ids
}

// SendTaskState sends a task's current state frame (from the tables) to its subscribers;
// a complete frame reaches each subscriber once per attempt, as from Deliver.
func (h *Hub) SendTaskState(taskID string, complete bool, attempt int, frame []byte) {
	for _, s := range h.snapshot(h.tasks, taskID) {
		if complete {
			s.SendComplete(taskID, attempt, frame)
		} else {
			s.Send(frame)
		}
	}
}

func (h *Hub) snapshot(m map[string]map[*Sub]struct{}, id string) []*Sub {
	h.mu.RLock()
	defer h.mu.RUnlock()
	set := m[id]
	if len(set) == 0 {
		return nil
	}
	out := make([]*Sub, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	return out
}

// Deliver fans m out: progress, log and complete frames to the task's subscribers and
// log_message frames to those of the session {m.Owner, m.Session}. Progress and log frames are skipped for a reader
// that is far behind; a subscriber that cannot take a complete frame is dropped.
func (h *Hub) Deliver(m Message) {
	var failed []*Sub
	if subs := h.snapshot(h.tasks, m.Task); len(subs) > 0 {
		var frames [][]byte
		complete, attempt := false, 0
		switch m.Event {
		case KindProgress:
			if m.Progr != nil {
				frames = append(frames, ProgressFrame(*m.Progr))
			}
		case KindLog:
			for _, l := range m.Logs {
				frames = append(frames, LogFrame(m.Task, l))
			}
		case KindStudy:
			if len(m.Frame) > 0 {
				frames = append(frames, m.Frame)
			}
		case KindComplete:
			if m.Done != nil {
				frames = append(frames, CompleteFrame(*m.Done))
				complete, attempt = true, m.Done.Attempt
			}
		}
		for _, s := range subs {
			for _, f := range frames {
				var sent bool
				if complete {
					sent = s.SendComplete(m.Task, attempt, f)
				} else {
					sent = s.Offer(f)
				}
				if !sent {
					failed = append(failed, s)
					break
				}
			}
		}
	}
	if m.Event == KindLog && m.Session != "" {
		if subs := h.snapshot(h.sessions, sessionKey(Session{Owner: m.Owner, ID: m.Session})); len(subs) > 0 {
			frames := make([][]byte, len(m.Logs))
			for i, l := range m.Logs {
				frames[i] = Encode(KindLogMessage, Record(m.Task, l))
			}
			for _, s := range subs {
				for _, f := range frames {
					if !s.Offer(f) {
						failed = append(failed, s)
						break
					}
				}
			}
		}
	}
	for _, s := range failed {
		h.Unsubscribe(s)
		s.Close()
	}
}
