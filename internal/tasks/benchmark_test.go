package tasks_test

import (
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/tasks"
)

// independentBenchmark computes the benchmark statistics of an equity curve against buying
// bench with cash at its first close, written apart from the engine's code: raw sums
// instead of centred moments, and its own search for the close at or before each point.
func independentBenchmark(cash float64, equity []engine.EquityPoint, bench []engine.Bar, perYear float64) map[string]float64 {
	var r, b []float64
	prevV, prevB := cash, cash
	var lastB float64
	for _, p := range equity {
		rt := p.Value/prevV - 1
		prevV = p.Value
		k := sort.Search(len(bench), func(i int) bool { return bench[i].Time.After(p.Time) }) - 1
		if k < 0 {
			continue
		}
		v := cash * bench[k].Close / bench[0].Close
		r, b = append(r, rt), append(b, v/prevB-1)
		prevB, lastB = v, v
	}
	n := float64(len(r))
	var sr, sb, srr, sbb, srb, se, see float64
	for i := range r {
		sr += r[i]
		sb += b[i]
		srr += r[i] * r[i]
		sbb += b[i] * b[i]
		srb += r[i] * b[i]
		e := r[i] - b[i]
		se += e
		see += e * e
	}
	beta := (n*srb - sr*sb) / (n*sbb - sb*sb)
	teBar := math.Sqrt(see/n - (se/n)*(se/n))
	return map[string]float64{
		"benchmark_return":  lastB/cash - 1,
		"beta":              beta,
		"alpha":             (sr/n - beta*sb/n) * perYear,
		"correlation":       (n*srb - sr*sb) / math.Sqrt((n*srr-sr*sr)*(n*sbb-sb*sb)),
		"tracking_error":    teBar * math.Sqrt(perYear),
		"information_ratio": se / n / teBar * math.Sqrt(perYear),
	}
}

