// Package events carries task events from the worker that produces them to every API process
// that has WebSocket subscribers for them. Workers publish with Postgres NOTIFY on one
// channel; each API process holds one LISTEN connection (Listener) and fans the events out
// through a Hub to its subscribers. Payloads stay under Postgres' 8,000-byte limit: large data
// is read from the tables, and log lines are batched into as many notifications as they need.
package events

import (
	"encoding/json"
	"time"
)

// Channel is the Postgres NOTIFY channel all task events travel on.
const Channel = "backtestd_events"

// MaxPayload is the largest event (its JSON) the publisher sends in one NOTIFY: sealed
// (seal.go: nonce, tag, base64) it takes sealedLen(5900) = 7,907 bytes, under the 8,000
// bytes Postgres refuses (MaxNotify).
const MaxPayload = 5900

// Event kinds on the task channel (`/ws/{task_id}`), as api/openapi.yaml describes them.
const (
	KindConnected = "connected"
	KindPong      = "pong"
	KindProgress  = "progress"
	KindLog       = "log"
	KindComplete  = "complete"
	// KindStudy is a study's progress on its channel (`/ws/study_<n>`).
	KindStudy = "study"
)

// Event kinds on the session log channel (`/ws/logs`).
const (
	KindLogConnected  = "connected"
	KindSubscribeLogs = "subscribe_logs"
	KindLogMessage    = "log_message"
)

// Message is one notification: a progress update, a batch of log lines or a completion.
// A log event also goes to the session log channel Session{Owner, Session}.
type Message struct {
	Event   string          `json:"e"`
	Task    string          `json:"t"`
	Session string          `json:"s,omitempty"`
	Owner   string          `json:"u,omitempty"` // the user who submitted the task; "" without accounts
	Progr   *Progress       `json:"p,omitempty"`
	Logs    []LogLine       `json:"l,omitempty"`
	Done    *Complete       `json:"c,omitempty"`
	Frame   json.RawMessage `json:"f,omitempty"`  // a study event's frame, as subscribers get it
	SentAt  int64           `json:"at,omitempty"` // unix nanoseconds at publication
}

// Session is a session log channel (`/ws/logs`). It belongs to a user: Owner is the user
// whose tasks write into it and who alone may read it, "" for tasks submitted without
// accounts (and the single user then). The same ID under two owners is two channels, so a
// user who submits a task with someone else's session id writes into their own session of
// that name, and subscribing to an id reads only the subscriber's own tasks' lines.
type Session struct {
	Owner string
	ID    string
}

// SessionOf is the session of a task submitted by owner (nil: nobody) with session id id.
func SessionOf(owner *string, id string) Session {
	if owner == nil {
		return Session{ID: id}
	}
	return Session{Owner: *owner, ID: id}
}

// Progress is the data of a `progress` event.
type Progress struct {
	TaskID     string  `json:"task_id"`
	Progress   float64 `json:"progress"`
	CurrentBar int     `json:"current_bar"`
	TotalBars  int     `json:"total_bars"`
}

// LogLine is one log line of a task, as published. Time is epoch seconds.
type LogLine struct {
	Level   string  `json:"v"`
	Message string  `json:"m"`
	Time    float64 `json:"ts"`
	Source  string  `json:"o,omitempty"` // "strategy" or "engine"
	Path    string  `json:"f,omitempty"` // where the strategy came from, for log_message.pathname
	Line    int     `json:"n,omitempty"`
	BarTime string  `json:"b,omitempty"` // the bar being processed, RFC 3339; empty outside bars
}

// Complete is the data of a `complete` event: the task's attempt is finished. Result is the
// stored summary for a completed task and null otherwise; Status and Error say how it ended.
// A retried task finishes again with a higher Attempt.
type Complete struct {
	TaskID  string          `json:"task_id"`
	Attempt int             `json:"attempt"`
	Status  string          `json:"status"`
	Error   *string         `json:"error"`
	Result  json.RawMessage `json:"result"`
}

// Frame is one WebSocket message `{event, data}`.
type Frame struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// Encode returns the JSON text of an `{event, data}` frame.
func Encode(event string, data any) []byte {
	b, err := json.Marshal(Frame{Event: event, Data: data})
	if err != nil {
		// Data is always one of this package's types or a map of plain values.
		b, _ = json.Marshal(Frame{Event: event})
	}
	return b
}

// logData is the `log` event's data on the task channel.
type logData struct {
	TaskID    string  `json:"task_id"`
	Level     string  `json:"level"`
	Message   string  `json:"message"`
	Timestamp float64 `json:"timestamp"`
	BarTime   string  `json:"bar_time,omitempty"` // an extra: the bar being processed
}

// LogRecord is the `log_message` event's data on the session channel /ws/logs (api/openapi.yaml).
type LogRecord struct {
	Name      string  `json:"name"`
	Levelname string  `json:"levelname"`
	Message   string  `json:"message"`
	Timestamp float64 `json:"timestamp"`
	Pathname  string  `json:"pathname"`
	Lineno    int     `json:"lineno"`
}

// Record turns a task's log line into the session channel's log record.
func Record(taskID string, l LogLine) LogRecord {
	src := l.Source
	if src == "" {
		src = "strategy"
	}
	return LogRecord{
		Name:      "backtestd." + src + "." + taskID,
		Levelname: l.Level,
		Message:   l.Message,
		Timestamp: l.Time,
		Pathname:  l.Path,
		Lineno:    l.Line,
	}
}

// ProgressFrame, LogFrame and CompleteFrame encode the task channel's events.
func ProgressFrame(p Progress) []byte { return Encode(KindProgress, p) }

// LogFrame encodes a `log` event.
func LogFrame(taskID string, l LogLine) []byte {
	return Encode(KindLog, logData{TaskID: taskID, Level: l.Level, Message: l.Message, Timestamp: l.Time, BarTime: l.BarTime})
}

// CompleteFrame encodes a `complete` event.
func CompleteFrame(c Complete) []byte {
	if len(c.Result) == 0 {
		c.Result = json.RawMessage("null")
	}
	return Encode(KindComplete, c)
}

// EpochSeconds converts t to fractional epoch seconds, the log records' timestamp.
func EpochSeconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }
