package httpapi

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/lookahead"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/tasks"
)

// taskBodyLimit bounds a task request body. The paging limits are in query.go.
const taskBodyLimit = 256 << 10

// taskHandlers serves /api/backtests, the secondary /backtest routes and a task's state on
// its WebSocket.
type taskHandlers struct {
	s   *Server
	svc *tasks.Service
}

// mountTasks mounts Backtest task routes under /api/backtests.
func (s *Server) mountTasks(r chi.Router) {
	h := &taskHandlers{s: s, svc: s.tasks}
	r.Route("/api/backtests", func(r chi.Router) {
		r.Post("/", h.handle(h.create))
		r.Get("/", h.handle(h.list))
		r.Route("/{task_id}", func(r chi.Router) {
			r.Get("/", h.handle(h.get))
			r.Delete("/", h.handle(h.cancel))
			r.Post("/retry", h.handle(h.retry))
			r.Post("/reproduce", h.handle(h.reproduce))
			r.Post("/delete", h.handle(h.remove))
			r.Post("/pin", h.handle(h.pin(true)))
			r.Delete("/pin", h.handle(h.pin(false)))
			r.Get("/logs", h.handle(h.logs))
			r.Get("/progress", h.handle(h.progress))
		})
	})
}

// handle answers 503 when the process has no task service (it is always wired in serve).
func (h *taskHandlers) handle(fn handlerFunc) http.HandlerFunc {
	return h.s.handleIf(h.svc != nil, "Backtest tasks", fn)
}

// handleIf is handle for a service the process may lack (present false): its routes answer
// 503 saying what is missing.
func (s *Server) handleIf(present bool, what string, fn handlerFunc) http.HandlerFunc {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if !present {
			return &apperr.Error{Kind: apperr.KindUnavailable, Detail: what + " are not available in this process"}
		}
		return fn(w, r)
	})
}

func (h *taskHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req tasks.Request
	if err := decodeJSON(w, r, &req, taskBodyLimit, false); err != nil {
		return err
	}
	req.By = auth.By(caller(r))
	t, err := h.svc.Create(r.Context(), req)
	if err != nil {
		return err
	}
	noteTarget(r, t.TaskID)
	writeJSON(w, http.StatusOK, t)
	return nil
}

// list serves the runs list: a bare array (as api/openapi.yaml has it) and, with count=true, the
// number of tasks the filter matches in X-Total-Count (up to tasks.CountCap; X-Total-Count-Capped
// says there are more), and the cursor of the next page in X-Next-Cursor (cursor=...), for paging. Counting is asked for,
// not done on every read: clients polling the list need not pay for it.
func (h *taskHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := tasks.ListFilter{Status: strings.TrimSpace(q.Get("status")), StrategyID: strings.TrimSpace(q.Get("strategy_id")),
		Symbol: strings.ToUpper(strings.TrimSpace(q.Get("symbol"))), Sort: strings.TrimSpace(q.Get("sort"))}
	if f.Status != "" && !slices.Contains(tasks.Machine.Names(), f.Status) {
		return apperr.Invalid("Invalid status '%s': use one of %s", f.Status, strings.Join(tasks.Machine.Names(), ", "))
	}
	if f.Sort != "" && !slices.Contains(tasks.ListSorts, f.Sort) {
		return apperr.Invalid("Invalid sort '%s': use one of %s", f.Sort, strings.Join(tasks.ListSorts, ", "))
	}
	switch order := strings.ToLower(strings.TrimSpace(q.Get("order"))); order {
	case "", "desc":
	case "asc":
		f.Ascending = true
	default:
		return apperr.Invalid("Invalid order '%s': use asc or desc", order)
	}
	var err error
	if f.Skip, f.Limit, err = paging(r, taskListDefaultLimit, taskListMaxLimit); err != nil {
		return err
	}
	if c := strings.TrimSpace(q.Get("count")); c != "" {
		if f.Count, err = strconv.ParseBool(c); err != nil {
			return apperr.Invalid("Invalid count '%s': use true or false", c)
		}
	}
	f.Cursor = strings.TrimSpace(q.Get("cursor"))
	page, err := h.svc.List(r.Context(), f)
	if err != nil {
		return err
	}
	if f.Count {
		w.Header().Set("X-Total-Count", strconv.Itoa(page.Total))
		if page.Capped { // at least this many: counting stops there
			w.Header().Set("X-Total-Count-Capped", "true")
		}
	}
	if page.Next != "" {
		w.Header().Set("X-Next-Cursor", page.Next)
	}
	rows, err := h.s.withLookahead(r, page.Tasks)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rows)
	return nil
}