// TestBenchmarkStatistics runs a task on ORCL measured against NVDA through the queue and
// checks the benchmark statistics against an independent computation, the equity chart's
// dashed line, the comparison view and bi_results; and that a task's default benchmark is
// its first feed.
func TestBenchmarkStatistics(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{workers: 2})
	md := marketdata.NewService(b.store, nil)
	nvda := readRef(t, "nvda.csv")
	for sym, bars := range map[string][]engine.Bar{"ORCL": readRef(t, "orcl.csv"), "NVDA": nvda} {
		if _, err := md.Import(b.ctx, "testsrc", sym, "", "1d", time.UTC, bars); err != nil {
			t.Fatal(err)
		}
	}
	r := req(b.strategy(t, smaCross))
	r.Symbol, r.StartDate, r.EndDate = sp("ORCL"), sp("2004-01-01"), sp("2012-12-31")
	r.Benchmark = sp("NVDA")
	against := b.create(t, r)
	r.Benchmark = nil
	own := b.create(t, r)
	if against.Benchmark != "NVDA" || own.Benchmark != "ORCL" {
		t.Fatalf("benchmarks recorded %q and %q, want NVDA and the first feed ORCL", against.Benchmark, own.Benchmark)
	}
	for _, id := range []string{against.TaskID, own.TaskID} {
		if got := b.wait(t, id, tasks.StatusCompleted, tasks.StatusFailed); got.Status != tasks.StatusCompleted {
			t.Fatalf("task %s: %v", got.Status, got.Error)
		}
	}
	rs := results.NewService(b.store.Pool)
	stored, err := rs.Load(b.ctx, against.TaskID, results.EquityValues)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := rs.Statistics(b.ctx, against.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	bench := inRange(nvda, time.Date(2004, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC))
	want := independentBenchmark(10000, stored.Equity, bench, 252)
	for key, w := range want {
		m := stats.Get(key)
		if m == nil || m.Value == nil {
			t.Errorf("statistic %s missing: %+v", key, m)
			continue
		}
		if math.Abs(*m.Value-w) > 6e-5 { // stored rounded to 4 places
			t.Errorf("%s = %v, independent computation %v", key, *m.Value, w)
		}
		if !strings.Contains(m.Explanation, "NVDA") {
			t.Errorf("%s explanation does not name the benchmark: %q", key, m.Explanation)
		}
	}
	if c := want["correlation"]; c <= 0.05 || c >= 0.95 || want["beta"] == 0 {
		t.Errorf("correlation %v, beta %v: want a strategy partly moving with its benchmark", c, want["beta"])
	}
	ownStats, err := rs.Statistics(b.ctx, own.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if m := ownStats.Get("benchmark_return"); m == nil || m.Value == nil || *m.Value == *stats.Get("benchmark_return").Value {
		t.Errorf("benchmark return against ORCL %+v: want ORCL's own, not NVDA's", m)
	}

	// The equity chart's dashed line is NVDA bought and held.
	rep := report.New(rs, md.Bars)
	c, err := rep.Chart(b.ctx, against.TaskID, "equity", "", report.View{})
	if err != nil {
		t.Fatal(err)
	}
	line := c.Series[1]
	if line["name"] != "Benchmark: NVDA (buy & hold)" {
		t.Errorf("benchmark line named %v", line["name"])
	}
	wantLast := 10000 * bench[len(bench)-1].Close / bench[0].Close
	if got := string(c.AppendJSON(nil)); !strings.Contains(got, `"Benchmark: NVDA (buy & hold)"`) {
		t.Errorf("chart JSON lacks the benchmark's name")
	}
	data := reflect.ValueOf(line["data"])
	if data.Len() != len(stored.Equity) {
		t.Fatalf("benchmark line of %d points for %d equity points", data.Len(), len(stored.Equity))
	}
	if last := data.Index(data.Len() - 1); last.IsNil() || math.Abs(last.Elem().Float()-wantLast) > 1e-6 {
		t.Errorf("benchmark line ends at %v, want NVDA bought and held: %v", last, wantLast)
	}

	// The comparison shows each task's benchmark and its figures.
	cmp, err := rep.Compare(b.ctx, []string{against.TaskID, own.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Tasks[0].Benchmark != "NVDA" || cmp.Tasks[1].Benchmark != "ORCL" {
		t.Errorf("compared benchmarks %s, %s", cmp.Tasks[0].Benchmark, cmp.Tasks[1].Benchmark)
	}
	seen := 0
	for _, m := range cmp.Metrics {
		if w, ok := want[m.Key]; ok {
			seen++
			if m.Values[0] == nil || math.Abs(*m.Values[0]-w) > 6e-5 || m.Values[1] == nil {
				t.Errorf("compared %s: %v, want %v and a value for the second task", m.Key, m.Values, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("the comparison shows %d of the %d benchmark metrics", seen, len(want))
	}
	if !strings.Contains(cmp.CSV(), "benchmark,NVDA,ORCL") {
		t.Errorf("comparison CSV lacks the benchmark row")
	}

	var biBench string
	var biBeta float64
	if err := b.store.Pool.QueryRow(b.ctx, `SELECT benchmark, beta FROM bi_results WHERE task_id = $1`, against.TaskID).Scan(&biBench, &biBeta); err != nil ||
		biBench != "NVDA" || math.Abs(biBeta-want["beta"]) > 6e-5 {
		t.Errorf("bi_results benchmark %q beta %v (%v), want NVDA %v", biBench, biBeta, err, want["beta"])
	}
	// The benchmark figures are columns of results, set from the statistics record: the
	// same values the record holds.
	var differ, set int
	if err := b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FILTER (WHERE f.col IS DISTINCT FROM f.rec), count(f.col)
		FROM results r JOIN result_statistics st USING (task_id)
		CROSS JOIN LATERAL (VALUES (r.alpha, 'alpha'), (r.beta, 'beta'), (r.correlation, 'correlation'),
			(r.tracking_error, 'tracking_error'), (r.information_ratio, 'information_ratio'), (r.benchmark_return, 'benchmark_return')) AS v(col, k)
		CROSS JOIN LATERAL (SELECT v.col, (jsonb_path_query_first(st.record, '$.groups[*].metrics[*] ? (@.key == $k).value',
			jsonb_build_object('k', v.k)) #>> '{}')::float8 AS rec) f
		WHERE r.task_id = $1`, against.TaskID).Scan(&differ, &set); err != nil || differ != 0 || set != 6 {
		t.Errorf("benchmark columns of results: %d differ from the record, %d of 6 set (%v)", differ, set, err)
	}
}

func TestBenchmarkValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	id := b.strategy(t, smaCross)
	for _, tc := range []struct{ bench, detail string }{
		{"ZZZ", "Unknown benchmark ZZZ in data source testsrc"},
		{"BBB", "No data for BBB in data source testsrc between 1970-01-01 and 1983-12-31"},
	} {
		r := req(id)
		r.Benchmark = sp(tc.bench)
		_, err := b.svc.Create(b.ctx, r)
		apiErr(t, err, apperr.KindInvalid, tc.detail)
	}
	r := req(id)
	r.Benchmark = sp(" AAA ")
	if task := b.create(t, r); task.Benchmark != "AAA" {
		t.Errorf("benchmark %q, want AAA", task.Benchmark)
	}
}
