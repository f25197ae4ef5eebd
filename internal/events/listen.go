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
// It reconnects after a lost connection. Events sent while it was away are not replayed;
// OnReconnect lets the owner resend the current state to the subscribers instead.
type Listener struct {
	url string
	hub *Hub
	log *slog.Logger

	// OnReconnect, when set, runs after every LISTEN but the first, before new events
	// are read (they queue meanwhile, so none is lost after it).
	OnReconnect func(ctx context.Context)

	readyOnce sync.Once
	ready     chan struct{}
	listened  bool

	// Notifications dropped because they did not open under the key (another role's
	// NOTIFY): counted, and logged at most once per dropLogEvery.
	dropped     int
	lastDropLog time.Time
	replays     replays
}

// dropLogEvery spaces the warnings about dropped notifications, so that a role that
// floods the channel does not flood the log too.
const dropLogEvery = time.Minute

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
	const firstBackoff = 100 * time.Millisecond
	backoff := firstBackoff
	for {
		connected, err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			backoff = firstBackoff // a connection that worked resets the wait
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

// listen holds one connection until it fails; connected reports whether LISTEN worked.
func (l *Listener) listen(ctx context.Context) (connected bool, err error) {
	// Parsed as a pool URL so pool settings in it (pool_max_conns, ...) are accepted.
	pc, err := pgxpool.ParseConfig(l.url)
	if err != nil {
		return false, err
	}
	conn, err := pgx.ConnectConfig(ctx, pc.ConnConfig)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	s, err := loadSealer(ctx, conn)
	if err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return false, err
	}
	if l.listened && l.OnReconnect != nil {
		l.log.Info("event listener reconnected; resending current task states")
		l.OnReconnect(ctx)
	}
	l.listened = true
	l.readyOnce.Do(func() { close(l.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		plain, nonce, err := s.open(n.Payload)
		if err != nil {
			l.drop(n.PID, "not sealed with the service's key: another role notifies on the events channel")
			continue
		}
		var m Message
		if err := json.Unmarshal(plain, &m); err != nil {
			l.log.Warn("ignoring malformed event", "err", err)
			continue
		}
		if !l.replays.fresh(nonce, m.SentAt, time.Now()) {
			l.drop(n.PID, "a sealed event sent again, or older than the replay window (or clocks that differ by more)")
			continue
		}
		l.hub.Deliver(m)
	}
}

// drop counts a notification that the service did not send, from the backend pid, and
// says so (why: the last one's reason) in the log at most once per dropLogEvery.
func (l *Listener) drop(pid uint32, why string) {
	l.dropped++
	if now := time.Now(); now.Sub(l.lastDropLog) >= dropLogEvery {
		l.log.Warn("dropped notifications the service did not send", "why", why,
			"channel", Channel, "dropped", l.dropped, "last_sender_pid", pid)
		l.dropped, l.lastDropLog = 0, now
	}
}
