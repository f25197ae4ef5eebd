package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/backtestd/backtestd/internal/store"
)

// Execer is the part of a pgx pool or connection the publisher needs.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Publisher sends events with NOTIFY, each sealed with the channel's key (seal.go). It is
// safe for concurrent use.
type Publisher struct {
	db   Execer
	keys *keyring
}

// NewPublisher returns a publisher that notifies through db (typically the pool), which
// also reads the channel's key on the first publication.
func NewPublisher(db store.DBTX) *Publisher { return &Publisher{db: db, keys: &keyring{db: db}} }

// Via is a publisher that sends through db instead: a transaction, whose events are then
// delivered when it commits (PostgreSQL holds a transaction's notifications until then),
// or a store.Pipeline, where they also travel with its other statements. The key is still
// read through p's database.
func (p *Publisher) Via(db Execer) *Publisher { return &Publisher{db: db, keys: p.keys} }

// Publish sends m. A message whose payload would exceed MaxPayload is split (log batches)
// or has its log or error text shortened, so Publish never fails for size.
func (p *Publisher) Publish(ctx context.Context, m Message) error {
	if m.SentAt == 0 {
		m.SentAt = time.Now().UnixNano()
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", m.Event, err)
	}
	if len(b) > MaxPayload {
		if len(m.Logs) > 1 {
			half := len(m.Logs) / 2
			a, c := m, m
			a.Logs, c.Logs = m.Logs[:half], m.Logs[half:]
			if err := p.Publish(ctx, a); err != nil {
				return err
			}
			return p.Publish(ctx, c)
		}
		if len(m.Logs) == 1 {
			l := m.Logs[0]
			l.Message = store.Truncate(l.Message, len(l.Message)-(len(b)-MaxPayload)-64)
			m.Logs = []LogLine{l}
			return p.Publish(ctx, m)
		}
		if m.Done != nil && m.Done.Error != nil && len(*m.Done.Error) > 0 {
			// A strategy's error text has no length limit; subscribers must still learn
			// that the task ended (the full text is stored with the task).
			d := *m.Done
			e := store.Truncate(*d.Error, len(*d.Error)-(len(b)-MaxPayload)-64)
			d.Error = &e
			m.Done = &d
			return p.Publish(ctx, m)
		}
		return fmt.Errorf("%s event of %d bytes exceeds the NOTIFY limit", m.Event, len(b))
	}
	s, err := p.keys.get(ctx)
	if err != nil {
		return fmt.Errorf("publish %s event: %w", m.Event, err)
	}
	payload, err := s.seal(b)
	if err != nil {
		return fmt.Errorf("seal %s event: %w", m.Event, err)
	}
	if _, err := p.db.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, payload); err != nil {
		return fmt.Errorf("notify %s event: %w", m.Event, err)
	}
	return nil
}

// MaxStreamedLines caps the log lines one batch streams to subscribers (about every 20 ms):
// a strategy that logs faster than anyone can read has the excess summarised in one line.
// Every line is still stored and served by the logs route.
const MaxStreamedLines = 100

// PublishLogs publishes one batch of a run's log lines as one log event, to the task's
// subscribers and its session's: one NOTIFY (issue 35: a run's few hundred engine lines
// were several NOTIFYs of 50 lines each, and every one is a delivery in every API
// process). A batch over MaxStreamedLines, or over what one NOTIFY carries, streams its
// first lines and a WARNING saying how many were left out.
func (p *Publisher) PublishLogs(ctx context.Context, taskID string, session Session, lines []LogLine) error {
	if len(lines) == 0 {
		return nil
	}
	m := Message{Event: KindLog, Task: taskID, Session: session.ID, Owner: session.Owner, SentAt: time.Now().UnixNano()}
	cut := func(n int) []LogLine {
		if n == len(lines) {
			return lines
		}
		last := lines[len(lines)-1]
		return append(lines[:n-1:n-1], LogLine{Level: "WARNING", Source: "engine", Time: last.Time, Path: last.Path,
			Message: fmt.Sprintf("%d log lines not streamed (too many to show live); all lines are stored", len(lines)-(n-1))})
	}
	fits := func(n int) bool {
		m.Logs = cut(n)
		b, err := json.Marshal(m)
		return err == nil && len(b) <= MaxPayload
	}
	n := min(len(lines), MaxStreamedLines)
	if n > 1 && !fits(n) {
		// The most lines (and the warning) that fit: lo fits, hi does not.
		lo, hi := 1, n
		for hi-lo > 1 {
			if mid := (lo + hi) / 2; fits(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		n = lo
	}
	m.Logs = cut(n)
	return p.Publish(ctx, m)
}
