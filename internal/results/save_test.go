package results_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

func TestSaveStoresEveryTableAndReplaces(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.Orcl(t)
	res := resultstest.RunSMA(t, bars, nil, 10000)
	res.Trades[1].TradeID = 7
	b.Task(t, "task_1", "completed", "ORCL", bars[0].Time, bars[len(bars)-1].Time, 10000, "")

	for round := 1; round <= 2; round++ { // the second Save replaces the first
		tx, err := b.Store.Pool.Begin(b.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := results.Save(b.Ctx, tx, "task_1", round, res, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := tx.Commit(b.Ctx); err != nil {
			t.Fatal(err)
		}
		var nExec, nTrades, nEq, nOpen, attempt int
		var final float64
		err = b.Store.Pool.QueryRow(b.Ctx, `SELECT
			(SELECT count(*) FROM result_executions WHERE task_id = 'task_1'),
			(SELECT count(*) FROM result_trades WHERE task_id = 'task_1'),
			(SELECT count(*) FROM result_equity WHERE task_id = 'task_1'),
			(SELECT count(*) FROM result_trades WHERE task_id = 'task_1' AND is_open),
			(SELECT attempt FROM results WHERE task_id = 'task_1'),
			(SELECT final_value FROM results WHERE task_id = 'task_1')`).Scan(&nExec, &nTrades, &nEq, &nOpen, &attempt, &final)
		if err != nil {
			t.Fatal(err)
		}
		if nExec != len(res.Executions) || nTrades != len(res.Trades) || nEq != len(bars) {
			t.Errorf("round %d: stored %d executions, %d trades, %d equity; want %d, %d, %d",
				round, nExec, nTrades, nEq, len(res.Executions), len(res.Trades), len(bars))
		}
		if nOpen != 1 || attempt != round || final != res.FinalValue {
			t.Errorf("round %d: open trades %d (want 1), attempt %d, final %v (want %v)", round, nOpen, attempt, final, res.FinalValue)
		}
	}
	page, err := b.Results().Trades(b.Ctx, "task_1", results.KindRoundTrips, 0, 3)
	if trips, _ := page.Trades.([]results.RoundTrip); err != nil || len(trips) != 3 || trips[0].TradeID != 0 || trips[1].TradeID != 7 {
		t.Errorf("round trips keep the tradeid: %+v, %v", page.Trades, err)
	}
	var viewRows int
	// bi_results reads the strategy, version and symbol from results (set from the task as
	// the result is stored): they are the task's.
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM bi_results r JOIN tasks t ON t.id = r.task_id
		WHERE r.task_id = 'task_1' AND r.strategy_name = 'SmaCross' AND r.strategy_id = t.strategy_id
		  AND r.strategy_version = t.strategy_version AND r.symbol = t.symbol`).Scan(&viewRows); err != nil || viewRows != 1 {
		t.Errorf("bi_results: %d rows, %v", viewRows, err)
	}
	// Returns and drawdowns are stored as values only: what the service reads back and what
	// bi_equity shows are the run's own, to the bit.
	stored, err := b.Results().Load(b.Ctx, "task_1", results.EquityFull)
	if err != nil || len(stored.Equity) != len(res.Equity) {
		t.Fatalf("load: %d points, %v", len(stored.Equity), err)
	}
	rows, err := b.Store.Pool.Query(b.Ctx, `SELECT value, cash, ret, drawdown_pct, drawdown_money FROM bi_equity WHERE task_id = 'task_1' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i, drawdowns := 0, 0
	for ; rows.Next(); i++ {
		var v, c, r, dp, dm float64
		if err := rows.Scan(&v, &c, &r, &dp, &dm); err != nil {
			t.Fatal(err)
		}
		w, got := res.Equity[i], stored.Equity[i]
		if !got.Time.Equal(w.Time) || got.Value != w.Value || got.Cash != w.Cash || got.Return != w.Return ||
			got.Drawdown != w.Drawdown || got.DrawdownMoney != w.DrawdownMoney {
			t.Fatalf("point %d read back %+v, the run had %+v", i, got, w)
		}
		if v != w.Value || c != w.Cash || r != w.Return || dp != w.Drawdown || dm != w.DrawdownMoney {
			t.Fatalf("bi_equity point %d: %v %v %v %v %v, the run had %+v", i, v, c, r, dp, dm, w)
		}
		if dm > 0 {
			drawdowns++
		}
	}
	if i != len(res.Equity) || drawdowns == 0 {
		t.Errorf("bi_equity: %d rows (want %d), %d under a peak", i, len(res.Equity), drawdowns)
	}
}

// TestStoredStatisticsMatchComputed checks that the record Save keeps is the one computed from
// the stored rows (what results stored without a record get), open trade included.
func TestStoredStatisticsMatchComputed(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.Orcl(t)
	res := resultstest.RunSMA(t, bars, nil, 10000)
	b.Task(t, "task_1", "completed", "ORCL", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	for round := 1; round <= 2; round++ {
		tx, err := b.Store.Pool.Begin(b.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := results.Save(b.Ctx, tx, "task_1", round, res, nil); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(b.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM result_statistics WHERE task_id = 'task_1'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored statistics rows: %d %v", n, err)
	}
	stored, err := b.Results().Statistics(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	b.Exec(t, `DELETE FROM result_statistics WHERE task_id = 'task_1'`)
	computed, err := b.Results().Statistics(b.Ctx, "task_1")
	if err != nil {
		t.Fatal(err)
	}
	sj, _ := json.Marshal(stored)
	cj, _ := json.Marshal(computed)
	if string(sj) != string(cj) {
		t.Errorf("stored record differs from the computed one:\nstored   %s\ncomputed %s", sj, cj)
	}
	if m := stored.Get("total_trades"); m == nil || m.Value == nil {
		t.Errorf("stored record lacks total_trades: %s", sj)
	}
	b.Exec(t, `DELETE FROM results WHERE task_id = 'task_1'`)
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM result_statistics`).Scan(&n); err != nil || n != 0 {
		t.Errorf("statistics rows after the result was deleted: %d %v", n, err)
	}
	if _, err := b.Results().Statistics(b.Ctx, "task_1"); err == nil {
		t.Error("statistics of a deleted result")
	}
}

// TestSymbolsOfResultsStoredBefore checks the breakdown of a result stored without one (as
// before breakdowns were kept): one row derived from the stored summary and rows, equal to
// what the engine gives for the run.
func TestSymbolsOfResultsStoredBefore(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.Orcl(t)
	res := resultstest.RunSMA(t, bars, nil, 10000)
	b.Task(t, "task_1", "completed", "ORCL", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
	tx, err := b.Store.Pool.Begin(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Save(b.Ctx, tx, "task_1", 1, res, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(b.Ctx); err != nil {
		t.Fatal(err)
	}
	stored, err := b.Results().Symbols(b.Ctx, "task_1")
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored breakdown %+v, %v", stored, err)
	}
	if _, err := b.Store.Pool.Exec(b.Ctx, `UPDATE results SET by_symbol = '[]'`); err != nil {
		t.Fatal(err)
	}
	derived, err := b.Results().Symbols(b.Ctx, "task_1")
	if err != nil || len(derived) != 1 {
		t.Fatalf("derived breakdown %+v, %v", derived, err)
	}
	s, d := stored[0], derived[0]
	if d.Symbol != "ORCL" || d.Trades != s.Trades || d.Won != s.Won || d.Lost != s.Lost || d.OpenTrades != s.OpenTrades ||
		d.Executions != s.Executions || math.Abs(d.PnL-s.PnL) > 1e-6 || math.Abs(d.Commission-s.Commission) > 1e-9 ||
		math.Abs(d.PnLClosed-s.PnLClosed) > 1e-9 || d.Exposure <= 0 || d.Exposure > 1 {
		t.Errorf("derived %+v, engine's %+v", d, s)
	}
}

// TestEquityTimeStepsRoundTrip: equity times are stored as the first and the steps between
// them; reading them back gives the same instants to the microsecond, across decades, daylight
// saving changes (the session's zone), sub-second times, gaps and repeated times.
func TestEquityTimeStepsRoundTrip(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	for _, zone := range []string{"UTC", "America/New_York", "Australia/Lord_Howe"} {
		var same bool
		var n int
		err := b.Store.Pool.QueryRow(b.Ctx, `SELECT set_config('TimeZone', $1, false) IS NOT NULL`, zone).Scan(&same)
		if err != nil {
			t.Fatal(err)
		}
		err = b.Store.Pool.QueryRow(b.Ctx, `WITH s AS (
			SELECT array_agg(t ORDER BY g) AS ts FROM (
				SELECT g, timestamptz '1990-03-10 23:59:59.999999+00' + g * interval '37 hours 13 minutes 0.000123 seconds' AS t
				FROM generate_series(0, 9000) g
				UNION ALL SELECT 9001, timestamptz '2030-01-01 00:00:00.5+00'
				UNION ALL SELECT 9002, timestamptz '2030-01-01 00:00:00.5+00') x)
			SELECT equity_times(ts[1], equity_steps(ts)) = ts, cardinality(ts) FROM s`).Scan(&same, &n)
		if err != nil || !same || n != 9003 {
			t.Errorf("zone %s: %d times read back the same: %v (%v)", zone, n, same, err)
		}
	}
	var empty []string
	if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT equity_times(NULL, equity_steps('{}'))::text[]`).Scan(&empty); err != nil || len(empty) != 0 {
		t.Errorf("an empty series: %v %v", empty, err)
	}
}

// The analyzers read back are the run's to the bit, whether their PyFolio positions were
// kept beside the equity curve and their transactions derived from the stored fills (as
// Save does) or both kept in the document (results stored before that, or positions whose
// cash is not the curve's).
func TestAnalyzersReadBackWithTheirPositions(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	bars := resultstest.Orcl(t)
	res := resultstest.RunSMA(t, bars, nil, 10000)
	want, err := json.Marshal(res.Analyzers)
	if err != nil {
		t.Fatal(err)
	}
	// A result whose positions' cash differs from the curve's keeps them in its document.
	other := *res
	other.Equity = slices.Clone(res.Equity)
	other.Equity[len(other.Equity)-1].Cash += 1
	for _, c := range []struct {
		id       string
		res      *engine.Result
		inSeries bool
	}{{"task_split", res, true}, {"task_kept", &other, false}} {
		b.Task(t, c.id, "completed", "ORCL", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
		tx, err := b.Store.Pool.Begin(b.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := results.Save(b.Ctx, tx, c.id, 1, c.res, nil); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(b.Ctx); err != nil {
			t.Fatal(err)
		}
		var inSeries bool
		var docRows int
		var txType string
		if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT e.positions IS NOT NULL, jsonb_array_length(r.analyzers->'pyfolio'->'positions'),
			jsonb_typeof(r.analyzers->'pyfolio'->'transactions')
			FROM results r JOIN result_equity_series e USING (task_id) WHERE task_id = $1`, c.id).Scan(&inSeries, &docRows, &txType); err != nil {
			t.Fatal(err)
		}
		if inSeries != c.inSeries || (docRows == 0) != c.inSeries || (txType == "null") != c.inSeries {
			t.Errorf("%s: positions beside the curve %v, %d rows and transactions %s in the document; want beside %v", c.id, inSeries, docRows, txType, c.inSeries)
		}
		a, err := b.Results().Analyzers(b.Ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: analyzers read back differ from the run's (%d bytes, want %d)", c.id, len(got), len(want))
		}
		if a.PyFolio.Positions.Len() != len(res.Equity) {
			t.Errorf("%s: %d position rows, want %d", c.id, a.PyFolio.Positions.Len(), len(res.Equity))
		}
	}
}
