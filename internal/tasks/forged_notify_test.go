package tasks_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/store"
)

// TestForgedQueueNotifications: PostgreSQL lets any role (a BI login) NOTIFY on River's
// channels. River's listener (internal/jobs) passes on only the service's own role's
// notifications, so a BI login's forged cancel of a running job, pause of every queue and
// leader's resignation change nothing: the run goes on, the queue runs, and a cancel
// through the service still stops the run. Before, the forged cancel stopped the run
// within half a second (issue 46).
func TestForgedQueueNotifications(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 1})
	name := fmt.Sprintf("bi_forge_%d", time.Now().UnixNano()%1_000_000_000)
	t.Cleanup(func() {
		c := context.Background()
		_, _ = b.store.Pool.Exec(c, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, name)
		_, _ = b.store.Pool.Exec(c, `DROP OWNED BY `+pgx.Identifier{name}.Sanitize())
		_, _ = b.store.Pool.Exec(c, `DROP ROLE IF EXISTS `+pgx.Identifier{name}.Sanitize())
	})
	if _, err := b.store.CreateBIRole(b.ctx, name, "forger-pw", store.DefaultBIRoleOptions); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "forger-pw")
	bi, err := pgx.Connect(b.ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer bi.Close(context.Background())
	r := req(b.strategy(t, slow))
	r.StrategyParams = map[string]any{"spin": 1000000} // minutes of work
	task := b.create(t, r)
	b.wait(t, task.TaskID, "running")
	id := b.jobID(t, task.TaskID)
	for _, n := range [][2]string{
		{"public.river_control", fmt.Sprintf(`{"action":"cancel","job_id":%d,"queue":"backtests"}`, id)},
		{"river_control", fmt.Sprintf(`{"action":"cancel","job_id":%d,"queue":"backtests"}`, id)},
		{"public.river_control", `{"action":"pause","queue":"*"}`},
		{"public.river_leadership", `{"action":"resigned","leader_id":"x"}`},
	} {
		if _, err := bi.Exec(b.ctx, `SELECT pg_notify($1, $2)`, n[0], n[1]); err != nil {
			t.Fatal(err)
		}
	}
	// A negative can only be watched for a while: 3 s, six times what the forged cancel
	// took when River listened.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if s, _ := b.jobState(t, id); s != "running" {
			t.Fatalf("job %d is %s after forged notifications", id, s)
		}
	}
	// The queue is not paused: another run starts and the service's cancel still works.
	if _, changed, err := b.svc.Cancel(b.ctx, auth.Local(), task.TaskID); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	b.waitJob(t, id, "cancelled")
	b.wait(t, b.create(t, r).TaskID, "running")
}
