package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/service"
)

// databaseURL is a test database for the examples (a program of yours leaves
// Config.DatabaseURL empty for a private cluster, or points it at its PostgreSQL).
var databaseURL string

func TestMain(m *testing.M) {
	service.RunnerMain() // this test binary is also the service's runner process
	url, drop, err := pgtest.Create()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test database:", err)
		os.Exit(1)
	}
	databaseURL = url
	code := m.Run()
	if err := drop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

const smaCross = `
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); }
  next() {
    if (this.position.size === 0 && this.cross[0] > 0) this.buy({ size: 10 });
    else if (this.position.size > 0 && this.cross[0] < 0) this.close();
  }
}`

// Mount the service in a program's own router under /bt/, then upload a strategy and run
// a backtest through it, as any HTTP client would.
func Example() {
	ctx := context.Background()
	cfg, err := service.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.DatabaseURL = databaseURL
	cfg.BasePath = "/bt"
	svc, err := service.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()

	mux := http.NewServeMux()
	mux.Handle("/bt/", svc.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the rest of the program") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	call := func(method, path string, body, out any) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			panic(fmt.Sprintf("%s %s: %d: %v", method, path, resp.StatusCode, err))
		}
	}

	var strat struct{ ID string }
	call("POST", "/bt/api/strategies", map[string]any{"name": "SMA cross", "code": smaCross}, &strat)
	var task struct {
		TaskID string `json:"task_id"`
		Status string
	}
	call("POST", "/bt/api/backtests", map[string]any{"strategy_id": strat.ID, "symbol": "ACME",
		"start_date": "2020-01-01", "end_date": "2023-12-31", "strategy_params": map[string]any{"fast": 5}}, &task)
	for deadline := time.Now().Add(2 * time.Minute); task.Status != "completed" && task.Status != "failed" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		call("GET", "/bt/api/backtests/"+task.TaskID, nil, &task)
	}
	var summary struct {
		Code string
		Data struct {
			TotalTrades int `json:"total_trades"`
		}
	}
	call("GET", "/bt/api/results/"+task.TaskID+"/summary", nil, &summary)
	fmt.Println(task.TaskID, task.Status, summary.Code, summary.Data.TotalTrades > 0)
	// Output: task_1 completed ok true
}
