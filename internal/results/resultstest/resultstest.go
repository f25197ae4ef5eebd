// Package resultstest stores real backtest results in a fresh test database, for the tests
// of the packages that read them (results and report). Each Setup owns its own database, so
// parallel tests share nothing.
package resultstest

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/reftest"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/store"
)

// Bundle is one test's database.
type Bundle struct {
	Ctx   context.Context
	Store *store.Store
}

// Setup opens a new migrated database for t.
func Setup(t testing.TB) *Bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &Bundle{Ctx: ctx, Store: st}
}

// Results is a results.Service over the bundle's database.
func (b *Bundle) Results() *results.Service { return results.NewService(b.Store.Pool) }

// Exec runs fixture SQL for rows owned by other packages (strategies, tasks, bars).
func (b *Bundle) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := b.Store.Pool.Exec(b.Ctx, sql, args...); err != nil {
		t.Fatalf("fixture %q: %v", sql, err)
	}
}

// Task inserts a strategy version (once) and a task row in the given status.
func (b *Bundle) Task(t testing.TB, id, status, symbol string, start, end time.Time, cash float64, params string) {
	t.Helper()
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, `INSERT INTO symbols (source, symbol, name) VALUES ('builtin', $1, $1) ON CONFLICT DO NOTHING`, symbol)
	b.Exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'SmaCross', 1) ON CONFLICT DO NOTHING`)
	b.Exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash)
		VALUES ('str_1', 1, 'SmaCross', 'x', 'SmaCross', 'api', 'h') ON CONFLICT DO NOTHING`)
	if params == "" || params == "null" {
		params = "{}"
	}
	b.Exec(t, `INSERT INTO tasks (id, strategy_id, strategy_version, status, data_source, symbol, symbols, benchmark, start_date, end_date,
		initial_cash, commission, strategy_params, session_id)
		VALUES ($1, 'str_1', 1, $2, 'builtin', $3, ARRAY[$3::text], $3, $4, $5, $6, 0.001, $7::jsonb, 's')`,
		id, status, symbol, start, end, cash, params)
}

// Bars imports bars for symbol into the built-in source.
func (b *Bundle) Bars(t testing.TB, symbol string, bars []engine.Bar) {
	t.Helper()
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	if _, err := marketdata.NewService(b.Store, nil).Import(b.Ctx, "builtin", symbol, "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
}

// Completed stores a real run of the SMA crossover over bars as task id's result.
func (b *Bundle) Completed(t testing.TB, id, symbol string, bars []engine.Bar, params map[string]any) *engine.Result {
	t.Helper()
	res := RunSMA(t, bars, params, 10000)
	pj, _ := json.Marshal(params)
	b.Task(t, id, "completed", symbol, bars[0].Time, bars[len(bars)-1].Time, 10000, string(pj))
	bench := &engine.Benchmark{Symbol: symbol, Values: engine.BuyAndHold(10000, bars, res.Equity)}
	if err := results.Save(b.Ctx, b.Store.Pool, id, 1, res, bench); err != nil {
		t.Fatal(err)
	}
	return res
}

// SmallRun stores a real SMA-crossover run over 800 generated daily bars (about 2.2
// years) as task_1 in a new database.
func SmallRun(t testing.TB) (*Bundle, []engine.Bar, *engine.Result) {
	t.Helper()
	b := Setup(t)
	bars := engine.RandomWalk(800, 7)
	b.Bars(t, "RW", bars)
	res := b.Completed(t, "task_1", "RW", bars, map[string]any{"fast": 5, "slow": 20, "size": 10})
	if len(res.Executions) < 4 {
		t.Fatalf("the run made only %d executions", len(res.Executions))
	}
	return b, bars, res
}

// BenchResult stores a real 10,000-bar run as task_1 in a new database: the size of the
// chart and statistics targets.
func BenchResult(t testing.TB) *Bundle {
	b := Setup(t)
	bars := engine.RandomWalk(10000, 11)
	b.Bars(t, "RW", bars)
	b.Completed(t, "task_1", "RW", bars, map[string]any{"fast": 10, "slow": 30, "size": 10})
	return b
}

var (
	orclOnce sync.Once
	orclBars []engine.Bar
	orclErr  error
)

// Orcl is the reference ORCL daily bars (read once per test binary; callers must not
// change them).
func Orcl(t testing.TB) []engine.Bar {
	p := reftest.Path(t, "data", "orcl.csv")
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

// RunSMA runs the SMA-crossover example over bars: a real run to store.
func RunSMA(t testing.TB, bars []engine.Bar, params map[string]any, cash float64) *engine.Result {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	code, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "sma_cross.js"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := jsrt.Run(context.Background(), jsrt.RunConfig{
		Code: string(code), Params: params, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}},
		Cash: cash, Commission: 0.001,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// CheckNotFound runs reads for an unknown task and for a running one (no result yet); each
// read must answer the not-found apperr "Result not found: <id>".
func CheckNotFound(t *testing.T, reads func(b *Bundle, id string) []error) {
	t.Helper()
	b := Setup(t)
	b.Task(t, "task_9", "running", "X", time.Now(), time.Now(), 10000, "")
	for _, id := range []string{"task_404", "task_9"} {
		want := "Result not found: " + id
		for i, err := range reads(b, id) {
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindNotFound || e.Detail != want {
				t.Errorf("%s read %d: %v", id, i+1, err)
			}
		}
	}
}

// Detail is err's public detail, or "internal: …" for an error that is not an apperr.
func Detail(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Detail
	}
	if err == nil {
		return ""
	}
	return "internal: " + err.Error()
}

// FiveMinuteWalk is engine.RandomWalk(n, seed) as five-minute bars from start.
func FiveMinuteWalk(n int, seed uint64, start time.Time) []engine.Bar {
	bars := engine.RandomWalk(n, seed)
	for i := range bars {
		bars[i].Time = start.Add(time.Duration(i) * 5 * time.Minute)
	}
	return bars
}

// Near reports whether a and b agree to 1e-9 relative.
func Near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
