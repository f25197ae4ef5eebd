package pnlmonths_test

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/backtestd/backtestd/db"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/pnlmonths"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/tasks"
)

// month is one (strategy, month) figure, from bi_pnl_months or from the raw trades.
type month struct {
	name                           string
	trades, won                    int64
	gross, net, commission, absNet float64
	netExact                       string // the numeric sum, as text
}

// key: the task's strategy, the strategy within the run, the month in the run's time zone.
type key struct {
	strategyID string
	strategy   int16
	month      time.Time
}

func read(t *testing.T, b *resultstest.Bundle, sql string) map[key]month {
	t.Helper()
	rows, err := b.Store.Pool.Query(b.Ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out := map[key]month{}
	for rows.Next() {
		var k key
		var m month
		var name *string
		if err := rows.Scan(&k.strategyID, &name, &k.strategy, &k.month, &m.trades, &m.won, &m.gross, &m.net, &m.commission, &m.absNet, &m.netExact); err != nil {
			t.Fatal(err)
		}
		if name != nil {
			m.name = *name
		}
		out[k] = m
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// check holds bi_pnl_months to the raw aggregation of docs/sql.md (bi_trades joined with
// bi_results, closed trades, grouped by strategy and month in the run's time zone): the
// same rows and counts, float sums within 1e-9 of the sum of absolute pnl (the float8 sum
// in another order differs in the last bits), and the numeric sums equal to the digit.
// It returns the number of months.
func check(t *testing.T, b *resultstest.Bundle, when string) int {
	t.Helper()
	view := read(t, b, `SELECT strategy_id, min(strategy_name), strategy, month, sum(trades)::bigint, sum(won)::bigint,
		       sum(pnl_gross)::float8, sum(pnl_net)::float8, sum(commission)::float8, 0::float8, trim_scale(sum(pnl_net))::text
		FROM bi_pnl_months GROUP BY 1, 3, 4`)
	raw := read(t, b, `SELECT r.strategy_id, min(r.strategy_name), t.strategy, date_trunc('month', t.close_ts AT TIME ZONE r.timezone)::date,
		       count(*), count(*) FILTER (WHERE t.pnl_net >= 0), sum(t.pnl_gross), sum(t.pnl_net), sum(t.commission),
		       sum(abs(t.pnl_net)), trim_scale(sum(t.pnl_net::numeric))::text
		FROM bi_trades t JOIN bi_results r USING (task_id)
		WHERE NOT t.is_open GROUP BY 1, 3, 4`)
	if len(view) != len(raw) {
		t.Errorf("%s: bi_pnl_months has %d months, the trades %d", when, len(view), len(raw))
	}
	for k, want := range raw {
		got, ok := view[k]
		if !ok {
			t.Errorf("%s: %v missing from bi_pnl_months (%d trades)", when, k, want.trades)
			continue
		}
		tol := 1e-9 * math.Max(1, want.absNet)
		if got.name != want.name || got.trades != want.trades || got.won != want.won || got.netExact != want.netExact ||
			math.Abs(got.net-want.net) > tol || math.Abs(got.gross-want.gross) > tol || math.Abs(got.commission-want.commission) > tol {
			t.Errorf("%s: %v: bi_pnl_months %+v, the trades %+v", when, k, got, want)
		}
	}
	return len(raw)
}

// fixture: bars, and a real SMA run stored as each of ids (varied parameters).
func fixture(t *testing.T, ids ...string) (*resultstest.Bundle, []engine.Bar) {
	t.Helper()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(900, 5)
	b.Bars(t, "RW", bars)
	for i, id := range ids {
		b.Completed(t, id, "RW", bars, map[string]any{"fast": 3 + i, "slow": 15 + 2*i, "size": 10})
	}
	return b, bars
}

func TestSavesAndDeletesKeepTheMonthsExact(t *testing.T) {
	t.Parallel()
	b, bars := fixture(t, "task_1", "task_2", "task_3", "task_4")
	if n := check(t, b, "after four saves"); n < 12 {
		t.Fatalf("the runs closed trades in only %d months", n)
	}

	// A second strategy, renamed after its run: the view names it as it is called now.
	b.Exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ('str_2', 'Other', 1)`)
	b.Exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash)
		VALUES ('str_2', 1, 'Other', 'x', 'SmaCross', 'api', 'h2')`)
	b.Task(t, "task_5", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	b.Exec(t, `UPDATE tasks SET strategy_id = 'str_2' WHERE id = 'task_5'`)
	save(t, b, "task_5", resultstest.RunSMA(t, bars, map[string]any{"fast": 4, "slow": 30, "size": 5}, 10000))
	b.Exec(t, `UPDATE strategies SET name = 'Renamed' WHERE id = 'str_2'`)
	check(t, b, "after a second strategy")
	var name string
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT DISTINCT strategy_name FROM bi_pnl_months WHERE strategy_id = 'str_2'`).Scan(&name); err != nil || name != "Renamed" {
		t.Errorf("str_2 is named %q (%v) in bi_pnl_months, want its name now, Renamed", name, err)
	}

	// Saving a task's result again replaces what its first result added.
	save(t, b, "task_2", resultstest.RunSMA(t, bars, map[string]any{"fast": 7, "slow": 40, "size": 3}, 10000))
	check(t, b, "after a result saved again")

	// The delete route.
	svc := tasks.New(tasks.Config{}, b.Store, nil)
	for _, id := range []string{"task_1", "task_5"} {
		if err := svc.Delete(b.Ctx, auth.Local(), id); err != nil {
			t.Fatal(err)
		}
		check(t, b, "after deleting "+id)
	}
	var zero int
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM bi_pnl_months WHERE strategy_id = 'str_2'`).Scan(&zero); err != nil || zero != 0 {
		t.Errorf("str_2's months after its only run was deleted: %d (%v)", zero, err)
	}

	// A prune of every run left.
	rep, err := retention.New(b.Store, nil).Prune(b.Ctx, retention.Options{Before: time.Now().Add(time.Hour), Batch: 2, Force: true})
	if err != nil || rep.Tasks != 3 {
		t.Fatalf("prune: %+v, %v", rep, err)
	}
	if n := check(t, b, "after the prune"); n != 0 {
		t.Errorf("%d months left after every run was pruned", n)
	}
}

func save(t *testing.T, b *resultstest.Bundle, id string, res *engine.Result) {
	t.Helper()
	if err := results.Save(b.Ctx, b.Store.Pool, id, 1, res, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPruneBetweenOtherRuns(t *testing.T) {
	t.Parallel()
	b, _ := fixture(t, "task_1", "task_2", "task_3")
	b.Exec(t, `UPDATE tasks SET created_at = now() - interval '200 days' WHERE id IN ('task_1', 'task_3')`)
	rep, err := retention.New(b.Store, nil).Prune(b.Ctx, retention.Options{Before: time.Now().Add(-180 * 24 * time.Hour)})
	if err != nil || rep.Tasks != 2 {
		t.Fatalf("prune: %+v, %v", rep, err)
	}
	if n := check(t, b, "after pruning two of three runs"); n == 0 {
		t.Error("no months left of the run kept")
	}
}

// A run of several strategies: each strategy's trades are its months, under its class.
func TestSeveralStrategiesAndTimeZones(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := engine.RandomWalk(700, 9)
	b.Bars(t, "RW", bars)
	const code = `
class Longs extends Strategy {
  next() {
    if (this.data.length % 20 === 0) this.buy({ size: 2 });
    else if (this.data.length % 20 === 9) this.sell({ size: 2 });
  }
}
class Shorts extends Strategy {
  next() {
    if (this.data.length % 30 === 3) this.sell({ size: 1 });
    else if (this.data.length % 30 === 17) this.buy({ size: 1 });
  }
}
const strategies = [Longs, Shorts];`
	res, err := jsrt.Run(context.Background(), jsrt.RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "RW", Bars: bars}}, Cash: 10000, Commission: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	closed := map[int]int{}
	for _, tr := range res.Trades {
		if !tr.IsOpen {
			closed[tr.Strategy]++
		}
	}
	if len(res.Strategies) != 2 || closed[0] < 10 || closed[1] < 10 {
		t.Fatalf("%d strategies ran, closing %v trades (%d trades, %d fills)", len(res.Strategies), closed, len(res.Trades), len(res.Executions))
	}
	b.Task(t, "task_1", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	save(t, b, "task_1", res)
	// The same run as if its feed were in Tokyo: a trade closed at 16:00 UTC on the last
	// day of a month closed in the next month there.
	b.Task(t, "task_2", "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	b.Exec(t, `UPDATE tasks SET timezone = 'Asia/Tokyo' WHERE id = 'task_2'`)
	shifted := *res
	shifted.Trades = append([]engine.Trade(nil), res.Trades...)
	for i, tr := range shifted.Trades {
		if tr.CloseTime != nil {
			c := time.Date(tr.CloseTime.Year(), tr.CloseTime.Month()+1, 1, 0, 0, 0, 0, time.UTC).Add(-8 * time.Hour)
			shifted.Trades[i].CloseTime = &c
		}
	}
	save(t, b, "task_2", &shifted)
	check(t, b, "after a run of two strategies")

	classes, err := pgx.CollectRows(mustQuery(t, b, `SELECT DISTINCT strategy, strategy_class FROM bi_pnl_months ORDER BY 1`),
		pgx.RowToStructByPos[struct {
			Strategy int16
			Class    string
		}])
	if err != nil {
		t.Fatal(err)
	}
	if len(classes) != 2 || classes[0].Class != "Longs" || classes[1].Strategy != 1 || classes[1].Class != "Shorts" {
		t.Errorf("the strategies of the run in bi_pnl_months: %+v, want 0 Longs and 1 Shorts", classes)
	}
	var tokyo int
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM result_trades x WHERE x.task_id = 'task_2' AND NOT x.is_open
		AND date_trunc('month', x.close_ts AT TIME ZONE 'Asia/Tokyo') <> date_trunc('month', x.close_ts AT TIME ZONE 'UTC')`).Scan(&tokyo); err != nil || tokyo == 0 {
		t.Fatalf("no trade of the Tokyo run closed in another month there than in UTC (%v)", err)
	}
}

func mustQuery(t *testing.T, b *resultstest.Bundle, sql string) pgx.Rows {
	t.Helper()
	rows, err := b.Store.Pool.Query(b.Ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// Workers completing runs of one strategy at once each add to the same months in their own
// completion transaction: none deadlocks or loses another's sums.
func TestConcurrentSavesOfOneStrategy(t *testing.T) {
	t.Parallel()
	b, bars := fixture(t)
	const n = 12
	runs := make([]*engine.Result, n)
	for i := range n {
		runs[i] = resultstest.RunSMA(t, bars, map[string]any{"fast": 3 + i%5, "slow": 15 + i, "size": 10}, 10000)
		b.Task(t, fmt.Sprintf("task_%d", i+1), "completed", "RW", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pgx.BeginFunc(b.Ctx, b.Store.Pool, func(tx pgx.Tx) error {
				if err := results.Save(b.Ctx, tx, fmt.Sprintf("task_%d", i+1), 1, runs[i], nil); err != nil {
					return err
				}
				// Hold the months' rows a moment, as a completion transaction does.
				_, err := tx.Exec(b.Ctx, `SELECT pg_sleep(0.05)`)
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	check(t, b, "after concurrent saves")
}

// Migration 00085 fills pnl_months from the results stored before it.
func TestMigrationBackfills(t *testing.T) {
	t.Parallel()
	b, _ := fixture(t, "task_1", "task_2", "task_3")
	migrations, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDB(*b.Store.Pool.Config().ConnConfig)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations)
	if err != nil {
		t.Fatal(err)
	}
	// Down drops the table and the view; Up makes them again from result_trades.
	for _, up := range []bool{false, true} {
		if _, err := p.ApplyVersion(b.Ctx, 85, up); err != nil {
			t.Fatal(err)
		}
	}
	if n := check(t, b, "after the migration"); n < 12 {
		t.Fatalf("the migration filled %d months", n)
	}
}

// A result's trades added on one connection (one shard of the months) and removed on
// another leave every month's sums right.
func TestRemovedOnAnotherConnection(t *testing.T) {
	t.Parallel()
	b, _ := fixture(t, "task_1", "task_2")
	c1, err := b.Store.Pool.Acquire(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Release()
	// Another connection whose process id is in another shard (held ones are not given
	// again, so the pool opens new ones).
	var c2 *pgxpool.Conn
	for range 6 {
		c, err := b.Store.Pool.Acquire(b.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		if c.Conn().PgConn().PID()%16 != c1.Conn().PgConn().PID()%16 {
			c2 = c
			break
		}
	}
	if c2 == nil {
		t.Fatal("six connections all in the first one's shard")
	}
	// task_1 again on c1's shard, then taken away twice on c2's and added back once: the
	// sums are task_1's and task_2's as before.
	if err := pnlmonths.Add(b.Ctx, c1.Conn(), "task_1"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(context.Context, store.DBTX, ...string) error{pnlmonths.Remove, pnlmonths.Remove, pnlmonths.Add} {
		if err := f(b.Ctx, c2.Conn(), "task_1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := check(t, b, "after adding and removing on two connections"); n == 0 {
		t.Fatal("no months")
	}
	var shards int
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(DISTINCT shard) FROM pnl_months`).Scan(&shards); err != nil || shards < 2 {
		t.Errorf("the months are in %d shards (%v), want the two connections'", shards, err)
	}
}
