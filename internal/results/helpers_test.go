package results_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
)

// repoPath returns a path relative to the repository root.
func repoPath(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(append([]string{root}, parts...)...)
}

// referencePath is a file of the backtrader reference fixtures.
func referencePath(t testing.TB, parts ...string) string {
	t.Helper()
	return reftest.Path(t, parts...)
}

type testBundle struct {
	ctx   context.Context
	store *store.Store
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &testBundle{ctx: ctx, store: st}
}

func (b *testBundle) pool() *pgxpool.Pool { return b.store.Pool }

// exec runs fixture SQL for rows owned by other packages (strategies, tasks, bars).
func (b *testBundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := b.store.Pool.Exec(b.ctx, sql, args...); err != nil {
		t.Fatalf("fixture %q: %v", sql, err)
	}
}

// task inserts a strategy version (once) and a task row in the given status.
func (b *testBundle) task(t testing.TB, id, status, symbol string, start, end time.Time, cash float64, params string) {
	t.Helper()
	if err := marketdata.EnsureBuiltin(b.ctx, b.store, false); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `INSERT INTO symbols (source, symbol, name) VALUES ('builtin', $1, $1) ON CONFLICT DO NOTHING`, symbol)
	b.exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'SmaCross', 1) ON CONFLICT DO NOTHING`)
	b.exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash)
		VALUES ('str_1', 1, 'SmaCross', 'x', 'SmaCross', 'api', 'h') ON CONFLICT DO NOTHING`)
	if params == "" || params == "null" {
		params = "{}"
	}
	b.exec(t, `INSERT INTO tasks (id, strategy_id, strategy_version, status, data_source, symbol, start_date, end_date,
		initial_cash, commission, strategy_params, session_id)
		VALUES ($1, 'str_1', 1, $2, 'builtin', $3, $4, $5, $6, 0.001, $7::jsonb, 's')`,
		id, status, symbol, start, end, cash, params)
}

// bars imports bars for symbol into the built-in source.
func (b *testBundle) bars(t testing.TB, symbol string, bars []engine.Bar) {
	t.Helper()
	if err := marketdata.EnsureBuiltin(b.ctx, b.store, false); err != nil {
		t.Fatal(err)
	}
	if _, err := marketdata.NewService(b.store, nil).Import(b.ctx, "builtin", symbol, "", "1d", bars); err != nil {
		t.Fatal(err)
	}
}

// completed stores a real run of the SMA crossover over bars as task id's result.
func (b *testBundle) completed(t testing.TB, id, symbol string, bars []engine.Bar, params map[string]any) *engine.Result {
	t.Helper()
	res := runSMA(t, bars, params, 10000)
	pj, _ := json.Marshal(params)
	b.task(t, id, "completed", symbol, bars[0].Time, bars[len(bars)-1].Time, 10000, string(pj))
	if err := results.Save(b.ctx, b.store.Pool, id, 1, res); err != nil {
		t.Fatal(err)
	}
	return res
}

var (
	orclOnce sync.Once
	orclBars []engine.Bar
	orclErr  error
)

func loadOrcl(t testing.TB) []engine.Bar {
	p := referencePath(t, "data", "orcl.csv")
	orclOnce.Do(func() {
		f, err := os.Open(p)
		if err != nil {
			orclErr = err
			return
		}
		defer f.Close()
		orclBars, orclErr = barcsv.Parse(f)
	})
	if orclErr != nil {
		t.Fatal(orclErr)
	}
	return orclBars
}

func smaCrossCode(t testing.TB) string {
	b, err := os.ReadFile(repoPath("examples", "sma_cross.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runSMA runs the SMA-crossover example over bars: a real run to store.
func runSMA(t testing.TB, bars []engine.Bar, params map[string]any, cash float64) *engine.Result {
	t.Helper()
	res, err := jsrt.Run(context.Background(), jsrt.RunConfig{
		Code: smaCrossCode(t), Params: params, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}},
		Cash: cash, Commission: 0.001,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
