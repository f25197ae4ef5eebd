package fairshare_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int
		kind  fairshare.Kind
		load  fairshare.Load
		want  bool
	}{
		{"no limit", 0, fairshare.Study, fairshare.Load{Running: 1000, WaitingBacktests: 9}, true},
		{"a negative limit is none", -1, fairshare.Backtest, fairshare.Load{Running: 5}, true},
		{"below the limit", 1, fairshare.Backtest, fairshare.Load{}, true},
		{"at the limit", 1, fairshare.Backtest, fairshare.Load{Running: 1}, false},
		{"one below", 5, fairshare.Backtest, fairshare.Load{Running: 4}, true},
		{"at five", 5, fairshare.Study, fairshare.Load{Running: 5}, false},
		{"over it (a smaller limit set meanwhile)", 5, fairshare.Backtest, fairshare.Load{Running: 6}, false},
		{"a backtest while others of the owner's wait", 5, fairshare.Backtest, fairshare.Load{Running: 2, WaitingBacktests: 3}, true},
		{"a study job while the owner's backtest waits", 5, fairshare.Study, fairshare.Load{Running: 2, WaitingBacktests: 1}, false},
		{"a study job when no backtest waits", 5, fairshare.Study, fairshare.Load{Running: 4}, true},
	}
	for _, tt := range tests {
		if got := fairshare.Allowed(tt.limit, tt.kind, tt.load); got != tt.want {
			t.Errorf("%s: Allowed(%d, %v, %+v) = %v, want %v", tt.name, tt.limit, tt.kind, tt.load, got, tt.want)
		}
	}
}

