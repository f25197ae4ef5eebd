package retention_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results/resultstest"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/internal/store"
)

// fixture: four real completed runs and a running one, two studies, and some log lines.
// task_1, task_2 and study_1 are old; task_3 and study_2 are old but pinned; task_4 is new;
// task_5 is old but still running.
func fixture(t *testing.T) *resultstest.Bundle {
	t.Helper()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(300, 3)
	b.Bars(t, "RW", bars)
	for _, id := range []string{"task_1", "task_2", "task_3", "task_4"} {
		b.Completed(t, id, "RW", bars, map[string]any{"fast": 5, "slow": 20, "size": 10})
	}
	b.Task(t, "task_5", "running", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	b.Exec(t, `INSERT INTO task_log_chunks (task_id, attempt, ts, bar_time, level, source, message)
		SELECT id, 1, ARRAY[now(), now()], ARRAY[NULL, NULL]::timestamptz[], ARRAY['INFO', 'INFO'], ARRAY['strategy', 'strategy'],
		       ARRAY['bought ' || id, 'sold ' || id]
		FROM tasks`)
	b.Exec(t, `UPDATE tasks SET created_at = now() - interval '200 days' WHERE id <> 'task_4'`)
	for _, id := range []string{"study_1", "study_2"} {
		b.Exec(t, `INSERT INTO studies (id, strategy_id, strategy_version, data_source, symbols, timeframe, timezone, start_date, end_date,
			initial_cash, commission, space, method, objective, direction, blocks, status, total, created_at)
			VALUES ($1, 'str_1', 1, 'builtin', ARRAY['RW'], '1d', 'UTC', '2020-01-01', '2021-01-01', 10000, 0, '{"fast":[5,10]}',
			        'grid', 'sharpe_ratio', 'max', 4, 'completed', 2, now() - interval '300 days')`, id)
		b.Exec(t, `INSERT INTO study_trials (study_id, idx, params, status, sharpe_ratio) VALUES ($1, 0, '{"fast":5}', 'completed', 1.5),
			($1, 1, '{"fast":10}', 'completed', 0.5)`, id)
		b.Exec(t, `INSERT INTO study_trial_params (study_id, idx, name, num) VALUES ($1, 0, 'fast', 5), ($1, 1, 'fast', 10)`, id)
	}
	return b
}

func count(t *testing.T, b *resultstest.Bundle, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.Store.Pool.QueryRow(b.Ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestPruneDeletesOldRunsKeepsPinnedExportsFirst(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	svc := retention.New(b.Store, nil)
	if _, err := svc.PinTask(b.Ctx, auth.Local(), "task_3", true); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PinStudy(b.Ctx, auth.Local(), "study_2", true); err != nil {
		t.Fatal(err)
	}
	var finalValue float64
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT final_value FROM results WHERE task_id = 'task_1'`).Scan(&finalValue); err != nil {
		t.Fatal(err)
	}
	trades := count(t, b, `SELECT count(*) FROM result_trades WHERE task_id = 'task_1'`)
	if trades == 0 {
		t.Fatal("the fixture's run made no trades")
	}
	before := time.Now().Add(-180 * 24 * time.Hour)

	dry, err := svc.Prune(b.Ctx, retention.Options{Before: before, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Tasks != 2 || dry.Studies != 1 || count(t, b, `SELECT count(*) FROM tasks`) != 5 {
		t.Fatalf("dry run: %+v, or it deleted something", dry)
	}

	path := filepath.Join(t.TempDir(), "pruned.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Prune(b.Ctx, retention.Options{Before: before, Export: f, Batch: 1, Vacuum: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if rep.Tasks != 2 || rep.Studies != 1 || !rep.Vacuumed {
		t.Fatalf("report %+v, want 2 runs, 1 study, vacuumed", rep)
	}

	for _, tc := range []struct {
		what string
		sql  string
		want int
	}{
		{"tasks left", `SELECT count(*) FROM tasks`, 3},
		{"kept tasks", `SELECT count(*) FROM tasks WHERE id IN ('task_3', 'task_4', 'task_5')`, 3},
		{"results of pruned", `SELECT count(*) FROM results WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"trades of pruned", `SELECT count(*) FROM result_trades WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"executions of pruned", `SELECT count(*) FROM result_executions WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"equity of pruned", `SELECT count(*) FROM result_equity_series WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"statistics of pruned", `SELECT count(*) FROM result_statistics WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"logs of pruned", `SELECT count(*) FROM task_log_chunks WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"attempts of pruned", `SELECT count(*) FROM task_attempts WHERE task_id IN ('task_1', 'task_2')`, 0},
		{"pinned run's result", `SELECT count(*) FROM results WHERE task_id = 'task_3'`, 1},
		{"pinned run's trades", `SELECT count(*) FROM result_trades WHERE task_id = 'task_3'`, trades},
		{"kept logs", `SELECT count(*) FROM task_logs WHERE task_id IN ('task_3', 'task_4', 'task_5')`, 6},
		{"studies left", `SELECT count(*) FROM studies WHERE id = 'study_2'`, 1},
		{"pruned study's rows", `SELECT count(*) FROM study_trials WHERE study_id = 'study_1'`, 0},
		{"pruned study's params", `SELECT count(*) FROM study_trial_params WHERE study_id = 'study_1'`, 0},
		{"pinned study's rows", `SELECT count(*) FROM study_trials WHERE study_id = 'study_2'`, 2},
	} {
		if got := count(t, b, tc.sql); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.want)
		}
	}

	// The export holds what was deleted, one document per line, before it went.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var doc struct {
			Kind string `json:"kind"`
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
			Result *struct {
				FinalValue float64 `json:"final_value"`
			} `json:"result"`
			Trades []json.RawMessage `json:"trades"`
			Equity *struct {
				Value []float64 `json:"value"`
			} `json:"equity"`
			Logs []struct {
				Message string `json:"message"`
			} `json:"logs"`
			Study struct {
				ID string `json:"id"`
			} `json:"study"`
			Trials []json.RawMessage `json:"trials"`
		}
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, doc.Kind+":"+doc.Task.ID+doc.Study.ID)
		switch doc.Kind {
		case "task":
			if doc.Result == nil || doc.Result.FinalValue != finalValue || len(doc.Trades) != trades || doc.Equity == nil ||
				len(doc.Equity.Value) != 300 || len(doc.Logs) != 2 || doc.Logs[0].Message != "bought "+doc.Task.ID {
				t.Errorf("exported run %s is incomplete: %.300s", doc.Task.ID, sc.Text())
			}
		case "study":
			if len(doc.Trials) != 2 {
				t.Errorf("exported study %s has %d combinations, want 2", doc.Study.ID, len(doc.Trials))
			}
		}
	}
	if want := []string{"task:task_1", "task:task_2", "study:study_1"}; !slices.Equal(kinds, want) {
		t.Errorf("export holds %v, want %v", kinds, want)
	}

	// Unpinned, the old run goes with the next prune.
	if _, err := svc.PinTask(b.Ctx, auth.Local(), "task_3", false); err != nil {
		t.Fatal(err)
	}
	if rep, err := svc.Prune(b.Ctx, retention.Options{Before: before}); err != nil || rep.Tasks != 1 || rep.Studies != 0 {
		t.Fatalf("after unpinning: %+v, %v; want task_3 deleted", rep, err)
	}
}

func TestPinUnknown(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	svc := retention.New(b.Store, nil)
	for name, err := range map[string]error{
		"task":  second(svc.PinTask(b.Ctx, auth.Local(), "task_404", true)),
		"study": second(svc.PinStudy(b.Ctx, auth.Local(), "study_404", false)),
	} {
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindNotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, err := svc.Prune(b.Ctx, retention.Options{Before: time.Now(), Vacuum: true, Force: true}); err != nil {
		t.Errorf("prune of an empty database: %v", err)
	}
}

// TestPruneRefusesAnAgeUnderADay: an age under retention.MinAge (1ns, 1e-9d as parsed, 23h)
// deletes nothing and says how to force it, unless forced; a dry run too.
func TestPruneRefusesAnAgeUnderADay(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	svc := retention.New(b.Store, nil)
	before := count(t, b, `SELECT count(*) FROM tasks`)
	for _, tt := range []struct {
		age         time.Duration
		force, dry  bool
		wantRefused bool
	}{
		{time.Nanosecond, false, false, true},
		{time.Duration(1e-9 * float64(24*time.Hour)), false, false, true},
		{23 * time.Hour, false, true, true},
		{retention.MinAge - time.Second, false, false, true},
		{retention.MinAge, false, true, false},
		{time.Nanosecond, true, true, false},
	} {
		err := retention.CheckAge(tt.age, tt.force)
		_, perr := svc.Prune(b.Ctx, retention.Options{Before: time.Now().Add(-tt.age), Force: tt.force, DryRun: tt.dry})
		for _, err := range []error{err, perr} {
			e, ok := apperr.As(err)
			refused := ok && e.Kind == apperr.KindInvalid && strings.Contains(e.Detail, "younger than one day") && strings.Contains(e.Detail, "--force")
			if refused != tt.wantRefused || (!tt.wantRefused && err != nil) {
				t.Errorf("age %v force %v: %v, want refused %v", tt.age, tt.force, err, tt.wantRefused)
			}
		}
	}
	if after := count(t, b, `SELECT count(*) FROM tasks`); after != before {
		t.Errorf("%d runs left of %d: a refused prune deleted some", after, before)
	}
	// Forced, it deletes every finished run, young (task_4) or old; the running one stays.
	rep, err := svc.Prune(b.Ctx, retention.Options{Before: time.Now().Add(-time.Nanosecond), Force: true})
	if err != nil || rep.Tasks != 4 || count(t, b, `SELECT count(*) FROM tasks WHERE id = 'task_5'`) != 1 {
		t.Errorf("forced prune: %+v %v, want the 4 finished runs", rep, err)
	}
}

func second[T any](_ T, err error) error { return err }

// A scheduled prune runs under the retention lock: while another process holds it, it
// prunes nothing (that process prunes the same runs), and once it is free, it prunes. The
// lock's transaction has no transaction id, so it holds VACUUM back from nothing.
func TestScheduledPruneOneAtATime(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	svc := retention.New(b.Store, nil)
	other, err := b.Store.Pool.Begin(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(b.Ctx) //nolint:errcheck
	if err := store.New().TryRetentionLock(b.Ctx, other); err != nil {
		t.Fatal(err)
	}
	var xid *string
	if err := other.QueryRow(b.Ctx, `SELECT backend_xid::text FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&xid); err != nil || xid != nil {
		t.Fatalf("the lock's transaction has id %v (%v)", xid, err)
	}
	age := 180 * 24 * time.Hour
	retention.Scheduled(svc, b.Ctx, age)
	if n := count(t, b, `SELECT count(*) FROM tasks`); n != 5 {
		t.Fatalf("%d tasks left while another process held the lock, want 5", n)
	}
	if err := other.Rollback(b.Ctx); err != nil {
		t.Fatal(err)
	}
	retention.Scheduled(svc, b.Ctx, age)
	if n := count(t, b, `SELECT count(*) FROM tasks`); n != 2 { // task_4 is new, task_5 is running
		t.Fatalf("%d tasks left after the scheduled prune, want 2", n)
	}
}
