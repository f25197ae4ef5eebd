package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/service"
)

// spin burns spin loop turns per bar: on the 520 bars below, a combination of the study
// (spin 1200) takes about 0.1 s, so a batch of 10 takes longer than a slice, and a single
// backtest (spin 3000) about 0.3 s, without the race detector (which slows strategy code
// about tenfold, so the test spins ten times less under it).
const spin = `
class Spin extends Strategy {
  static params = { spin: 500, fast: 10 };
  init() { this.sma = ind.SMA(this.data.close, this.p.fast); }
  next() {
    let x = 0; for (let i = 0; i < this.p.spin; i++) x += i;
    if (this.position.size === 0 && this.data.close[0] > this.sma[0]) this.buy({ size: 1 });
    else if (this.position.size > 0 && this.data.close[0] < this.sma[0]) this.close();
  }
}`

// TestStudyLeavesRoomForOthers: with the default settings (WORKERS, USER_MAX_RUNNING, CPU
// places), one user's 300-combination study running does not keep another user's single
// backtest waiting: the backtest completes while most of the study is still to run (before
// this, it waited until the study was nearly done), the study user's
// units never exceed the fair share, and the study then completes with every combination
// (nothing lost to the yielding and waiting). Without accounts (one user, no limit) the
// study's jobs yield to the single backtest the same way.
func TestStudyLeavesRoomForOthers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		accounts bool
	}{{"team", true}, {"single user", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, err := service.LoadConfig(func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			cfg.DatabaseURL = pgtest.NewDatabase(t)
			cfg.Auth = "off"
			tokens := map[string]string{}
			if tc.accounts {
				cfg.Auth = "on"
				accounts, closeAccounts, err := service.Accounts(ctx, cfg, quiet())
				if err != nil {
					t.Fatal(err)
				}
				for name, role := range map[string]auth.Role{"root": auth.RoleAdmin, "alice": auth.RoleResearcher, "bob": auth.RoleResearcher} {
					if _, err := accounts.AddUser(ctx, name, role, "a long passphrase, 7%q, kept apart from the names"); err != nil {
						t.Fatal(err)
					}
					if tokens[name], _, err = accounts.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: name, Name: "test"}); err != nil {
						t.Fatal(err)
					}
				}
				closeAccounts()
			}
			svc, err := service.New(ctx, cfg, quiet())
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			srv := httptest.NewServer(svc.Handler())
			defer srv.Close()
			db, err := pgxpool.New(ctx, cfg.DatabaseURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			call := func(user, method, path string, body any, out any) {
				t.Helper()
				var rd io.Reader
				if body != nil {
					b, _ := json.Marshal(body)
					rd = bytes.NewReader(b)
				}
				req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, rd)
				req.Header.Set("Content-Type", "application/json")
				if tok := tokens[user]; tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode >= 300 {
					t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
				}
				if err := json.Unmarshal(b, out); err != nil {
					t.Fatalf("%s %s: %v: %s", method, path, err, b)
				}
			}

			comboSpin, singleSpin := 1200, 3000
			if raceDetector {
				comboSpin, singleSpin = comboSpin/10, singleSpin/10
			}
			var strat struct{ ID string }
			call("alice", "POST", "/api/strategies", map[string]any{"name": "Spin", "code": spin}, &strat)
			bars := map[string]any{"strategy_id": strat.ID, "symbol": "ACME", "start_date": "2015-01-01", "end_date": "2016-12-31"}
			studyReq := map[string]any{"space": map[string]any{"fast": map[string]any{"start": 2, "stop": 301, "step": 1}},
				"strategy_params": map[string]any{"spin": comboSpin}, "objective": "total_return"}
			for k, v := range bars {
				studyReq[k] = v
			}
			type studyState struct {
				ID     string
				Status string
				Total  int
				Done   int
				Failed int
			}
			var st studyState
			call("alice", "POST", "/api/studies", studyReq, &st)
			if st.Total != 300 {
				t.Fatalf("study %+v, want 300 combinations", st)
			}
			// alice's units: her study's jobs holding a lease, and her running backtests.
			units := func() int {
				var n int
				if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM study_batches)
					+ (SELECT count(*) FROM tasks WHERE created_by = 'alice' AND status = 'running')`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			maxUnits := 0
			// The others submit once the study's jobs have the workers and stored a first
			// combination.
			for deadline := time.Now().Add(2 * time.Minute); st.Done == 0; time.Sleep(20 * time.Millisecond) {
				maxUnits = max(maxUnits, units())
				call("alice", "GET", "/api/studies/"+st.ID, nil, &st)
				if time.Now().After(deadline) {
					t.Fatalf("the study stored nothing in 2 minutes: %+v", st)
				}
			}
			single := map[string]any{"strategy_params": map[string]any{"spin": singleSpin}}
			for k, v := range bars {
				single[k] = v
			}
			type taskState struct {
				TaskID      string     `json:"task_id"`
				Status      string     `json:"status"`
				Error       *string    `json:"error"`
				CreatedAt   time.Time  `json:"created_at"`
				StartedAt   *time.Time `json:"started_at"`
				CompletedAt *time.Time `json:"completed_at"`
			}
			// bob's backtest; with accounts also one of alice's own, which goes before her
			// study's jobs as bob's does.
			users := []string{"bob"}
			if tc.accounts {
				users = append(users, "alice")
			}
			tasks := make([]taskState, len(users))
			atDone := make([]int, len(users)) // the study's combinations run when each completed
			for i, u := range users {
				call(u, "POST", "/api/backtests", single, &tasks[i])
			}
			for deadline, left := time.Now().Add(3*time.Minute), len(users); left > 0; time.Sleep(20 * time.Millisecond) {
				maxUnits = max(maxUnits, units())
				for i, u := range users {
					if tasks[i].Status == "completed" {
						continue
					}
					call(u, "GET", "/api/backtests/"+tasks[i].TaskID, nil, &tasks[i])
					switch tasks[i].Status {
					case "completed":
						call("alice", "GET", "/api/studies/"+st.ID, nil, &st)
						atDone[i] = st.Done + st.Failed
						// Not a wall-clock bound: the backtest is about as much work as three
						// of the study's combinations, and it was submitted once the first
						// was stored, so waiting behind the study's queued jobs shows as most
						// of the study done.
						if st.Status != "running" || atDone[i] > st.Total/2 {
							t.Fatalf("%s's backtest completed only once the study was %s with %d of %d combinations run: it waited behind the study",
								u, st.Status, atDone[i], st.Total)
						}
						left--
					case "failed", "cancelled":
						t.Fatalf("%s's backtest is %s (%v)", u, tasks[i].Status, tasks[i].Error)
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("backtests %+v not completed in 3 minutes", tasks)
				}
			}
			start := time.Now()
			// Under CPU hogs (make stress-test) the 300 combinations have taken over 5 minutes.
			for deadline := time.Now().Add(8 * time.Minute); st.Status != "completed"; time.Sleep(50 * time.Millisecond) {
				maxUnits = max(maxUnits, units())
				call("alice", "GET", "/api/studies/"+st.ID, nil, &st)
				if st.Status == "failed" || st.Status == "cancelled" || time.Now().After(deadline) {
					t.Fatalf("study %+v", st)
				}
			}
			if st.Done != 300 || st.Failed != 0 {
				t.Fatalf("study completed with %d done and %d failed, want all 300 done", st.Done, st.Failed)
			}
			var stored int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM study_trials WHERE study_id = $1 AND status = 'completed' AND final_value > 0`, st.ID).Scan(&stored); err != nil || stored != 300 {
				t.Fatalf("%d combinations stored (%v), want 300", stored, err)
			}
			if tc.accounts && maxUnits > cfg.UserMaxRunning {
				t.Errorf("alice ran up to %d units at once, more than USER_MAX_RUNNING=%d", maxUnits, cfg.UserMaxRunning)
			}
			for i, u := range users {
				t.Logf("WORKERS=%d USER_MAX_RUNNING=%d race=%v: %s's backtest waited %s from submit to running, completed %s after submit, with the study at %d of %d",
					cfg.Workers, cfg.UserMaxRunning, raceDetector, u, tasks[i].StartedAt.Sub(tasks[i].CreatedAt).Round(time.Millisecond),
					tasks[i].CompletedAt.Sub(tasks[i].CreatedAt).Round(time.Millisecond), atDone[i], st.Total)
			}
			t.Logf("the study completed %s after the backtests; alice's units at most %d", time.Since(start).Round(100*time.Millisecond), maxUnits)
		})
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
