package jobs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// River listens on its own channels (river_insert, river_leadership, river_control) and
// acts on whatever arrives there, and PostgreSQL lets any role NOTIFY on any channel: a BI
// login's pg_notify('public.river_control', '{"action":"cancel","job_id":…}') cancelled a
// user's running backtest (issue 46). River's payloads are written by River's own SQL, so
// they cannot be sealed as the service's events are; but every notification names the
// backend that sent it. This driver's listener passes on only notifications sent by a
// session of the service's own database role (or a superuser's): the rest are dropped.
// Poll-only River would trust nothing too, but a run would then wait for the next poll to
// start, and a cancel for the next lease renewal to stop it.

// driver is River's pgx driver with the listener below.
type driver struct {
	*riverpgxv5.Driver
	pool *pgxpool.Pool
	log  *slog.Logger
}

func newDriver(pool *pgxpool.Pool, log *slog.Logger) *driver {
	if log == nil {
		log = slog.Default()
	}
	return &driver{Driver: riverpgxv5.New(pool), pool: pool, log: log}
}

func (d *driver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &listener{pool: d.pool, schema: params.Schema, log: d.log}
}

// listener is River's pgx listener (riverpgxv5.Listener, whose notifications do not carry
// the sender) that drops notifications from other roles' sessions.
type listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu               sync.Mutex
	conn             *pgx.Conn
	schema, prefix   string
	afterConnectExec string
	dropped          int
	lastDropLog      time.Time
}

// dropLogEvery spaces the warnings about dropped notifications.
const dropLogEvery = time.Minute

func (l *listener) Connect(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return errors.New("connection already established")
	}
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	if l.afterConnectExec != "" {
		if _, err := pc.Exec(ctx, l.afterConnectExec); err != nil {
			pc.Release()
			return err
		}
	}
	if l.schema == "" {
		// As River's: the schema of search_path, "" when it is unset.
		if err := pc.QueryRow(ctx, "SELECT coalesce(current_schema(), '')").Scan(&l.schema); err != nil {
			pc.Release()
			return err
		}
	}
	l.prefix = ""
	if l.schema != "" {
		l.prefix = l.schema + "."
	}
	// The listener owns the connection: it is neither returned to the pool nor reused.
	l.conn = pc.Hijack()
	return nil
}

func (l *listener) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close(ctx)
	l.conn = nil
	return err
}

func (l *listener) Listen(ctx context.Context, topic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.prefix + topic}.Sanitize())
	return err
}

func (l *listener) Unlisten(ctx context.Context, topic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.conn.Exec(ctx, "UNLISTEN "+pgx.Identifier{l.prefix + topic}.Sanitize())
	return err
}

func (l *listener) Ping(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn.Ping(ctx)
}

func (l *listener) Schema() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.schema
}

func (l *listener) SetAfterConnectExec(sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.afterConnectExec = sql
}

// WaitForNotification returns the next notification a session of the service's role
// sent. The sender is looked up by its process id while it is connected: River sends
// from the pool's long-lived connections. A sender gone by then is dropped too; what it
// announced is found at the next poll (FetchPollInterval) instead.
func (l *listener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		n, err := l.conn.WaitForNotification(ctx)
		if err != nil {
			return nil, err
		}
		// Not cut short by ctx: River cancels the wait to LISTEN on another channel, and a
		// query cancelled midway would cost the connection.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		var trusted bool
		err = l.conn.QueryRow(qctx, `SELECT r.rolname = current_user OR r.rolsuper
			FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid WHERE a.pid = $1`, int32(n.PID)).Scan(&trusted)
		cancel()
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		if trusted {
			return &riverdriver.Notification{Topic: trimPrefix(n.Channel, l.prefix), Payload: n.Payload}, nil
		}
		l.dropped++
		if now := time.Now(); now.Sub(l.lastDropLog) >= dropLogEvery {
			l.log.Warn("dropped job queue notifications another role sent", "channel", n.Channel,
				"dropped", l.dropped, "last_sender_pid", n.PID)
			l.dropped, l.lastDropLog = 0, now
		}
	}
}

func trimPrefix(s, prefix string) string {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}
