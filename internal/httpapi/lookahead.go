package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/tasks"
)

// lookaheadHandlers serves a strategy version's look-ahead checks.
type lookaheadHandlers struct{ s *Server }

func (h lookaheadHandlers) version(r *http.Request) (string, int, error) {
	if h.s.look == nil {
		return "", 0, &apperr.Error{Kind: apperr.KindUnavailable, Detail: "look-ahead checks are not available in this process"}
	}
	raw := chi.URLParam(r, "version")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return "", 0, apperr.Invalid("Invalid version: '%s' (a positive integer is expected)", raw)
	}
	return chi.URLParam(r, "strategy_id"), n, nil
}

// check runs the check on the data the body names (a backtest request's data fields:
// data_source, symbol or symbols, timeframe, start_date, end_date, strategy_params,
// initial_cash, commission) and answers the stored verdict.
func (h lookaheadHandlers) check(w http.ResponseWriter, r *http.Request) error {
	id, v, err := h.version(r)
	if err != nil {
		return err
	}
	var req tasks.Request
	if err := decodeJSON(w, r, &req, taskBodyLimit, false); err != nil {
		return err
	}
	req.By = auth.By(caller(r))
	c, err := h.s.look.Run(r.Context(), id, v, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// list answers the version's stored checks, latest first.
func (h lookaheadHandlers) list(w http.ResponseWriter, r *http.Request) error {
	id, v, err := h.version(r)
	if err != nil {
		return err
	}
	if _, err := h.s.strat.Version(r.Context(), id, v); err != nil {
		return err
	}
	list, err := h.s.look.Checks(r.Context(), id, v)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// lookaheadOf is the look-ahead verdict of a strategy version for a run or study answer:
// true when a check found look-ahead, false when checks found none, nil when unchecked (or
// without the service).
func (s *Server) lookaheadOf(r *http.Request, id string, version int) (*bool, error) {
	if s.look == nil {
		return nil, nil
	}
	return s.look.Verdict(r.Context(), id, version)
}
