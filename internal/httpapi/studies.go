package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tabular"
)

// studyBodyLimit bounds POST /api/studies: a space may list many values.
const studyBodyLimit = 1 << 20

// studyHandlers serves /api/studies and a study's state on its WebSocket.
type studyHandlers struct {
	s   *Server
	svc *studies.Service
}

func (s *Server) mountStudies(r chi.Router) {
	h := &studyHandlers{s: s, svc: s.studies}
	r.Route("/api/studies", func(r chi.Router) {
		r.Post("/", h.handle(h.create))
		r.Get("/", h.handle(h.list))
		r.Route("/{study_id}", func(r chi.Router) {
			r.Get("/", h.handle(h.get))
			r.Delete("/", h.handle(h.cancel))
			r.Post("/retry", h.handle(h.retry))
			r.Post("/pin", h.handle(h.pin(true)))
			r.Delete("/pin", h.handle(h.pin(false)))
			r.Get("/results", h.handle(h.results))
			r.Get("/heatmap", h.handle(h.heatmap))
			r.Get("/convergence", h.handle(h.convergence))
			r.Get("/overfitting", h.handle(h.overfitting))
			r.Get("/cpcv", h.handle(h.cpcv))
			r.Get("/surface", h.handle(h.surface))
			r.Get("/walk-forward", h.handle(h.walkForward))
			r.Post("/promote", h.handle(h.promote))
		})
	})
}

// handle answers 503 when the process has no study service (it is always wired in serve).
func (h *studyHandlers) handle(fn handlerFunc) http.HandlerFunc {
	return h.s.handleIf(h.svc != nil, "Parameter studies", fn)
}

func (h *studyHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req studies.Request
	if err := decodeJSON(w, r, &req, studyBodyLimit, false); err != nil {
		return err
	}
	req.By = auth.By(caller(r))
	st, err := h.svc.Create(r.Context(), req)
	if err != nil {
		return err
	}
	noteTarget(r, st.ID)
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (h *studyHandlers) list(w http.ResponseWriter, r *http.Request) error {
	var f studies.ListFilter
	if v := strings.TrimSpace(r.URL.Query().Get("strategy_id")); v != "" {
		f.StrategyID = &v
	}
	var err error
	if f.Skip, f.Limit, err = paging(r, taskListDefaultLimit, taskListMaxLimit); err != nil {
		return err
	}
	list, err := h.svc.List(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (h *studyHandlers) get(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Get(r.Context(), chi.URLParam(r, "study_id"))
	if err != nil {
		return err
	}
	v, err := h.s.lookaheadOf(r, st.StrategyID, st.StrategyVersion)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		studies.Study
		Lookahead *bool `json:"lookahead"`
	}{st, v})
	return nil
}

func (h *studyHandlers) cancel(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "study_id")
	st, err := h.svc.Cancel(r.Context(), caller(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (h *studyHandlers) retry(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "study_id")
	st, err := h.svc.Retry(r.Context(), caller(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// results is the leaderboard: ?sort=<metric>|pareto&order=asc|desc&pareto=<metric>[:dir],<metric>[:dir]&skip&limit.
func (h *studyHandlers) results(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if format := q.Get("format"); format != "" && format != "json" {
		return h.resultsTable(w, r, format)
	}
	skip, limit, err := paging(r, taskListDefaultLimit, taskListMaxLimit)
	if err != nil {
		return err
	}
	b, err := h.svc.Results(r.Context(), chi.URLParam(r, "study_id"), strings.TrimSpace(q.Get("fold")), strings.TrimSpace(q.Get("sort")), strings.TrimSpace(q.Get("order")), strings.TrimSpace(q.Get("pareto")), skip, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// resultsTable answers every combination of the leaderboard (?fold, sort, order, pareto as
// for JSON) as plain CSV or Parquet, its parameters as columns.
func (h *studyHandlers) resultsTable(w http.ResponseWriter, r *http.Request, format string) error {
	if !slices.Contains(tabular.Formats, format) {
		return apperr.Invalid("Unsupported format: %q (use json, %s)", format, strings.Join(tabular.Formats, " or "))
	}
	q := r.URL.Query()
	id := chi.URLParam(r, "study_id")
	t, err := h.svc.ResultsTable(r.Context(), id, strings.TrimSpace(q.Get("fold")), strings.TrimSpace(q.Get("sort")), strings.TrimSpace(q.Get("order")), strings.TrimSpace(q.Get("pareto")))
	if err != nil {
		return err
	}
	return writeTable(w, t, format, "study-"+id+"-results")
}

// convergence is the objective of each finished trial in plan order and the best so far: ?fold.
func (h *studyHandlers) convergence(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Convergence(r.Context(), chi.URLParam(r, "study_id"), strings.TrimSpace(r.URL.Query().Get("fold")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// heatmap is ?x=<param>&y=<param>&metric=<metric>&agg=best|max|mean.
func (h *studyHandlers) heatmap(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	c, err := h.svc.Heatmap(r.Context(), chi.URLParam(r, "study_id"), strings.TrimSpace(q.Get("fold")), strings.TrimSpace(q.Get("x")), strings.TrimSpace(q.Get("y")),
		strings.TrimSpace(q.Get("metric")), strings.TrimSpace(q.Get("agg")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *studyHandlers) walkForward(w http.ResponseWriter, r *http.Request) error {
	wf, err := h.svc.WalkForwardOf(r.Context(), chi.URLParam(r, "study_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wf)
	return nil
}

func (h *studyHandlers) overfitting(w http.ResponseWriter, r *http.Request) error {
	o, err := h.svc.Overfitting(r.Context(), chi.URLParam(r, "study_id"), strings.TrimSpace(r.URL.Query().Get("fold")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (h *studyHandlers) cpcv(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	get := func(k string) string { return strings.TrimSpace(q.Get(k)) }
	o, err := h.svc.CPCV(r.Context(), chi.URLParam(r, "study_id"), studies.CPCVRequest{
		Groups: get("groups"), TestGroups: get("test_groups"), Embargo: get("embargo_bars"), Fold: get("fold")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (h *studyHandlers) surface(w http.ResponseWriter, r *http.Request) error {
	o, err := h.svc.Surface(r.Context(), chi.URLParam(r, "study_id"), strings.TrimSpace(r.URL.Query().Get("fold")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (h *studyHandlers) promote(w http.ResponseWriter, r *http.Request) error {
	var req studies.PromoteRequest
	if err := decodeJSON(w, r, &req, taskBodyLimit, false); err != nil {
		return err
	}
	req.By = auth.By(caller(r))
	t, err := h.svc.Promote(r.Context(), chi.URLParam(r, "study_id"), req)
	if err != nil {
		return err
	}
	noteTarget(r, t.TaskID)
	writeJSON(w, http.StatusOK, t)
	return nil
}

// sendState queues a study's current progress for a WebSocket subscriber that just
// joined /ws/study_<n>.
func (h *studyHandlers) sendState(sub *events.Sub, id string) {
	if h.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsStateWithin)
	defer cancel()
	frame, err := h.svc.State(ctx, id)
	if err != nil {
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindNotFound {
			h.s.log.Warn("websocket state", "study", id, "err", err)
		}
		return
	}
	sub.Send(frame)
}
