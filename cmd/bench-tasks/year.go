package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/pnlmonths"
)

// year fills the service's database with n completed results, as a team accumulates in a
// year, and prints the runs-list, BI and size figures (-only year). It runs `seeds` real
// backtests of 5,000 daily bars through the API (two strategies, varied parameters), then
// clones them in SQL (tasks, attempts, results, trades, executions, equity, statistics,
// logs) until the database holds n results, spread over the past year; one clone in 1,000
// is on a rare symbol. The clones are real rows that the API and the bi_* views read like
// any others. With fill false it only measures a database filled before.
func (b *bench) year(n, seeds, samples int, fill bool) error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, b.db)
	if err != nil {
		return err
	}
	defer pool.Close()
	if fill {
		var have int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&have); err != nil {
			return err
		}
		if have < seeds { // a database filled before is filled further
			if err := b.yearSeed(ctx, pool, seeds); err != nil {
				return err
			}
		}
		if err := yearClone(ctx, pool, n); err != nil {
			return err
		}
	}
	var results int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&results); err != nil {
		return err
	}
	if !fill { // the fill analysed what it wrote
		if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
			return err
		}
	}
	fmt.Printf("year: %d results in the database\n", results)
	if err := b.yearLists(ctx, pool, samples); err != nil {
		return err
	}
	if err := yearBI(ctx, pool); err != nil {
		return err
	}
	return yearSize(ctx, pool, results)
}