// listedTask is a runs list row: the task and its strategy version's look-ahead verdict, as
// the single task's answer has it.
type listedTask struct {
	tasks.Task
	Lookahead *bool `json:"lookahead"`
}

// withLookahead gives a page of tasks their look-ahead verdicts, read in one query for the
// page's distinct strategy versions (null for each without the service).
func (s *Server) withLookahead(r *http.Request, ts []tasks.Task) ([]listedTask, error) {
	out := make([]listedTask, len(ts))
	for i, t := range ts {
		out[i].Task = t
	}
	if s.look == nil || len(ts) == 0 {
		return out, nil
	}
	seen := make(map[lookahead.Version]bool, len(ts))
	var versions []lookahead.Version
	for _, t := range ts {
		v := lookahead.Version{StrategyID: t.StrategyID, Version: t.StrategyVersion}
		if !seen[v] {
			seen[v] = true
			versions = append(versions, v)
		}
	}
	verdicts, err := s.look.Verdicts(r.Context(), versions)
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		if v, ok := verdicts[lookahead.Version{StrategyID: t.StrategyID, Version: t.StrategyVersion}]; ok {
			out[i].Lookahead = &v
		}
	}
	return out, nil
}

// remove deletes a task that has ended, with its result and logs.
func (h *taskHandlers) remove(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "task_id")
	if err := h.svc.Delete(r.Context(), caller(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: "Task " + id + " deleted", Data: map[string]string{"task_id": id}})
	return nil
}

func (h *taskHandlers) get(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.Get(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	v, err := h.s.lookaheadOf(r, t.StrategyID, t.StrategyVersion)
	if err != nil {
		return err
	}
	prov, err := h.svc.Provenance(r.Context(), t.TaskID)
	if err != nil {
		return err
	}
	rep, err := h.svc.Reproduction(r.Context(), t.TaskID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		tasks.Task
		Lookahead    *bool                  `json:"lookahead"`
		Provenance   *provenance.Provenance `json:"provenance"`
		Reproduction *tasks.Reproduction    `json:"reproduction"`
	}{t, v, prov, rep})
	return nil
}

func (h *taskHandlers) cancel(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "task_id")
	t, changed, err := h.svc.Cancel(r.Context(), caller(r), id)
	if err != nil {
		return err
	}
	msg := "Task " + id + " cancelled"
	if !changed {
		msg = "Task " + id + " is " + string(t.Status) + "; nothing to cancel"
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: msg, Data: map[string]string{"task_id": t.TaskID, "status": string(t.Status)}})
	return nil
}

func (h *taskHandlers) retry(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.Retry(r.Context(), caller(r), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (h *taskHandlers) progress(w http.ResponseWriter, r *http.Request) error {
	p, err := h.svc.Progress(r.Context(), chi.URLParam(r, "task_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(p))
	return nil
}

var taskLogLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR"}

// logs serves a task's stored log lines. Query: level (one or more, comma-separated or
// repeated: DEBUG, INFO, WARNING, ERROR), attempt, skip, limit. Unknown ids give [].
func (h *taskHandlers) logs(w http.ResponseWriter, r *http.Request) error {
	var f tasks.LogFilter
	for _, v := range r.URL.Query()["level"] {
		for _, l := range strings.Split(v, ",") {
			l = strings.ToUpper(strings.TrimSpace(l))
			if l == "" {
				continue
			}
			if l == "WARN" {
				l = "WARNING"
			}
			if !slices.Contains(taskLogLevels, l) {
				return apperr.Invalid("Invalid level '%s': use DEBUG, INFO, WARNING or ERROR", l)
			}
			f.Levels = append(f.Levels, l)
		}
	}
	var err error
	if f.Attempt, err = queryInt(r, "attempt", 0, 1, math.MaxInt32); err != nil {
		return err
	}
	if f.Skip, f.Limit, err = paging(r, taskLogDefaultLimit, taskLogMaxLimit); err != nil {
		return err
	}
	lines, err := h.svc.Logs(r.Context(), chi.URLParam(r, "task_id"), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(lines))
	return nil
}

// sendState queues the task's current state for a subscriber that just joined.
func (h *taskHandlers) sendState(sub *events.Sub, id string) {
	if h.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsStateWithin)
	defer cancel()
	complete, attempt, frame, err := h.svc.FinalState(ctx, id)
	if err != nil {
		h.s.log.Warn("websocket state", "task", id, "err", err)
		return
	}
	if frame == nil {
		return
	}
	if complete {
		sub.SendComplete(id, attempt, frame)
	} else {
		sub.Send(frame)
	}
}
