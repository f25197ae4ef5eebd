package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// The secondary API surface (documented in api/openapi.yaml), a compact interface for scripts:
//
//	POST /backtest        body: the BacktestRequest of POST /api/backtests → the Task
//	GET  /backtest/{id}   → {"task": <Task with attempts>, "result": null until completed,
//	                         then {"task_id", "status": "completed", "summary": <the 12
//	                         summary keys plus won, lost, sqn, max_drawdown_duration>}}
//	GET  /strategies      → [{"id", "name", "description", "version", "class_name", "params"}]
//	GET  /analyzers       → [{"name", "description"}]
//
// Errors are as on the main routes: {"detail": ...} with 4xx.

func (s *Server) mountSecondary(r chi.Router) {
	tasks := &taskHandlers{s: s, svc: s.tasks}
	strategies := &strategyHandlers{s: s, svc: s.strat}
	r.Post("/backtest", tasks.handle(tasks.create)) // same request and answer as POST /api/backtests
	r.Get("/backtest/{id}", tasks.handle(tasks.secondaryResult))
	// Like the /backtest routes, it answers 503 in a process without the task service.
	r.Get("/strategies", tasks.handle(strategies.secondaryList))
	r.Get("/analyzers", s.handle(secondaryAnalyzers))
}

type secondaryResult struct {
	TaskID  string          `json:"task_id"`
	Status  string          `json:"status"`
	Summary json.RawMessage `json:"summary"`
}

func (h *taskHandlers) secondaryResult(w http.ResponseWriter, r *http.Request) error {
	t, sum, err := h.svc.Result(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	body := map[string]any{"task": t, "result": nil}
	if sum != nil {
		body["result"] = secondaryResult{TaskID: t.TaskID, Status: string(t.Status), Summary: sum}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// secondaryStrategy is one strategy of GET /strategies, with its current version.
type secondaryStrategy struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Version     int          `json:"version"`
	ClassName   string       `json:"class_name"`
	Params      []jsrt.Param `json:"params"`
}

func (h *strategyHandlers) secondaryList(w http.ResponseWriter, r *http.Request) error {
	list, err := h.svc.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]secondaryStrategy, len(list))
	for i, st := range list {
		out[i] = secondaryStrategy{ID: st.ID, Name: st.Name, Description: st.Description, Version: st.Version,
			ClassName: st.ClassName, Params: st.Params}
		if out[i].Params == nil {
			out[i].Params = []jsrt.Param{}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

var analyzerDescriptions = map[string]string{
	"pyfolio":  "portfolio returns per bar (equity curve, monthly and yearly returns)",
	"drawdown": "drawdown in money and percent, its maximum and longest duration",
	"SQN":      "system quality number over closed trades",
	"trades":   "trade analysis: totals, won and lost, pnl averages, streaks",
	"sharpe":   "Sharpe ratio of daily returns, annualised",
}

func secondaryAnalyzers(w http.ResponseWriter, r *http.Request) error {
	names := append([]string{}, engine.AnalyzerNames...)
	names = append(names, "sharpe")
	out := make([]map[string]string, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]string{"name": n, "description": analyzerDescriptions[n]})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
