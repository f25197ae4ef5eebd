package studies_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tasks"
)

// smaCross is a strategy whose Sharpe ratio depends on both of its periods.
const smaCross = `
class Cross extends Strategy {
  static params = { fast: 10, slow: 30, size: 1 };
  init() { this.f = ind.SMA(this.data.close, this.p.fast); this.s = ind.SMA(this.data.close, this.p.slow); }
  next() {
    if (this.position.size === 0 && this.f[0] > this.s[0]) this.buy({ size: this.p.size });
    else if (this.position.size > 0 && this.f[0] < this.s[0]) this.close();
  }
}`

type bayesBundle struct {
	st   *store.Store
	stud *studies.Service
}

// setupBayes is a database with 500 bars of AAA and strategy str_1 (smaCross), a runner
// pool and River workers running studies.
func setupBayes(t *testing.T) bayesBundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("fixture %q: %v", sql, err)
		}
	}
	exec(`INSERT INTO data_sources (name, description, is_default) VALUES ('testsrc', 'test', true)`)
	exec(`INSERT INTO symbols (source, symbol, name, is_default) VALUES ('testsrc', 'AAA', 'A', true)`)
	bars := engine.RandomWalk(500, 11)
	rows := make([][]any, len(bars))
	for i, x := range bars {
		rows[i] = []any{"testsrc", "AAA", "1d", x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
	}
	if _, err := st.Pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	info, err := jsrt.Inspect(ctx, smaCross)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(info.Params)
	exec(`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'Cross', 1)`)
	exec(`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, params, origin, content_hash)
		VALUES ('str_1', 1, 'Cross', $1, 'Cross', $2, 'api', 'h')`, smaCross, params)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool := runnertest.Pool(t)
	svc := tasks.New(tasks.Config{RunTimeout: 30 * time.Second, Runner: pool}, st, log)
	stud := studies.New(studies.Config{Runner: pool, RunTimeout: 30 * time.Second}, st, svc, log)
	client, err := jobs.NewClient(st.Pool, jobs.Config{Workers: 2, RunTimeout: 30 * time.Second, Logger: log, Register: stud.AddWorker}, svc)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetQueue(client)
	stud.SetQueue(client)
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(c)
	})
	return bayesBundle{st: st, stud: stud}
}

func bayesRequest(samples int, seed int64) studies.Request {
	id, from, to, method, constraint := "str_1", "1970-01-01", "1971-06-01", "bayes", "p.fast < p.slow"
	return studies.Request{
		Request: tasks.Request{StrategyID: &id, StartDate: &from, EndDate: &to},
		Space: map[string]json.RawMessage{
			"fast": json.RawMessage(`{"start": 2, "stop": 60, "step": 1}`),
			"slow": json.RawMessage(`{"start": 5, "stop": 150, "step": 5}`),
		},
		Method: &method, Samples: &samples, Seed: &seed, Constraint: &constraint,
	}
}

func waitDone(t *testing.T, stud *studies.Service, id string) studies.Study {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		s, err := stud.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status == studies.StatusCompleted || s.Status == studies.StatusFailed {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("study not finished after 3 minutes: %+v", s)
		}
	}
}

type storedTrial struct {
	Idx       int
	Fast      float64
	Slow      float64
	Objective *float64
}

