package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
)

// reproduce starts a run repeating the task exactly, owned by the caller; the new task
// carries the verdict once it completed (GET /api/backtests/{id}: reproduction).
func (h *taskHandlers) reproduce(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.Reproduce(r.Context(), auth.By(caller(r)), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	noteTarget(r, t.TaskID)
	writeJSON(w, http.StatusOK, t)
	return nil
}

// maxTaskID bounds an id given in a query: longer ones are malformed, not unknown.
const maxTaskID = 200

// resultDiff compares the result of {task_id} with that of ?against= (rundiff.Diff).
func (s *Server) resultDiff(w http.ResponseWriter, r *http.Request) error {
	if s.tasks == nil {
		return &apperr.Error{Kind: apperr.KindUnavailable, Detail: "Backtest tasks are not available in this process"}
	}
	q := r.URL.Query()
	if len(q["against"]) > 1 {
		return apperr.Invalid("Give against once: the task whose result to compare with")
	}
	against := strings.TrimSpace(q.Get("against"))
	if against == "" {
		return apperr.Invalid("Query parameter 'against' is required: the task whose result to compare with")
	}
	if len(against) > maxTaskID || strings.ContainsAny(against, " \t\r\n/,") {
		return apperr.Invalid("Invalid against '%s': expected one task id", truncate(against, 60))
	}
	a := chi.URLParam(r, "task_id")
	// Both results are read whole, about as their JSON exports are: the heavy-read budget
	// admits them. Tasks without a result answer first (Diff names them).
	var cost int64
	for _, id := range []string{a, against} {
		c, err := s.report.ExportCost(r.Context(), id, "json")
		if err != nil {
			if _, isApp := apperr.As(err); isApp {
				cost = 0
				break
			}
			return err
		}
		cost += c
	}
	w, done, err := s.heavy(w, r, cost, "The diff of "+a+" and "+against)
	if err != nil {
		return err
	}
	defer done()
	d, err := s.tasks.Diff(r.Context(), a, against)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(d))
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