func TestPriority(t *testing.T) {
	t.Parallel()
	alice := "alice"
	tests := []struct {
		name  string
		kind  fairshare.Kind
		owner *string
		limit int
		want  int
	}{
		{"backtest with a limit", fairshare.Backtest, &alice, 5, 1},
		{"backtest without accounts", fairshare.Backtest, nil, 5, 1},
		{"study under the fair share: same queue", fairshare.Study, &alice, 5, 1},
		{"study without accounts: behind backtests", fairshare.Study, nil, 5, 2},
		{"study with no limit: behind backtests", fairshare.Study, &alice, 0, 2},
	}
	for _, tt := range tests {
		if got := fairshare.Priority(tt.kind, tt.owner, tt.limit); got != tt.want {
			t.Errorf("%s: Priority = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestAdmitCountsEveryKindOfWork: the units of an owner are their running backtests, their
// studies' jobs holding a lease (batches and folds) and the price-path jobs they asked for
// that run and were touched lately, less the unit being admitted; others' work, finished
// work, a dead job's stale row and ownerless work do not count. The owner's pending
// backtests hold back their study's jobs.
func TestAdmitCountsEveryKindOfWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	exec := func(sql string) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("fixture %q: %v", sql, err)
		}
	}
	exec(`INSERT INTO users (name, role, password_hash) VALUES ('alice', 'researcher', 'x'), ('bob', 'researcher', 'x'), ('carol', 'researcher', 'x'),
		('dave', 'researcher', 'x'), ('erin', 'researcher', 'x')`)
	exec(`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'S', 1)`)
	exec(`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 1, 'S', 'x', 'S', '[]', 'api', 'h')`)
	task := func(id, owner, status string) {
		t.Helper()
		exec(`INSERT INTO tasks (id, strategy_id, strategy_version, status, data_source, symbol, start_date, end_date,
			initial_cash, commission, session_id, symbols, benchmark, created_by) VALUES ('` + id + `', 'str_1', 1, '` + status + `', 'src', 'AAA',
			'2020-01-01', '2020-12-31', 10000, 0, 's', '{AAA}', 'AAA', ` + owner + `)`)
	}
	// alice: two running backtests, one pending, one completed
	task("task_1", "'alice'", "running")
	task("task_2", "'alice'", "running")
	task("task_3", "'alice'", "pending")
	task("task_4", "'alice'", "completed")
	// bob: one running backtest; nobody's: running
	task("task_5", "'bob'", "running")
	task("task_6", "NULL", "running")
	study := func(id, owner string) {
		t.Helper()
		exec(`INSERT INTO studies (id, strategy_id, strategy_version, data_source, symbols, timeframe, timezone, start_date,
			end_date, initial_cash, commission, space, method, objective, direction, blocks, total, created_by)
			VALUES ('` + id + `', 'str_1', 1, 'src', '{AAA}', '1d', 'UTC', '2020-01-01', '2020-12-31', 10000, 0, '{}',
			'grid', 'sharpe_ratio', 'max', 16, 10, ` + owner + `)`)
	}
	study("study_1", "'alice'")
	study("study_2", "'bob'")
	study("study_3", "NULL")
	// alice's study holds two batches and a fold's run; bob's one batch; the ownerless one two.
	exec(`INSERT INTO study_batches (job_id, study_id, trials, fold, lease, worker) VALUES
		(101, 'study_1', '{0,1}', NULL, 1, 'w'), (102, 'study_1', '{2,3}', NULL, 1, 'w'), (103, 'study_1', '{}', 0, 1, 'w'),
		(201, 'study_2', '{0}', NULL, 1, 'w'),
		(301, 'study_3', '{0}', NULL, 1, 'w'), (302, 'study_3', '{1}', NULL, 1, 'w')`)

	// Price-path jobs on bob's completed result: carol asked for two running ones (jobs 401
	// and 402), one of them untouched for longer than PathsStale (its worker died), a
	// pending one and a completed one; dave's runs (dave asked, carol's count ignores it).
	task("task_9", "'bob'", "completed")
	exec(`INSERT INTO results (task_id, attempt, initial_cash, final_value, final_cash, total_return, max_drawdown,
		max_drawdown_pct, total_trades, won, lost, bars) VALUES ('task_9', 1, 10000, 10000, 10000, 0, 0, 0, 0, 0, 0, 10)`)
	exec(`INSERT INTO montecarlo_paths (task_id, runs, seed, block, status, created_by, job_id, updated_at) VALUES
		('task_9', 10, 1, 5, 'running', 'carol', 401, now()),
		('task_9', 10, 2, 5, 'running', 'carol', 402, now() - interval '1 minute'),
		('task_9', 10, 3, 5, 'pending', 'carol', NULL, now()),
		('task_9', 10, 4, 5, 'completed', 'carol', 404, now()),
		('task_9', 10, 5, 5, 'running', 'dave', 405, now())`)

	p := func(s string) *string { return &s }
	bt := func(id string) fairshare.Unit { return fairshare.Unit{Kind: fairshare.Backtest, Task: id} }
	job := func(id int64) fairshare.Unit { return fairshare.Unit{Kind: fairshare.Study, Job: id} }
	tests := []struct {
		name    string
		owner   *string
		unit    fairshare.Unit
		limit   int
		units   int  // running, as CountOwnerUnits says
		waiting int  // backtests waiting, as CountOwnerUnits says
		busy    bool // what Admit says under limit
	}{
		{"alice's waiting backtest counts 2 tasks and 3 study jobs", p("alice"), bt("task_3"), 5, 5, 0, true},
		{"alice under a higher limit", p("alice"), bt("task_3"), 6, 5, 0, false},
		{"alice's running backtest leaves itself out", p("alice"), bt("task_1"), 5, 4, 1, false},
		{"alice's batch leaves itself out but waits for her backtest", p("alice"), job(102), 6, 4, 1, true},
		{"alice's new batch", p("alice"), job(104), 5, 5, 1, true},
		{"bob: his task and his batch", p("bob"), bt("task_7"), 2, 2, 0, true},
		{"bob's batch below his limit", p("bob"), job(202), 3, 2, 0, false},
		{"carol's running price-path job counts, not the stale, pending or completed ones", p("carol"), bt("task_8"), 1, 1, 0, true},
		{"carol's price-path job below her limit", p("carol"), job(406), 2, 1, 0, false},
		{"carol's running price-path job leaves itself out", p("carol"), job(401), 1, 0, 0, false},
		{"carol's stale job starting again", p("carol"), job(402), 1, 1, 0, true},
		{"erin runs nothing", p("erin"), bt("task_8"), 1, 0, 0, false},
		{"no limit", p("alice"), job(105), 0, 5, 1, false},
		{"nobody's work is not limited", nil, job(303), 1, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.owner != nil {
				n, err := st.Queries.CountOwnerUnits(ctx, st.Pool, store.CountOwnerUnitsParams{Owner: tt.owner, TaskID: tt.unit.Task, JobID: tt.unit.Job,
					PathsStaleSecs: fairshare.PathsStale.Seconds()})
				if err != nil {
					t.Fatal(err)
				}
				if int(n.Units) != tt.units || int(n.WaitingBacktests) != tt.waiting {
					t.Errorf("CountOwnerUnits = %+v, want %d running and %d waiting", n, tt.units, tt.waiting)
				}
			}
			err := st.WithTx(ctx, func(tx pgx.Tx) error {
				return fairshare.Admit(ctx, tx, st.Queries, tt.limit, tt.owner, tt.unit)
			})
			if busy := errors.Is(err, fairshare.ErrBusy); busy != tt.busy || (err != nil && !busy) {
				t.Errorf("Admit = %v, want busy %v", err, tt.busy)
			}
		})
	}
}

