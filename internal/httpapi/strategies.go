package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/strategy"
)

// strategyBodyLimit bounds strategy request bodies: the code limit plus room for JSON
// escaping and the other fields. Code itself is limited to strategy.MaxCodeBytes.
const strategyBodyLimit = 2*strategy.MaxCodeBytes + 64<<10

// strategyHandlers serves /api/strategies and the secondary GET /strategies.
type strategyHandlers struct {
	s   *Server
	svc *strategy.Service
}

// mountStrategies mounts Strategy routes under /api/strategies.
func (s *Server) mountStrategies(r chi.Router) {
	h := &strategyHandlers{s: s, svc: s.strat}
	r.Route("/api/strategies", func(r chi.Router) {
		r.Get("/", h.handle(h.list))
		r.Post("/", h.handle(h.create))
		r.Get("/templates", h.handle(h.templates)) // before /{strategy_id}
		r.Route("/{strategy_id}", func(r chi.Router) {
			r.Get("/", h.handle(h.get))
			r.Put("/", h.handle(h.replace))
			r.Delete("/", h.handle(h.delete))
			r.Get("/params", h.handle(h.params))
			r.Get("/parameters", h.handle(h.parameters))
			r.Get("/config", h.handle(h.exportConfig))
			r.Post("/config", h.handle(h.importConfig))
			r.Get("/versions", h.handle(h.versions))
			r.Get("/versions/{version}", h.handle(h.version))
			look := lookaheadHandlers{s: s}
			r.Post("/versions/{version}/lookahead", h.handle(look.check))
			r.Get("/versions/{version}/lookahead", h.handle(look.list))
		})
	})
}

// handle is Server.handle plus the strategy-code error body: 400 with the detail and,
// when the loader knows them, the 1-based line and column of the problem.
func (h *strategyHandlers) handle(fn handlerFunc) http.HandlerFunc {
	return h.s.handle(func(w http.ResponseWriter, r *http.Request) error {
		err := fn(w, r)
		var ce *strategy.CodeError
		if errors.As(err, &ce) {
			body := map[string]any{"detail": ce.Detail}
			if ce.Line > 0 {
				body["line"] = ce.Line
				body["column"] = ce.Column
			}
			writeJSON(w, http.StatusBadRequest, body)
			return nil
		}
		return err
	})
}

// strategyJSON is api/openapi.yaml's Strategy, with version, origin and updated_at.
type strategyJSON struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Code        string          `json:"code"`
	Params      strategy.Object `json:"params"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Version     int             `json:"version"`
	Origin      string          `json:"origin"`
	CreatedBy   *string         `json:"created_by"`
}

func toStrategyJSON(st *strategy.Strategy) strategyJSON {
	return strategyJSON{
		ID: st.ID, Name: st.Name, Description: st.Description, Code: st.Code, Params: st.Defaults(),
		CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt, Version: st.Version, Origin: st.Origin,
		CreatedBy: st.CreatedBy,
	}
}

// uploadJSON is api/openapi.yaml's StrategyUpload. Unknown fields are refused (422).
type uploadJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Code        string `json:"code"`
}

func (h *strategyHandlers) decodeUpload(w http.ResponseWriter, r *http.Request) (strategy.Upload, error) {
	var body uploadJSON
	if err := decodeJSON(w, r, &body, strategyBodyLimit, true); err != nil {
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindTooLarge {
			return strategy.Upload{}, &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf(
				"Request body too large: the limit is %d bytes; strategy code is limited to %d bytes (1 MiB)",
				strategyBodyLimit, strategy.MaxCodeBytes)}
		}
		return strategy.Upload{}, err
	}
	return strategy.Upload{Name: body.Name, Description: body.Description, Code: body.Code, By: auth.By(caller(r))}, nil
}

func (h *strategyHandlers) list(w http.ResponseWriter, r *http.Request) error {
	list, err := h.svc.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]strategyJSON, 0, len(list))
	for _, st := range list {
		out = append(out, toStrategyJSON(st))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *strategyHandlers) create(w http.ResponseWriter, r *http.Request) error {
	up, err := h.decodeUpload(w, r)
	if err != nil {
		return err
	}
	st, err := h.svc.Create(r.Context(), up)
	if err != nil {
		return err
	}
	noteTarget(r, st.ID)
	writeJSON(w, http.StatusOK, toStrategyJSON(st))
	return nil
}

func (h *strategyHandlers) get(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Get(r.Context(), chi.URLParam(r, "strategy_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toStrategyJSON(st))
	return nil
}

func (h *strategyHandlers) replace(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "strategy_id")
	if err := h.svc.MayChange(r.Context(), caller(r), id); err != nil {
		return err
	}
	up, err := h.decodeUpload(w, r)
	if err != nil {
		return err
	}
	st, err := h.svc.Replace(r.Context(), caller(r), id, up)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toStrategyJSON(st))
	return nil
}

func (h *strategyHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "strategy_id")
	if err := h.svc.Delete(r.Context(), caller(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: fmt.Sprintf("Strategy %s deleted", id), Data: nil})
	return nil
}

func (h *strategyHandlers) params(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Get(r.Context(), chi.URLParam(r, "strategy_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(st.Defaults()))
	return nil
}

// paramInfoJSON is api/openapi.yaml's ParamInfo.
type paramInfoJSON struct {
	Name        string `json:"name"`
	Value       any    `json:"value"`
	Type        string `json:"type"`
	Default     any    `json:"default"`
	Description string `json:"description"`
}

func (h *strategyHandlers) parameters(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Get(r.Context(), chi.URLParam(r, "strategy_id"))
	if err != nil {
		return err
	}
	out := make([]paramInfoJSON, 0, len(st.Params))
	for _, p := range st.Params {
		v, saved := st.Values[p.Name]
		if !saved {
			v = p.Default
		}
		out = append(out, paramInfoJSON{Name: p.Name, Value: v, Type: p.Type, Default: p.Default, Description: p.Description})
	}
	writeJSON(w, http.StatusOK, ok(out))
	return nil
}

// configJSON is an exported parameter configuration; the same shape is accepted back.
type configJSON struct {
	StrategyID string          `json:"strategy_id"`
	Version    int             `json:"version"`
	Params     strategy.Object `json:"params"`
}

func toConfigJSON(st *strategy.Strategy) configJSON {
	return configJSON{StrategyID: st.ID, Version: st.Version, Params: st.Effective()}
}

func (h *strategyHandlers) exportConfig(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Get(r.Context(), chi.URLParam(r, "strategy_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-config.json"`, st.ID))
	writeJSON(w, http.StatusOK, toConfigJSON(st))
	return nil
}