// yearSeed runs the real backtests the clones copy.
func (b *bench) yearSeed(ctx context.Context, pool *pgxpool.Pool, seeds int) error {
	var other struct{ ID string }
	if err := b.call("POST", "/api/strategies", map[string]string{"name": "bench-sma-b", "code": strings.Replace(smaCode, "BenchSma", "BenchSmaB", 1)}, &other); err != nil {
		return err
	}
	t0 := time.Now()
	ids := make([]string, 0, seeds)
	for i := range seeds {
		strategy := b.sma
		if i%3 == 2 {
			strategy = other.ID
		}
		id, err := b.submit(strategy, map[string]any{"fast": 3 + i%20, "slow": 25 + (i/20)%15*5})
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	for {
		var pending int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE id = ANY($1) AND status IN ('pending', 'running')`, ids).Scan(&pending); err != nil {
			return err
		}
		if pending == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	fmt.Printf("year: %d real runs of 5,000 daily bars in %s\n", seeds, time.Since(t0).Round(time.Millisecond))
	return nil
}

// cloneTables are the per-result tables cloned with each task, keyed by task_id.
var cloneTables = []string{"task_attempts", "results", "result_statistics", "result_trades", "result_executions", "result_equity_series", "task_log_chunks", "run_provenance"}

// yearClone copies completed tasks and everything stored with them until there are n
// results, cloneBatch per transaction, each table in one INSERT ... SELECT. The seeds' rows
// are read once into temporary tables, so a batch joins its clone map with 300 runs' rows,
// not with the growing tables. The batches run with session_replication_role = replica:
// no foreign-key checks (every clone's parent is inserted first, in the same statement
// order) and no row triggers, whose work is copied with the rows instead (the list figures
// of tasks, the benchmark figures of results); the clones' trades are added to the pnl per
// month as results.Save adds a result's. The clones are the rows the service would
// have written: the API and the bi_* views read them as real.
func yearClone(ctx context.Context, pool *pgxpool.Pool, n int) error {
	const cloneBatch = 50000
	conn, err := pool.Acquire(ctx) // the seeds' temporary tables live in this session
	if err != nil {
		return err
	}
	defer conn.Release()
	tables := []string{"tasks"}
	for _, t := range cloneTables {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t).Scan(&ok); err != nil {
			return err
		}
		if ok {
			tables = append(tables, t)
		}
	}
	cols := map[string]string{}
	for _, t := range tables {
		var c string
		key := "task_id"
		if t == "tasks" {
			key = "id"
		}
		err := conn.QueryRow(ctx, `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = $1 AND column_name NOT IN ($2, 'created_at', 'symbol', 'symbols', 'benchmark', 'id')
			  AND is_generated = 'NEVER'`, t, key).Scan(&c)
		if err != nil {
			return fmt.Errorf("columns of %s: %w", t, err)
		}
		cols[t] = c
	}
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE clone_seeds AS
		WITH real AS (SELECT id FROM tasks WHERE status = 'completed' AND id IN (SELECT task_id FROM results)
		              ORDER BY substr(id, 6)::bigint LIMIT 1000)
		SELECT id, row_number() OVER (ORDER BY id) - 1 AS k, count(*) OVER () AS m FROM real`); err != nil {
		return fmt.Errorf("clone seeds: %w", err)
	}
	for _, t := range tables {
		key := "task_id"
		if t == "tasks" {
			key = "id"
		}
		if _, err := conn.Exec(ctx, `CREATE TEMP TABLE seed_`+t+` AS SELECT * FROM `+t+` WHERE `+key+` IN (SELECT id FROM clone_seeds)`); err != nil {
			return fmt.Errorf("seed rows of %s: %w", t, err)
		}
		if _, err := conn.Exec(ctx, `ANALYZE seed_`+t); err != nil {
			return err
		}
	}
	t0 := time.Now()
	for {
		var have int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&have); err != nil {
			return err
		}
		if have >= n {
			break
		}
		batch := min(cloneBatch, n-have)
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TEMP TABLE clone_map ON COMMIT DROP AS
				SELECT 'task_' || nextval('task_seq') AS new_id, s.id AS src,
				       now() - (random() * interval '365 days') AS created_at,
				       CASE WHEN g % 1000 = 7 THEN 'RARE' || (g % 7) ELSE 'BENCH5K' END AS symbol
				FROM generate_series(1, $1::int) g
				JOIN clone_seeds s ON s.k = g % s.m
				ORDER BY g`, batch); err != nil {
				return fmt.Errorf("clone map: %w", err)
			}
			if _, err := tx.Exec(ctx, `ANALYZE clone_map`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO tasks (id, created_at, symbol, symbols, benchmark, `+cols["tasks"]+`)
				SELECT m.new_id, m.created_at, m.symbol, ARRAY[m.symbol], m.symbol, `+prefixed("t", cols["tasks"])+`
				FROM clone_map m JOIN seed_tasks t ON t.id = m.src`); err != nil {
				return fmt.Errorf("clone tasks: %w", err)
			}
			for _, table := range tables[1:] {
				c := cols[table]
				extra, extraSel := "", ""
				if hasColumn(ctx, tx, table, "created_at") {
					extra, extraSel = ", created_at", ", m.created_at"
				}
				if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (task_id`+extra+`, `+c+`)
					SELECT m.new_id`+extraSel+`, `+prefixed("x", c)+` FROM clone_map m JOIN seed_`+table+` x ON x.task_id = m.src`); err != nil {
					return fmt.Errorf("clone %s: %w", table, err)
				}
			}
			// The clones' trades go into the pnl per month as a stored result's do, a
			// thousand results a statement (each read from result_trades' index).
			var ids []string
			if err := tx.QueryRow(ctx, `SELECT array_agg(new_id ORDER BY new_id) FROM clone_map`).Scan(&ids); err != nil {
				return err
			}
			for len(ids) > 0 {
				k := min(1000, len(ids))
				if err := pnlmonths.Add(ctx, tx, ids[:k]...); err != nil {
					return fmt.Errorf("clone pnl per month: %w", err)
				}
				ids = ids[k:]
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Printf("year: %d results (%s)\n", have+batch, time.Since(t0).Round(time.Second))
	}
	// The list and BI tables are vacuumed (their visibility maps let index-only scans skip
	// the heap) without their TOAST tables, which no list or aggregate reads; the rest is
	// analysed.
	for _, t := range tables {
		q := `ANALYZE ` + t
		switch t {
		case "tasks", "results", "result_statistics", "result_trades", "task_attempts", "run_provenance":
			q = `VACUUM (ANALYZE, PROCESS_TOAST FALSE) ` + t
		}
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	fmt.Printf("year: cloned and vacuumed in %s\n", time.Since(t0).Round(time.Second))
	return nil
}

func hasColumn(ctx context.Context, tx pgx.Tx, table, column string) bool {
	var ok bool
	_ = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2)`, table, column).Scan(&ok)
	return ok
}

func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = alias + "." + p
	}
	return strings.Join(parts, ", ")
}

