package tasks

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/store"
)

const (
	logStoreInterval = 250 * time.Millisecond
	logEventInterval = 20 * time.Millisecond
	// logHold is how long into a run the sink keeps its lines before it streams them: a run
	// shorter than that publishes them once, with its completion (issue 35: a flood of short
	// runs published a NOTIFY per 20 ms tick of each).
	logHold       = 100 * time.Millisecond
	maxLogMessage = 4000
)

// logSink takes a run's log lines and, in batches, publishes them (one NOTIFY about every
// logEventInterval, to the task's and the session's subscribers) and stores them (one COPY
// about every logStoreInterval), and appends them to the session's log file when a log
// directory is configured. A strategy that logs on every bar thus costs a few statements a
// second, not one per line.
type logSink struct {
	s    *Service
	task store.Task
	path string

	mu   sync.Mutex
	live []events.LogLine               // not yet published
	buf  store.InsertTaskLogChunkParams // not yet stored
	file *os.File
	w    *bufio.Writer

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	keep      bool // stopped by handOver: the loop leaves the last lines to the caller
}

func (s *Service) newLogSink(t store.Task, path string) *logSink {
	k := &logSink{s: s, task: t, path: path, stop: make(chan struct{}), done: make(chan struct{}), buf: newLogChunk(t)}
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
	msg := store.Truncate(le.Message, maxLogMessage)
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
	k.mu.Lock()
	line := events.LogLine{Level: le.Level, Message: msg, Time: events.EpochSeconds(wall), Source: src, Path: k.path}
	if bar != nil {
		line.BarTime = bar.UTC().Format(time.RFC3339)
	}
	k.live = append(k.live, line)
	appendLine(&k.buf, wall, bar, le.Level, src, msg)
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
	t := time.NewTicker(logEventInterval)
	defer t.Stop()
	started := time.Now()
	lastStore := started
	for {
		select {
		case <-k.stop:
			if !k.keep {
				k.publish()
				k.store()
			}
			return
		case now := <-t.C:
			if now.Sub(started) >= logHold {
				k.publish()
			}
			if now.Sub(lastStore) >= logStoreInterval {
				k.store()
				lastStore = now
			}
		}
	}
}

// publish streams the lines added since the last publish.
func (k *logSink) publish() {
	k.mu.Lock()
	lines := k.live
	k.live = nil
	k.mu.Unlock()
	if len(lines) == 0 { // the common tick: nothing to say, no statement
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	k.s.publishLines(ctx, k.task, lines)
}

// publishLines streams lines of t's run, best effort: a failure is logged (the lines are
// stored all the same).
func (s *Service) publishLines(ctx context.Context, t store.Task, lines []events.LogLine) {
	if len(lines) == 0 {
		return
	}
	if err := s.pub.PublishLogs(ctx, t.ID, events.SessionOf(t.CreatedBy, t.SessionID), lines); err != nil {
		s.log.Warn("publish log lines", "task", t.ID, "err", err)
	}
}

// store writes the lines added since the last store.
func (k *logSink) store() {
	k.mu.Lock()
	chunk := k.buf
	k.buf = newLogChunk(k.task)
	if k.w != nil {
		_ = k.w.Flush()
	}
	k.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k.s.storeChunk(ctx, chunk)
}

// storeChunk writes a batch of a run's lines in a transaction of its own, best effort: a
// failure is logged. The lines of a run in progress: its completion's commit makes them
// durable, and a rerun after a crash replaces them.
func (s *Service) storeChunk(ctx context.Context, chunk store.InsertTaskLogChunkParams) {
	if len(chunk.Ts) == 0 {
		return
	}
	if err := s.db.WithTxNoWait(ctx, func(db store.DBTX) error { return s.storeLines(ctx, db, chunk) }); err != nil {
		s.log.Warn("store log lines", "task", chunk.TaskID, "lines", len(chunk.Ts), "err", err)
	}
}

// newLogChunk is an empty batch of t's current attempt's lines.
func newLogChunk(t store.Task) store.InsertTaskLogChunkParams {
	return store.InsertTaskLogChunkParams{TaskID: t.ID, Attempt: t.Attempt}
}

// appendLine adds a line to a batch; bar is the bar being processed, nil for none.
func appendLine(c *store.InsertTaskLogChunkParams, wall time.Time, bar *time.Time, level, source, msg string) {
	var bt time.Time // the zero time is stored as NULL: no bar
	if bar != nil {
		bt = *bar
	}
	c.Ts = append(c.Ts, wall)
	c.BarTime = append(c.BarTime, bt)
	c.Level = append(c.Level, level)
	c.Source = append(c.Source, source)
	c.Message = append(c.Message, msg)
}

// storeLine stores one line of the service's own (a failure, a lost worker) as a chunk.
func (s *Service) storeLine(ctx context.Context, db store.DBTX, taskID string, attempt int32, wall time.Time, level, msg string) error {
	chunk := store.InsertTaskLogChunkParams{TaskID: taskID, Attempt: attempt}
	appendLine(&chunk, wall, nil, level, "engine", msg)
	return s.storeLines(ctx, db, chunk)
}

// maxChunkLines bounds the lines of one stored chunk (the table allows 999,999; a line's id
// is its chunk's times a million plus its place).
const maxChunkLines = 100_000

// storeLines stores a batch of lines as one chunk row, or several for a very large batch.
func (s *Service) storeLines(ctx context.Context, db store.DBTX, c store.InsertTaskLogChunkParams) error {
	for len(c.Ts) > 0 {
		n := min(len(c.Ts), maxChunkLines)
		part := store.InsertTaskLogChunkParams{TaskID: c.TaskID, Attempt: c.Attempt, Ts: c.Ts[:n], BarTime: c.BarTime[:n],
			Level: c.Level[:n], Source: c.Source[:n], Message: c.Message[:n]}
		if err := s.q.InsertTaskLogChunk(ctx, db, part); err != nil {
			return err
		}
		c.Ts, c.BarTime, c.Level, c.Source, c.Message = c.Ts[n:], c.BarTime[n:], c.Level[n:], c.Source[n:], c.Message[n:]
	}
	return nil
}

// handOver stops the sink and returns the lines it has not yet published and not yet
// stored, for the caller to write with the run's completion (one transaction and one
// round trip instead of the sink's own). After it, close does nothing.
func (k *logSink) handOver() ([]events.LogLine, store.InsertTaskLogChunkParams) {
	k.closeOnce.Do(func() {
		k.keep = true // before the stop: the loop reads it after
		k.stopLoop()
	})
	k.mu.Lock()
	defer k.mu.Unlock()
	lines, chunk := k.live, k.buf
	k.live, k.buf = nil, newLogChunk(k.task)
	return lines, chunk
}

func (k *logSink) stopLoop() {
	close(k.stop)
	<-k.done
	if k.file != nil {
		_ = k.w.Flush()
		_ = k.file.Close()
	}
}

// close flushes and stops the sink. It is safe to call more than once, so the run can
// close it explicitly (before completing the task) and also defer it for early returns.
func (k *logSink) close() {
	k.closeOnce.Do(k.stopLoop)
}