// importJSON is the import body: an exported configuration. strategy_id and version are
// informational (a configuration may be imported into another strategy with the same
// parameters); params is required.
type importJSON struct {
	StrategyID *string         `json:"strategy_id"`
	Version    *int            `json:"version"`
	Params     *map[string]any `json:"params"`
}

func (h *strategyHandlers) importConfig(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "strategy_id")
	if err := h.svc.MayChange(r.Context(), caller(r), id); err != nil {
		return err
	}
	var body importJSON
	if err := decodeJSON(w, r, &body, h.s.cfg.MaxBody, true); err != nil {
		return err
	}
	if body.Params == nil || *body.Params == nil {
		return apperr.Unprocessable("Field 'params' is required: an object of parameter name to value")
	}
	st, err := h.svc.SaveConfig(r.Context(), caller(r), id, *body.Params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Envelope{Code: "ok", Message: "Configuration imported", Data: toConfigJSON(st)})
	return nil
}

// versionJSON is one entry of a strategy's version history; code only in the detail.
type versionJSON struct {
	StrategyID  string          `json:"strategy_id"`
	Version     int             `json:"version"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	ClassName   string          `json:"class_name"`
	Params      strategy.Object `json:"params"`
	Origin      string          `json:"origin"`
	ContentHash string          `json:"content_hash"`
	CreatedAt   time.Time       `json:"created_at"`
	CreatedBy   *string         `json:"created_by"`
	Code        *string         `json:"code,omitempty"`
}

func toVersionJSON(v *strategy.Version, withCode bool) versionJSON {
	out := versionJSON{
		StrategyID: v.StrategyID, Version: v.Version, Name: v.Name, Description: v.Description,
		ClassName: v.ClassName, Params: strategy.ParamDefaults(v.Params), Origin: v.Origin,
		ContentHash: v.ContentHash, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy,
	}
	if withCode {
		code := v.Code
		out.Code = &code
	}
	return out
}

func (h *strategyHandlers) versions(w http.ResponseWriter, r *http.Request) error {
	list, err := h.svc.Versions(r.Context(), chi.URLParam(r, "strategy_id"))
	if err != nil {
		return err
	}
	out := make([]versionJSON, 0, len(list))
	for _, v := range list {
		out = append(out, toVersionJSON(v, false))
	}
	writeJSON(w, http.StatusOK, ok(out))
	return nil
}

func (h *strategyHandlers) version(w http.ResponseWriter, r *http.Request) error {
	raw := chi.URLParam(r, "version")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return apperr.Invalid("Invalid version: '%s' (a positive integer is expected)", raw)
	}
	v, err := h.svc.Version(r.Context(), chi.URLParam(r, "strategy_id"), n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(toVersionJSON(v, true)))
	return nil
}

// templateJSON is one example strategy offered as a starting point.
type templateJSON struct {
	Name        string          `json:"name"`
	File        string          `json:"file"`
	ClassName   string          `json:"class_name"`
	Description string          `json:"description"`
	Params      strategy.Object `json:"params"`
	Code        string          `json:"code"`
}

func (h *strategyHandlers) templates(w http.ResponseWriter, r *http.Request) error {
	list := strategy.Templates(h.s.log)
	out := make([]templateJSON, 0, len(list))
	for _, t := range list {
		out = append(out, templateJSON{
			Name: t.Name, File: t.File, ClassName: t.ClassName, Description: t.Description,
			Params: strategy.ParamDefaults(t.Params), Code: t.Code,
		})
	}
	writeJSON(w, http.StatusOK, ok(out))
	return nil
}