// TestAdmitSerialisesAnOwner: while one transaction has admitted an owner's unit (and not
// yet committed the running mark), another admission of the same owner waits for it and
// then counts it; another owner's does not wait.
func TestAdmitSerialisesAnOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	for _, sql := range []string{
		`INSERT INTO users (name, role, password_hash) VALUES ('alice', 'researcher', 'x'), ('bob', 'researcher', 'x')`,
		`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'S', 1)`,
		`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash) VALUES ('str_1', 1, 'S', 'x', 'S', '[]', 'api', 'h')`,
		`INSERT INTO studies (id, strategy_id, strategy_version, data_source, symbols, timeframe, timezone, start_date,
			end_date, initial_cash, commission, space, method, objective, direction, blocks, total, created_by)
			VALUES ('study_1', 'str_1', 1, 'src', '{AAA}', '1d', 'UTC', '2020-01-01', '2020-12-31', 10000, 0, '{}',
			'grid', 'sharpe_ratio', 'max', 16, 10, 'alice')`,
	} {
		if _, err := st.Pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := "alice", "bob"
	first, err := st.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx) //nolint:errcheck
	if err := fairshare.Admit(ctx, first, st.Queries, 1, &alice, fairshare.Unit{Kind: fairshare.Study, Job: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Exec(ctx, `INSERT INTO study_batches (job_id, study_id, trials, lease, worker) VALUES (1, 'study_1', '{0}', 1, 'w')`); err != nil {
		t.Fatal(err)
	}
	// bob is not held up by alice's lock.
	if err := st.WithTx(ctx, func(tx pgx.Tx) error {
		return fairshare.Admit(ctx, tx, st.Queries, 1, &bob, fairshare.Unit{Kind: fairshare.Study, Job: 2})
	}); err != nil {
		t.Fatalf("bob: %v", err)
	}
	second := make(chan error, 1)
	go func() {
		second <- st.WithTx(ctx, func(tx pgx.Tx) error {
			return fairshare.Admit(ctx, tx, st.Queries, 1, &alice, fairshare.Unit{Kind: fairshare.Study, Job: 3})
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("alice's second admission did not wait for the first: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; !errors.Is(err, fairshare.ErrBusy) {
		t.Fatalf("alice's second admission after the first committed: %v, want ErrBusy", err)
	}
}
