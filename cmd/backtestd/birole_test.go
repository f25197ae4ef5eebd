package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// TestBIRoleCommand: `bi-role create` sets the limits its flags give (and its defaults
// when run again without them), and refuses limits that would mean none.
func TestBIRoleCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, db, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var suffix string
	if err := st.Pool.QueryRow(ctx, `SELECT substr(md5(random()::text), 1, 8)`).Scan(&suffix); err != nil {
		t.Fatal(err)
	}
	name := "bi_cmd_" + suffix
	t.Cleanup(func() {
		_, _ = st.Pool.Exec(context.Background(), `DROP OWNED BY `+pgx.Identifier{name}.Sanitize())
		_, _ = st.Pool.Exec(context.Background(), `DROP ROLE IF EXISTS `+pgx.Identifier{name}.Sanitize())
	})
	noEnv := func(string) string { return "" }
	cmd := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(append([]string{"bi-role", "create"}, args...), "--database-url", db), noEnv, strings.NewReader("pw-of-bi\n"), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	limits := func() (conns int, settings string) {
		t.Helper()
		if err := st.Pool.QueryRow(ctx, `SELECT r.rolconnlimit, array_to_string(ARRAY(SELECT x FROM unnest(s.setconfig) x ORDER BY x), ' ')
			FROM pg_roles r JOIN pg_db_role_setting s ON s.setrole = r.oid AND s.setdatabase = 0 WHERE r.rolname = $1`, name).Scan(&conns, &settings); err != nil {
			t.Fatal(err)
		}
		return conns, settings
	}
	for _, c := range []struct {
		args     []string
		conns    int
		settings string
	}{
		{[]string{name, "--connection-limit", "4", "--statement-timeout", "30s", "--idle-in-transaction-timeout", "2m"}, 4,
			"default_transaction_read_only=on idle_in_transaction_session_timeout=120000ms statement_timeout=30000ms"},
		{[]string{name}, 10, "default_transaction_read_only=on idle_in_transaction_session_timeout=60000ms statement_timeout=60000ms"},
	} {
		out, err := cmd(c.args...)
		if err != nil || !strings.Contains(out, "role "+name+" can read bi_") {
			t.Fatalf("%v: %s %v", c.args, out, err)
		}
		if conns, settings := limits(); conns != c.conns || settings != c.settings {
			t.Errorf("%v: connection limit %d, settings %q; want %d, %q", c.args, conns, settings, c.conns, c.settings)
		}
	}
	for _, args := range [][]string{
		{name, "--connection-limit", "0"},
		{name, "--statement-timeout", "0s"},
		{name, "--idle-in-transaction-timeout", "-1s"},
	} {
		if out, err := cmd(args...); err == nil {
			t.Errorf("%v accepted: %s", args, out)
		}
	}
}
