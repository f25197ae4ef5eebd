package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// TestCreateBIRole: the role reads the bi_* views and nothing else, cannot write, and
// the command refuses to touch a role it did not make.
func TestCreateBIRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	name := "bi_test_" + randomSuffix(t, st)
	t.Cleanup(func() {
		_, _ = st.Pool.Exec(context.Background(), `REASSIGN OWNED BY `+pgx.Identifier{name}.Sanitize()+` TO CURRENT_USER`)
		_, _ = st.Pool.Exec(context.Background(), `DROP OWNED BY `+pgx.Identifier{name}.Sanitize())
		_, _ = st.Pool.Exec(context.Background(), `DROP ROLE IF EXISTS `+pgx.Identifier{name}.Sanitize())
	})
	role, err := st.CreateBIRole(ctx, name, "s3cret-pw", store.DefaultBIRoleOptions)
	if err != nil {
		t.Fatal(err)
	}
	views := role.Views
	if !strings.Contains(strings.Join(views, ","), "bi_results") || !strings.Contains(strings.Join(views, ","), "bi_audit") {
		t.Fatalf("views granted: %v", views)
	}
	// Again: updates the password, no error.
	if _, err := st.CreateBIRole(ctx, name, "other-pw", store.DefaultBIRoleOptions); err != nil {
		t.Fatalf("second run: %v", err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "other-pw")
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("connect as the BI role: %v", err)
	}
	defer conn.Close(ctx)
	for _, v := range views {
		if _, err := conn.Exec(ctx, `SELECT * FROM `+pgx.Identifier{v}.Sanitize()+` LIMIT 1`); err != nil {
			t.Errorf("read %s: %v", v, err)
		}
	}
	for _, q := range []string{`SELECT * FROM tasks`, `SELECT * FROM users`, `SELECT * FROM api_tokens`, `SELECT * FROM river_job`, `CREATE TABLE x (a int)`} {
		if _, err := conn.Exec(ctx, q); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
	// A role it did not make is left alone.
	if _, err := st.CreateBIRole(ctx, "postgres", "x-password", store.DefaultBIRoleOptions); err == nil {
		t.Error("bi-role create changed the postgres role")
	}
	if _, err := st.CreateBIRole(ctx, "Robert'); DROP TABLE tasks;--", "x", store.DefaultBIRoleOptions); err == nil {
		t.Error("a hostile role name was accepted")
	}
	for _, o := range []store.BIRoleOptions{
		{ConnectionLimit: 0, StatementTimeout: time.Second, IdleInTransactionTimeout: time.Second},
		{ConnectionLimit: 1, StatementTimeout: 0, IdleInTransactionTimeout: time.Second},
		{ConnectionLimit: 1, StatementTimeout: time.Second, IdleInTransactionTimeout: time.Microsecond},
	} {
		if _, err := st.CreateBIRole(ctx, name, "other-pw", o); err == nil {
			t.Errorf("limits %+v accepted", o)
		}
	}
}

func randomSuffix(t *testing.T, st *store.Store) string {
	var s string
	if err := st.Pool.QueryRow(context.Background(), `SELECT substr(md5(random()::text), 1, 8)`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