func storedTrials(t *testing.T, st *store.Store, id string) []storedTrial {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `SELECT idx, (params->>'fast')::float8, (params->>'slow')::float8, objective
		FROM study_trials WHERE study_id = $1 AND status = 'completed' ORDER BY idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storedTrial, error) {
		var x storedTrial
		return x, r.Scan(&x.Idx, &x.Fast, &x.Slow, &x.Objective)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBayesStudy: a bayes study runs its budget in rounds, each combination once and
// within the constraint; the same seed gives the same trials, also through a cancel and
// a retry (the rounds go on from the stored trials).
func TestBayesStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupBayes(t)

	s, err := b.stud.Create(ctx, bayesRequest(30, 7))
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 30 || s.Method != "bayes" {
		t.Fatalf("study total %d method %s, want 30 bayes", s.Total, s.Method)
	}
	s = waitDone(t, b.stud, s.ID)
	first := storedTrials(t, b.st, s.ID)
	if s.Status != studies.StatusCompleted || s.Done != 30 || len(first) != 30 {
		t.Fatalf("study %s with %d done, %d stored, want completed with 30", s.Status, s.Done, len(first))
	}
	seen := map[[2]float64]bool{}
	for i, tr := range first {
		if tr.Idx != i {
			t.Fatalf("trial idx %d at %d: the rounds' trials follow each other", tr.Idx, i)
		}
		if tr.Fast >= tr.Slow {
			t.Errorf("trial %d: fast %v, slow %v breaks the constraint", i, tr.Fast, tr.Slow)
		}
		if seen[[2]float64{tr.Fast, tr.Slow}] {
			t.Errorf("trial %d: fast %v slow %v ran twice", i, tr.Fast, tr.Slow)
		}
		seen[[2]float64{tr.Fast, tr.Slow}] = true
	}

	// The same seed again, cancelled at once and retried: the same trials.
	again, err := b.stud.Create(ctx, bayesRequest(30, 7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.stud.Cancel(ctx, auth.Local(), again.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.stud.Retry(ctx, auth.Local(), again.ID); err != nil {
		t.Fatal(err)
	}
	again = waitDone(t, b.stud, again.ID)
	second := storedTrials(t, b.st, again.ID)
	if len(second) != len(first) {
		t.Fatalf("the same seed ran %d trials, then %d", len(first), len(second))
	}
	for i := range first {
		a, c := first[i], second[i]
		if a.Fast != c.Fast || a.Slow != c.Slow || (a.Objective == nil) != (c.Objective == nil) || (a.Objective != nil && *a.Objective != *c.Objective) {
			t.Fatalf("trial %d: %+v, then %+v with the same seed", i, a, c)
		}
	}
	if s.Best == nil || again.Best == nil || s.Best.Objective != again.Best.Objective {
		t.Errorf("best %+v, then %+v with the same seed", s.Best, again.Best)
	}

	// The leaderboard's Pareto front of the objective (Sharpe) against the drawdown: no
	// combination beats one on the front on both, and sort=pareto lists the front first.
	board, err := b.stud.Results(ctx, s.ID, "", "pareto", "", "", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if ax := board.Pareto.Objectives; len(ax) != 2 || ax[0] != (studies.ParetoAxis{Metric: "objective", Direction: "max"}) ||
		ax[1] != (studies.ParetoAxis{Metric: "max_drawdown_pct", Direction: "min"}) {
		t.Fatalf("pareto objectives %+v", ax)
	}
	if board.Pareto.Front < 1 || len(board.Trials) != 30 {
		t.Fatalf("front of %d, %d trials", board.Pareto.Front, len(board.Trials))
	}
	for i, tr := range board.Trials {
		onFront := i < board.Pareto.Front
		if tr.ParetoRank == nil || (*tr.ParetoRank == 1) != onFront {
			t.Fatalf("row %d: rank %v, front of %d listed first", i, tr.ParetoRank, board.Pareto.Front)
		}
		if !onFront || tr.Objective == nil {
			continue
		}
		for _, o := range board.Trials {
			if o.Objective != nil && *o.Objective >= *tr.Objective && *o.MaxDrawdownPct <= *tr.MaxDrawdownPct &&
				(*o.Objective > *tr.Objective || *o.MaxDrawdownPct < *tr.MaxDrawdownPct) {
				t.Errorf("#%d on the front, but #%d beats it: %v/%v against %v/%v", tr.Idx, o.Idx,
					*o.Objective, *o.MaxDrawdownPct, *tr.Objective, *tr.MaxDrawdownPct)
			}
		}
	}
	// Convergence: every trial in proposal order, the best so far never worse.
	conv, err := b.stud.Convergence(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Values) != 30 || len(conv.Best) != 30 || conv.Method != "bayes" {
		t.Fatalf("convergence of %d values, %d bests (%s)", len(conv.Values), len(conv.Best), conv.Method)
	}
	for i := range conv.Best {
		if conv.Trials[i] != i || (i > 0 && conv.Best[i-1] != nil && (conv.Best[i] == nil || *conv.Best[i] < *conv.Best[i-1])) {
			t.Fatalf("convergence at %d: trial %d, best %v after %v", i, conv.Trials[i], conv.Best[i], conv.Best[max(i-1, 0)])
		}
	}
	if last := conv.Best[29]; last == nil || *last != s.Best.Objective {
		t.Errorf("the best so far ends at %v, the study's best is %v", last, s.Best.Objective)
	}
	for _, bad := range []string{"sharpe_ratio", "sharpe_ratio,nope", "sharpe_ratio:up,total_return", "total_return,total_return"} {
		if _, err := b.stud.Results(ctx, s.ID, "", "", "", bad, 0, 10); err == nil {
			t.Errorf("pareto=%s accepted", bad)
		}
	}
}

func TestBayesStudyBadRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupBayes(t)
	for name, edit := range map[string]func(*studies.Request){
		"no samples":   func(r *studies.Request) { r.Samples = nil },
		"zero samples": func(r *studies.Request) { n := 0; r.Samples = &n },
		"too many":     func(r *studies.Request) { n := 10001; r.Samples = &n },
		"walk-forward": func(r *studies.Request) {
			r.WalkForward = &studies.WalkForwardSpec{Train: json.RawMessage(`100`), Test: json.RawMessage(`50`)}
		},
		"bad value":           func(r *studies.Request) { r.Space["fast"] = json.RawMessage(`[5, "x"]`) },
		"empty by constraint": func(r *studies.Request) { c := "p.fast > 1000"; r.Constraint = &c },
	} {
		req := bayesRequest(20, 1)
		edit(&req)
		_, err := b.stud.Create(ctx, req)
		if ae, ok := apperr.As(err); !ok || ae.Kind != apperr.KindInvalid {
			t.Errorf("%s: %v, want a 400", name, err)
		}
	}
	// A space beyond the grid's limit is fine: only the budget runs.
	req := bayesRequest(12, 3)
	req.Space["size"] = json.RawMessage(`{"start": 1, "stop": 400, "step": 1}`) // 59 × 30 × 400 combinations
	s, err := b.stud.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if s = waitDone(t, b.stud, s.ID); s.Done != 12 {
		t.Fatalf("%d of 12 trials done (%s)", s.Done, s.Status)
	}
}
