package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// TestBIRoleEscapes tries, as a login made by CreateBIRole, each way out that issue 46's
// red team found or that PostgreSQL leaves open, and checks that each fails: reading the
// live events, forging or replaying one, holding a lock that blocks the service, writing
// or making a temporary table, reading a table, and going past its limits. The role is
// first loosened by hand, then made again, as a deployment upgrading by re-running
// `bi-role create` would have it.
func TestBIRoleEscapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	name := "bi_esc_" + randomSuffix(t, st)
	ident := pgx.Identifier{name}.Sanitize()
	t.Cleanup(func() {
		c := context.Background()
		_, _ = st.Pool.Exec(c, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, name)
		_, _ = st.Pool.Exec(c, `DROP OWNED BY `+ident)
		_, _ = st.Pool.Exec(c, `DROP ROLE IF EXISTS `+ident)
	})
	if _, err := st.CreateBIRole(ctx, name, "pw-1", store.DefaultBIRoleOptions); err != nil {
		t.Fatal(err)
	}
	// What an older bi-role create left, or an admin added since: all of it must go.
	for _, q := range []string{
		`GRANT TEMPORARY ON DATABASE ` + pgx.Identifier{dbNameOf(t, dbURL)}.Sanitize() + ` TO PUBLIC`,
		`GRANT INSERT, SELECT ON tasks TO ` + ident,
		`GRANT pg_read_all_data TO ` + ident,
		`ALTER ROLE ` + ident + ` CONNECTION LIMIT -1`,
		`ALTER ROLE ` + ident + ` SET default_transaction_read_only = off`,
		`ALTER ROLE ` + ident + ` RESET statement_timeout`,
		`GRANT EXECUTE ON FUNCTION lo_from_bytea(oid, bytea) TO PUBLIC`,
	} {
		if _, err := st.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	opts := store.BIRoleOptions{ConnectionLimit: 3, StatementTimeout: 7 * time.Second, IdleInTransactionTimeout: 9 * time.Second}
	role, err := st.CreateBIRole(ctx, name, "pw-2", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(role.Warnings) != 0 { // the test's role is a superuser: nothing is left
		t.Errorf("warnings: %v", role.Warnings)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "pw-2")
	connect := func(t *testing.T) *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, u.String())
		if err != nil {
			t.Fatalf("connect as the BI role: %v", err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	bi := connect(t)

	t.Run("limits", func(t *testing.T) {
		for setting, want := range map[string]string{"statement_timeout": "7s", "idle_in_transaction_session_timeout": "9s", "default_transaction_read_only": "on"} {
			var got string
			if err := bi.QueryRow(ctx, `SELECT current_setting($1)`, setting).Scan(&got); err != nil || got != want {
				t.Errorf("%s = %q (%v), want %q", setting, got, err, want)
			}
		}
		var limit int
		if err := st.Pool.QueryRow(ctx, `SELECT rolconnlimit FROM pg_roles WHERE rolname = $1`, name).Scan(&limit); err != nil || limit != 3 {
			t.Errorf("connection limit %d (%v), want 3", limit, err)
		}
		if _, err := bi.Exec(ctx, `ALTER ROLE `+ident+` CONNECTION LIMIT 100`); err == nil {
			t.Error("the role raised its own connection limit")
		}
		// bi holds one connection: two more are allowed, the fourth is refused.
		connect(t)
		connect(t)
		if c, err := pgx.Connect(ctx, u.String()); err == nil {
			c.Close(ctx)
			t.Error("a fourth connection was accepted under a limit of 3")
		} else if !strings.Contains(err.Error(), "too many connections") {
			t.Errorf("fourth connection: %v", err)
		}
	})

	// Every relation of the service's schemas, views included, as an admin sees them.
	rows, err := st.Pool.Query(ctx, `SELECT n.nspname, c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('public', 'backtestd_private') AND c.relkind IN ('r', 'p', 'v', 'm') ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type rel struct{ schema, name, kind string }
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rel, error) {
		var x rel
		err := r.Scan(&x.schema, &x.name, &x.kind)
		return x, err
	})
	if err != nil {
		t.Fatal(err)
	}
	isView := map[string]bool{}
	for _, v := range role.Views {
		isView[v] = true
	}
	if len(rels) < 30 || len(role.Views) < 5 {
		t.Fatalf("%d relations, %d views: the schema did not load", len(rels), len(role.Views))
	}

	// try runs q as the BI role in a transaction it asked to be read-write, and returns
	// the error (nil: it worked).
	try := func(q string, args ...any) error {
		tx, err := bi.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
		if err != nil {
			t.Fatalf("begin read write: %v", err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck
		_, err = tx.Exec(ctx, q, args...)
		return err
	}

	t.Run("reads only the bi views", func(t *testing.T) {
		for _, r := range rels {
			q := `SELECT * FROM ` + pgx.Identifier{r.schema, r.name}.Sanitize() + ` LIMIT 1`
			err := try(q)
			if want := r.schema == "public" && isView[r.name]; want != (err == nil) {
				t.Errorf("%s: %v (bi view: %v)", q, err, want)
			}
		}
	})

	t.Run("writes nothing", func(t *testing.T) {
		stmts := []string{
			`CREATE TEMP TABLE esc (a text)`,
			`CREATE TEMP TABLE esc AS SELECT repeat('x', 1000000) AS a`,
			`CREATE TABLE public.esc (a int)`,
			`CREATE SCHEMA esc`,
			`CREATE VIEW public.esc AS SELECT 1`,
			`CREATE FUNCTION public.esc() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
			`SELECT lo_from_bytea(0, 'x'::bytea)`,
			`SELECT lo_create(0)`,
			`SELECT lo_creat(-1)`,
		}
		for _, r := range rels {
			full := pgx.Identifier{r.schema, r.name}.Sanitize()
			stmts = append(stmts, `DELETE FROM `+full, `INSERT INTO `+full+` DEFAULT VALUES`, `TRUNCATE `+full)
		}
		for _, q := range stmts {
			if err := try(q); err == nil {
				t.Errorf("%s: allowed", q)
			}
		}
		var temps int
		if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relpersistence = 't'`).Scan(&temps); err != nil || temps != 0 {
			t.Errorf("%d temporary tables (%v)", temps, err)
		}
	})

	t.Run("locks", func(t *testing.T) {
		// The BI session holds every advisory key the service used before issue 46 (its
		// locks are rows and tables it cannot reach now) ...
		for _, q := range []string{
			`SELECT pg_advisory_lock(hashtext('backtestd.owner:bob'))`,
			`SELECT pg_advisory_lock(hashtext('backtestd:data_source:builtin'))`,
			`SELECT pg_advisory_lock(hashtext('backtestd:bars:builtin/SPY'))`,
			`SELECT pg_advisory_lock(hashtextextended('backtestd.study-job', g)) FROM generate_series(1, 100) g`,
			`SELECT pg_advisory_lock(7411893605)`,
			`SELECT pg_advisory_lock(5887940537704921958)`, // goose's session lock
		} {
			if _, err := bi.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		// ... and cannot take the service's own locks: not the rows, not the tables.
		for _, q := range []string{
			`SELECT * FROM backtestd_private.service_locks FOR UPDATE`,
			`SELECT * FROM backtestd_private.service_locks FOR KEY SHARE`,
			`INSERT INTO backtestd_private.service_locks (name) VALUES ('owner:bob')`,
			`LOCK TABLE backtestd_private.retention_lock IN ACCESS SHARE MODE`,
			`LOCK TABLE backtestd_private.service_locks IN ROW SHARE MODE`,
			`SELECT * FROM goose_lock FOR UPDATE`,
			`UPDATE goose_lock SET locked = true`,
			`LOCK TABLE goose_lock IN ACCESS SHARE MODE`,
			`SELECT * FROM bi_results FOR UPDATE`,
			`LOCK TABLE bi_results IN SHARE MODE`,
		} {
			if err := try(q); err == nil {
				t.Errorf("%s: allowed", q)
			}
		}
		// Every lock the service takes is had at once (the deadline is generous: a lock
		// the BI role held would wait for ever).
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		q := store.New()
		err := st.WithTx(c, func(tx pgx.Tx) error {
			bob := "bob"
			if err := fairshare.Admit(c, tx, q, 1, &bob, fairshare.Unit{Kind: fairshare.Backtest, Task: "task_x"}); err != nil {
				return err
			}
			if err := q.LockDataSource(c, tx, "builtin"); err != nil {
				return err
			}
			if err := q.LockSymbolBars(c, tx, store.LockSymbolBarsParams{Source: "builtin", Symbol: "SPY"}); err != nil {
				return err
			}
			if ok, err := q.TryLockStudyOrphans(c, tx); err != nil || !ok {
				return errors.Join(err, errors.New("the orphaned study jobs' lock was taken"))
			}
			return q.TryRetentionLock(c, tx)
		})
		if err != nil {
			t.Fatalf("the service's locks, while the BI role holds the old advisory keys: %v", err)
		}
		if err := store.Migrate(c, dbURL, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatalf("migrate while the BI role holds goose's advisory key: %v", err)
		}
		// A second holder of a service lock does wait, or is told it is held: the locks
		// still work.
		tx1, err := st.Pool.Begin(c)
		if err != nil {
			t.Fatal(err)
		}
		defer tx1.Rollback(ctx) //nolint:errcheck
		if err := q.TryRetentionLock(c, tx1); err != nil {
			t.Fatal(err)
		}
		if ok, err := q.TryLockStudyOrphans(c, tx1); err != nil || !ok {
			t.Fatalf("orphans lock: %v %v", ok, err)
		}
		err = st.WithTx(c, func(tx pgx.Tx) error {
			if ok, err := q.TryLockStudyOrphans(c, tx); err != nil || ok {
				return errors.Join(err, errors.New("a second transaction took the orphaned study jobs' lock"))
			}
			return q.TryRetentionLock(c, tx)
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			t.Fatalf("second retention lock: %v, want lock_not_available", err)
		}
	})

	t.Run("events", func(t *testing.T) {
		hub := events.NewHub()
		l := events.NewListener(dbURL, hub, slog.New(slog.NewTextHandler(io.Discard, nil)))
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = l.Run(lctx) }()
		defer func() { stop(); <-done }()
		<-l.Ready()
		sub := events.NewSub()
		hub.SubscribeTask(sub, "task_bob")
		spy := connect(t)
		if _, err := spy.Exec(ctx, `LISTEN backtestd_events`); err != nil {
			t.Fatal(err) // PostgreSQL allows it to any role: what it hears must be unreadable
		}
		pub := events.NewPublisher(st.Pool)
		line := func(msg string) []events.LogLine {
			return []events.LogLine{{Level: "INFO", Source: "strategy", Message: msg}}
		}
		if err := pub.PublishLogs(ctx, "task_bob", events.Session{Owner: "bob", ID: "s1"}, line("bob's secret line 4242")); err != nil {
			t.Fatal(err)
		}
		next := func(what string) string {
			t.Helper()
			select {
			case f := <-sub.C:
				return string(f)
			case <-time.After(30 * time.Second):
				t.Fatalf("no frame: %s", what)
				return ""
			}
		}
		if f := next("the real event"); !strings.Contains(f, "secret line 4242") {
			t.Fatalf("the subscriber got %s", f)
		}
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := spy.WaitForNotification(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("the listening BI role heard nothing at all: %v", err)
		}
		var decoded map[string]any
		if strings.Contains(n.Payload, "4242") || strings.Contains(n.Payload, "task_bob") || strings.Contains(n.Payload, "bob") ||
			json.Unmarshal([]byte(n.Payload), &decoded) == nil {
			t.Fatalf("the BI role read the event: %s", n.Payload)
		}
		forged, _ := json.Marshal(events.Message{Event: events.KindLog, Task: "task_bob", SentAt: time.Now().UnixNano(),
			Logs: []events.LogLine{{Level: "ERROR", Source: "engine", Message: "forged: your strategy was deleted"}}})
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`SELECT pg_notify('backtestd_events', $1)`, []any{string(forged)}},
			{`NOTIFY backtestd_events, '` + strings.ReplaceAll(string(forged), "'", "''") + `'`, nil},
			{`SELECT pg_notify('backtestd_events', $1)`, []any{"1." + strings.Repeat("A", 200)}},
			{`SELECT pg_notify('backtestd_events', $1)`, []any{n.Payload}}, // the real event, sent again
		} {
			if _, err := bi.Exec(ctx, q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		if err := pub.PublishLogs(ctx, "task_bob", events.Session{Owner: "bob", ID: "s1"}, line("after the forgeries")); err != nil {
			t.Fatal(err)
		}
		// Notifications arrive in the order they were committed: the forgeries came first.
		if f := next("the event after the forgeries"); !strings.Contains(f, "after the forgeries") {
			t.Fatalf("the subscriber got %s before the real event", f)
		}
		select {
		case f := <-sub.C:
			t.Fatalf("unexpected frame %s", f)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

func dbNameOf(t *testing.T, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
