package tasks

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/store"
)

const (
	logStoreInterval = 250 * time.Millisecond
	logEventInterval = 20 * time.Millisecond
	maxLogMessage    = 4000
)

// logSink takes a run's log lines and stores them (COPY in batches), publishes them (NOTIFY
// in batches, to the task's and the session's subscribers) and appends them to the
// session's log file when a log directory is configured.
type logSink struct {
	s     *Service
	task  store.Task
	path  string
	batch *events.LogBatcher

	mu   sync.Mutex
	buf  []store.CopyTaskLogsParams
	file *os.File
	w    *bufio.Writer

	stop chan struct{}
	done chan struct{}
}

func (s *Service) newLogSink(t store.Task, path string) *logSink {
	k := &logSink{s: s, task: t, path: path,
		batch: events.NewLogBatcher(s.pub, t.ID, t.SessionID, logEventInterval, s.log),
		stop:  make(chan struct{}), done: make(chan struct{})}
	if s.cfg.LogDir != "" {
		if err := os.MkdirAll(s.cfg.LogDir, 0o755); err != nil {
			s.log.Warn("log dir", "dir", s.cfg.LogDir, "err", err)
		} else {
			f, err := os.OpenFile(filepath.Join(s.cfg.LogDir, logFileName(t.SessionID)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				s.log.Warn("open log file", "err", err)
			} else {
				k.file, k.w = f, bufio.NewWriter(f)
			}
		}
	}
	go k.loop()
	return k
}

// logFileName is a safe file name for a session: the id itself when it is plain, else a hash.
func logFileName(session string) string {
	plain := session != "" && len(session) <= 100
	for _, c := range session {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			plain = false
			break
		}
	}
	if plain && session[0] != '.' {
		return session + ".log"
	}
	h := sha256.Sum256([]byte(session))
	return "session-" + hex.EncodeToString(h[:8]) + ".log"
}

func (k *logSink) add(le engine.LogEntry) {
	msg := le.Message
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + "…"
	}
	wall := le.Wall
	if wall.IsZero() {
		wall = time.Now().UTC()
	}
	var bar *time.Time
	if !le.Time.IsZero() {
		bt := le.Time
		bar = &bt
	}
	src := le.Source
	if src == "" {
		src = "strategy"
	}
	k.batch.Add(events.LogLine{Level: le.Level, Message: msg, Time: events.EpochSeconds(wall), Source: src, Path: k.path})
	k.mu.Lock()
	k.buf = append(k.buf, store.CopyTaskLogsParams{TaskID: k.task.ID, Attempt: k.task.Attempt, Ts: wall,
		BarTime: bar, Level: le.Level, Source: src, Message: msg})
	if k.w != nil {
		barText := ""
		if bar != nil {
			barText = " [" + bar.Format(time.DateOnly) + "]"
		}
		fmt.Fprintf(k.w, "%s %s %s %s%s %s\n", wall.Format(time.RFC3339Nano), le.Level, k.task.ID, src, barText, msg)
	}
	k.mu.Unlock()
}

func (k *logSink) loop() {
	defer close(k.done)
	t := time.NewTicker(logStoreInterval)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			k.flush()
			return
		case <-t.C:
			k.flush()
		}
	}
}

func (k *logSink) flush() {
	k.mu.Lock()
	rows := k.buf
	k.buf = nil
	if k.w != nil {
		_ = k.w.Flush()
	}
	k.mu.Unlock()
	if len(rows) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := k.s.q.CopyTaskLogs(ctx, k.s.db.Pool, rows); err != nil {
		k.s.log.Warn("store log lines", "task", k.task.ID, "lines", len(rows), "err", err)
	}
}

// engineEvents logs what the broker did, from the result: orders submitted and filled,
// and round trips closed, in bar order.
func (k *logSink) engineEvents(res *engine.Result) {
	type ev struct {
		t   time.Time
		seq int
		msg string
	}
	var evs []ev
	for _, x := range res.Executions {
		evs = append(evs,
			ev{x.CreatedTime, 0, fmt.Sprintf("order %d submitted: %s %s %g %s", x.Ref, x.Side, x.ExecType, math.Abs(x.Size), x.Symbol)},
			ev{x.Time, 1, fmt.Sprintf("order %d filled: %s %g %s @ %.4f, commission %.4f", x.Ref, x.Side, math.Abs(x.Size), x.Symbol, x.Price, x.Commission)})
	}
	for _, tr := range res.Trades {
		if tr.IsOpen || tr.CloseTime == nil {
			continue
		}
		evs = append(evs, ev{*tr.CloseTime, 2, fmt.Sprintf("trade %d closed: %s, pnl %.4f, net %.4f, %d bars", tr.Ref, tr.Symbol, tr.PnLGross, tr.PnLNet, tr.BarLen)})
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].t.Equal(evs[j].t) {
			return evs[i].t.Before(evs[j].t)
		}
		return evs[i].seq < evs[j].seq
	})
	now := time.Now().UTC()
	for _, e := range evs {
		k.add(engine.LogEntry{Time: e.t, Wall: now, Level: "INFO", Message: e.msg, Source: "engine"})
	}
}

func (k *logSink) close() {
	close(k.stop)
	<-k.done
	k.batch.Close()
	if k.file != nil {
		_ = k.w.Flush()
		_ = k.file.Close()
	}
}