// yearLists times runs-list pages through the API: every sort in both orders, each filter,
// deep offsets and, when the service gives cursors, the last page reached by following
// them.
func (b *bench) yearLists(ctx context.Context, pool *pgxpool.Pool, samples int) error {
	var strategy string
	if err := pool.QueryRow(ctx, `SELECT strategy_id FROM tasks GROUP BY 1 ORDER BY count(*) LIMIT 1`).Scan(&strategy); err != nil {
		return err
	}
	cases := []string{"", "count=true", "status=completed", "strategy_id=" + strategy, "symbol=BENCH5K", "symbol=RARE3",
		"skip=5000", "skip=50000", "status=failed", "symbol=RARE3&sort=sharpe_ratio"}
	for _, s := range []string{"total_return", "max_drawdown", "sharpe_ratio", "total_trades"} {
		cases = append(cases, "sort="+s, "sort="+s+"&order=asc", "sort="+s+"&skip=5000", "sort="+s+"&strategy_id="+strategy)
	}
	cases = append(cases, "order=asc", "order=asc&skip=5000")
	for _, q := range cases {
		var lat []time.Duration
		var total string
		for range samples {
			t := time.Now()
			resp, err := b.client.Get(b.api + "/api/backtests?limit=20&" + q)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /api/backtests?%s: %d", q, resp.StatusCode)
			}
			lat = append(lat, time.Since(t))
			total = resp.Header.Get("X-Total-Count")
			if c := resp.Header.Get("X-Total-Count-Capped"); c != "" {
				total += " (capped " + c + ")"
			}
		}
		if total != "" {
			total = ", count " + total
		}
		fmt.Printf("year list %-45s %s%s\n", "?"+q, stats(lat), total)
	}
	// Paging to the end by cursor, where the service gives one.
	for _, q := range []string{"", "sort=sharpe_ratio", "symbol=RARE3"} {
		t0 := time.Now()
		pages, rows := 0, 0
		var lat []time.Duration
		next := "limit=200&" + q
		for next != "" && pages < 5000 {
			t := time.Now()
			resp, err := b.client.Get(b.api + "/api/backtests?" + next)
			if err != nil {
				return err
			}
			var page []map[string]any
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil {
				return fmt.Errorf("page %d of ?%s: %w", pages, next, err)
			}
			lat = append(lat, time.Since(t))
			pages++
			rows += len(page)
			c := resp.Header.Get("X-Next-Cursor")
			if c == "" {
				break
			}
			next = "limit=200&" + q + "&cursor=" + url.QueryEscape(c)
		}
		fmt.Printf("year paging ?%-30s %d pages, %d runs in %s; pages %s\n", q, pages, rows, time.Since(t0).Round(time.Millisecond), stats(lat))
	}
	return nil
}

// yearBI times docs/sql.md's queries and aggregates over every result (best of 3 runs and
// the slowest).
func yearBI(ctx context.Context, pool *pgxpool.Pool) error {
	queries := []struct{ name, sql string }{
		{"best Sharpe per strategy version", `SELECT DISTINCT ON (strategy_id, strategy_version)
		       strategy_id, strategy_version, strategy_name, task_id, symbol, sharpe_ratio, total_return
		FROM bi_results WHERE sharpe_ratio IS NOT NULL
		ORDER BY strategy_id, strategy_version, sharpe_ratio DESC`},
		{"realised net pnl per strategy and month", `SELECT strategy_name, month, sum(trades) AS trades, round(sum(pnl_net), 2) AS pnl_net
		FROM bi_pnl_months GROUP BY 1, 2 ORDER BY 1, 2`},
		{"realised net pnl per strategy and month, raw", `SELECT r.strategy_name, date_trunc('month', t.close_ts)::date AS month,
		       count(*) AS trades, round(sum(t.pnl_net)::numeric, 2) AS pnl_net
		FROM bi_trades t JOIN bi_results r USING (task_id)
		WHERE NOT t.is_open GROUP BY 1, 2 ORDER BY 1, 2`},
		{"avg(alpha) over bi_results", `SELECT avg(alpha) FROM bi_results`},
		{"benchmark figures of every result", `SELECT strategy_id, avg(alpha), avg(beta), avg(correlation), avg(tracking_error),
		       avg(information_ratio), avg(benchmark_return), count(*) FROM bi_results GROUP BY 1`},
	}
	for _, q := range queries {
		var best, worst time.Duration
		for i := range 3 {
			t := time.Now()
			rows, err := pool.Query(ctx, q.sql)
			if err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			d := time.Since(t)
			if i == 0 || d < best {
				best = d
			}
			worst = max(worst, d)
		}
		fmt.Printf("year BI %-42s best %s, slowest %s\n", q.name, best.Round(time.Millisecond), worst.Round(time.Millisecond))
	}
	return nil
}

// yearSize prints the bytes the result tables take per stored result.
func yearSize(ctx context.Context, pool *pgxpool.Pool, results int64) error {
	if results == 0 {
		return nil
	}
	var total int64
	for _, t := range append([]string{"tasks"}, cloneTables...) {
		var size int64
		if err := pool.QueryRow(ctx, `SELECT COALESCE(pg_total_relation_size(to_regclass($1)), 0)`, t).Scan(&size); err != nil {
			return err
		}
		total += size
		fmt.Printf("year size %-22s %8.1f MB, %7.1f KB per result\n", t, float64(size)/1e6, float64(size)/1e3/float64(results))
	}
	var db int64
	if err := pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&db); err != nil {
		return err
	}
	fmt.Printf("year size %-22s %8.1f MB, %7.1f KB per result (database %0.1f MB)\n", "all of them", float64(total)/1e6, float64(total)/1e3/float64(results), float64(db)/1e6)
	return nil
}
