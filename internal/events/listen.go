package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener holds the process's one LISTEN connection and hands every event to the hub.
// It reconnects after a lost connection; events sent while it was away are not replayed
// (the state is in the tables, which a reconnecting client reads).
type Listener struct {
	url string
	hub *Hub
	log *slog.Logger

	readyOnce sync.Once
	ready     chan struct{}
}

// NewListener returns a listener for the database at url delivering to hub.
func NewListener(url string, hub *Hub, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	return &Listener{url: url, hub: hub, log: log, ready: make(chan struct{})}
}

// Ready is closed once the first LISTEN is in place.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run listens until ctx ends. It returns nil on cancellation.
func (l *Listener) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	for {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		l.log.Warn("event listener lost its connection; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *Listener) listen(ctx context.Context) error {
	// Parsed as a pool URL so pool settings in it (pool_max_conns, ...) are accepted.
	pc, err := pgxpool.ParseConfig(l.url)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, pc.ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return err
	}
	l.readyOnce.Do(func() { close(l.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var m Message
		if err := json.Unmarshal([]byte(n.Payload), &m); err != nil {
			l.log.Warn("ignoring malformed event", "err", err)
			continue
		}
		l.hub.Deliver(m)
	}
}
