package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/retention"
)

// pinnedData is the data of a pin or unpin answer.
type pinnedData struct {
	ID       string     `json:"id"`
	Pinned   bool       `json:"pinned"`
	PinnedAt *time.Time `json:"pinned_at"`
}

// pinTask serves POST (pin) and DELETE (unpin) /api/backtests/{task_id}/pin: a pinned run
// is kept by retention whatever its age.
func (h *taskHandlers) pin(pinned bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := chi.URLParam(r, "task_id")
		at, err := h.s.retention.PinTask(r.Context(), caller(r), id, pinned)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: pinMessage("Task", id, pinned), Data: pinnedData{ID: id, Pinned: at != nil, PinnedAt: at}})
		return nil
	}
}

// pin is pinTask for /api/studies/{study_id}/pin.
func (h *studyHandlers) pin(pinned bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := chi.URLParam(r, "study_id")
		at, err := h.s.retention.PinStudy(r.Context(), caller(r), id, pinned)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: pinMessage("Study", id, pinned), Data: pinnedData{ID: id, Pinned: at != nil, PinnedAt: at}})
		return nil
	}
}

func pinMessage(what, id string, pinned bool) string {
	if pinned {
		return what + " " + id + " pinned: retention keeps it"
	}
	return what + " " + id + " unpinned"
}

// pruneRequest is the body of POST /api/admin/prune.
type pruneRequest struct {
	OlderThan string `json:"older_than"` // an age: 180d, 26w, 36h
	DryRun    bool   `json:"dry_run"`
	Force     bool   `json:"force"` // an age under one day (retention.CheckAge)
}

// prune serves POST /api/admin/prune: deletes finished, unpinned runs and studies older
// than the age, in batches (see internal/retention), then vacuums; dry_run only counts. An
// age under one day needs "force": true.
// It answers when done.
func (s *Server) prune(w http.ResponseWriter, r *http.Request) error {
	var req pruneRequest
	if err := decodeJSON(w, r, &req, 4<<10, true); err != nil {
		return err
	}
	if strings.TrimSpace(req.OlderThan) == "" {
		return apperr.Unprocessable("Field 'older_than' is required: an age such as 180d")
	}
	age, err := config.ParseAge(req.OlderThan)
	if err != nil {
		return apperr.Invalid("Invalid older_than: %v", err)
	}
	if err := retention.CheckAge(age, req.Force); err != nil {
		return err
	}
	rep, err := s.retention.Prune(r.Context(), retention.Options{Before: time.Now().Add(-age), DryRun: req.DryRun, Vacuum: true, Force: req.Force})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
