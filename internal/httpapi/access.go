package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/backtestd/backtestd/internal/auth"
)

// access is one route's rule and, for a change worth recording, its audit action.
type access struct {
	rule   auth.Rule
	action string
}

// routeAccess is the rule of every route, keyed by method and chi pattern. New refuses to
// build a router with a route missing here, and the route × role test walks the router, so
// a new route cannot ship without a deliberate rule.
var routeAccess = map[string]access{
	"GET /":                   {auth.Public, ""},
	"GET /health":             {auth.Public, ""},
	"GET /metrics":            {auth.Metrics, ""},
	"GET /openapi.yaml":       {auth.Public, ""},
	"GET /docs":               {auth.Public, ""},
	"GET /docs/":              {auth.Public, ""},
	"GET /docs/assets/*":      {auth.Public, ""},
	"GET /ui":                 {auth.Public, ""},
	"GET /ui/*":               {auth.Public, ""},
	"HEAD /ui/*":              {auth.Public, ""},
	"POST /api/auth/login":    {auth.Public, ""}, // the auth service records sign-ins itself
	"POST /api/auth/logout":   {auth.Signed, "logout"},
	"GET /api/auth/me":        {auth.Signed, ""},
	"GET /api/users":          {auth.Admin, ""},
	"POST /api/users":         {auth.Admin, "user.add"},
	"PATCH /api/users/{name}": {auth.Admin, "user.update"},
	"GET /api/tokens":         {auth.Self, ""},
	"POST /api/tokens":        {auth.Self, "token.create"},
	"DELETE /api/tokens/{id}": {auth.Self, "token.revoke"},
	"GET /api/audit":          {auth.Admin, ""},
	"POST /api/admin/prune":   {auth.Admin, "retention.prune"},

	"GET /api/strategies/":                                 {auth.Signed, ""},
	"POST /api/strategies/":                                {auth.Create, "strategy.create"},
	"GET /api/strategies/templates":                        {auth.Signed, ""},
	"GET /api/strategies/{strategy_id}/":                   {auth.Signed, ""},
	"PUT /api/strategies/{strategy_id}/":                   {auth.Owner, "strategy.replace"},
	"DELETE /api/strategies/{strategy_id}/":                {auth.Owner, "strategy.delete"},
	"GET /api/strategies/{strategy_id}/params":             {auth.Signed, ""},
	"GET /api/strategies/{strategy_id}/parameters":         {auth.Signed, ""},
	"GET /api/strategies/{strategy_id}/config":             {auth.Signed, ""},
	"POST /api/strategies/{strategy_id}/config":            {auth.Owner, "strategy.config"},
	"GET /api/strategies/{strategy_id}/versions":           {auth.Signed, ""},
	"GET /api/strategies/{strategy_id}/versions/{version}": {auth.Signed, ""},
	// A check runs the version's code (in a runner): as costly as a run, so as a run is.
	"POST /api/strategies/{strategy_id}/versions/{version}/lookahead": {auth.Create, "strategy.lookahead"},
	"GET /api/strategies/{strategy_id}/versions/{version}/lookahead":  {auth.Signed, ""},

	"POST /api/backtests/":                {auth.Create, "task.run"},
	"GET /api/backtests/":                 {auth.Signed, ""},
	"GET /api/backtests/{task_id}/":       {auth.Signed, ""},
	"DELETE /api/backtests/{task_id}/":    {auth.Owner, "task.cancel"},
	"POST /api/backtests/{task_id}/retry": {auth.Owner, "task.retry"},
	// A reproduction is a new run of the caller's, as creating one is.
	"POST /api/backtests/{task_id}/reproduce":  {auth.Create, "task.reproduce"},
	"POST /api/backtests/{task_id}/delete":     {auth.Owner, "task.delete"},
	"POST /api/backtests/{task_id}/pin":        {auth.Owner, "task.pin"},
	"DELETE /api/backtests/{task_id}/pin":      {auth.Owner, "task.unpin"},
	"GET /api/backtests/{task_id}/logs":        {auth.Signed, ""},
	"GET /api/backtests/{task_id}/progress":    {auth.Signed, ""},
	"POST /api/studies/":                       {auth.Create, "study.run"},
	"GET /api/studies/":                        {auth.Signed, ""},
	"GET /api/studies/{study_id}/":             {auth.Signed, ""},
	"DELETE /api/studies/{study_id}/":          {auth.Owner, "study.cancel"},
	"POST /api/studies/{study_id}/retry":       {auth.Owner, "study.retry"},
	"POST /api/studies/{study_id}/pin":         {auth.Owner, "study.pin"},
	"DELETE /api/studies/{study_id}/pin":       {auth.Owner, "study.unpin"},
	"GET /api/studies/{study_id}/results":      {auth.Signed, ""},
	"GET /api/studies/{study_id}/heatmap":      {auth.Signed, ""},
	"GET /api/studies/{study_id}/convergence":  {auth.Signed, ""},
	"GET /api/studies/{study_id}/overfitting":  {auth.Signed, ""},
	"GET /api/studies/{study_id}/cpcv":         {auth.Signed, ""},
	"GET /api/studies/{study_id}/surface":      {auth.Signed, ""},
	"GET /api/studies/{study_id}/walk-forward": {auth.Signed, ""},
	"POST /api/studies/{study_id}/promote":     {auth.Create, "task.run"},
	"GET /ws/logs":                             {auth.Signed, ""},
	"GET /ws/{task_id}":                        {auth.Signed, ""},
	"POST /backtest":                           {auth.Create, "task.run"},
	"GET /backtest/{id}":                       {auth.Signed, ""},
	"GET /strategies":                          {auth.Signed, ""},
	"GET /analyzers":                           {auth.Signed, ""},
	// MCP (see isRelay): any signed-in user; each tool call is checked as its own route.
	"POST /mcp": {auth.Signed, ""},

	"GET /api/results/compare":                {auth.Signed, ""},
	"GET /api/results/{task_id}/summary":      {auth.Signed, ""},
	"GET /api/results/{task_id}/trades":       {auth.Signed, ""},
	"GET /api/results/{task_id}/chart":        {auth.Signed, ""},
	"GET /api/results/{task_id}/statistics":   {auth.Signed, ""},
	"GET /api/results/{task_id}/symbols":      {auth.Signed, ""},
	"GET /api/results/{task_id}/strategies":   {auth.Signed, ""},
	"GET /api/results/{task_id}/analyzers":    {auth.Signed, ""},
	"GET /api/results/{task_id}/drawdowns":    {auth.Signed, ""},
	"GET /api/results/{task_id}/montecarlo":   {auth.Signed, ""},
	"GET /api/results/{task_id}/export":       {auth.Signed, ""},
	"GET /api/results/{task_id}/diff":         {auth.Signed, ""},
	"GET /api/results/{task_id}/findings":     {auth.Signed, ""},
	"GET /api/results/{task_id}/significance": {auth.Signed, ""},

	"GET /api/data/sources":                    {auth.Signed, ""},
	"GET /api/data/{source}/symbols":           {auth.Signed, ""},
	"POST /api/data/{source}/update":           {auth.Admin, "data.update"},
	"GET /api/data/{source}/{symbol}":          {auth.Signed, ""},
	"GET /api/data/{source}/{symbol}/chart":    {auth.Signed, ""},
	"GET /api/data/{source}/{symbol}/versions": {auth.Signed, ""},
	"POST /api/data/{source}/{symbol}/bars":    {auth.Admin, "data.import"},
}

// unmatched is the rule of a request no route matches: signed in, so that an anonymous
// caller learns nothing about which routes exist.
var unmatched = access{rule: auth.Signed}

// checkRoutes panics unless every route of r has an entry in routeAccess.
func checkRoutes(r chi.Routes) {
	var missing []string
	_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if _, ok := routeAccess[method+" "+route]; !ok {
			missing = append(missing, method+" "+route)
		}
		return nil
	})
	if len(missing) > 0 {
		panic("httpapi: routes without an access rule in routeAccess: " + strings.Join(missing, ", "))
	}
}

// accessOf finds the rule of the route r will reach. It looks the route up by the path chi
// routes by: the raw (still escaped) path when the request has one, so that
// /api/data/builtin/AC%2FME/bars finds the route it reaches, not whatever its decoded form
// (/api/data/builtin/AC/ME/bars) would.
func accessOf(mux *chi.Mux, r *http.Request) access {
	path := r.URL.Path
	if r.URL.RawPath != "" {
		path = r.URL.RawPath
	}
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePath != "" {
		path = rc.RoutePath // under a BasePath mount: the path within this router
	}
	if path == "" {
		path = "/"
	}
	pattern := mux.Find(chi.NewRouteContext(), r.Method, path)
	if pattern == "" {
		return unmatched
	}
	// Find names a subrouter's "/" route without its slash when the path has none
	// ("/api/backtests"), where chi.Walk, and so the table, has it ("/api/backtests/").
	for _, p := range []string{pattern, pattern + "/"} {
		if a, ok := routeAccess[r.Method+" "+p]; ok {
			return a
		}
	}
	return unmatched
}

// mcpPath is where the MCP tools are served (internal/mcpserver).
const mcpPath = "/mcp"

// isRelay says whether r is an MCP request: a POST that only carries tool calls, each made
// as a request of its own route with r's credentials and checked there, so it is not a
// write itself (a read-only token reads through it) and is recorded by the calls it makes.
func isRelay(r *http.Request) bool {
	path := r.URL.Path
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePath != "" {
		path = rc.RoutePath
	}
	return r.Method == http.MethodPost && path == mcpPath
}

type identityKey struct{}

// identity is who the request comes from; nil for no credentials (public routes only).
func identity(r *http.Request) *auth.Identity {
	id, _ := r.Context().Value(identityKey{}).(*auth.Identity)
	return id
}

// caller is the request's identity on a route that requires one.
func caller(r *http.Request) auth.Identity {
	if id := identity(r); id != nil {
		return *id
	}
	return auth.Identity{} // unreachable behind the gate; an identity that may do nothing
}

const (
	sessionCookie = "backtestd_session"
	csrfHeader    = "X-CSRF-Token"
)

// authenticate reads the request's credentials: an API token in Authorization, else the
// session cookie. No credentials is nil without error; bad ones are a 401.
func (s *Server) authenticate(r *http.Request) (*auth.Identity, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, errBadScheme
		}
		id, err := s.auth.TokenIdentity(r.Context(), strings.TrimSpace(token))
		return &id, err
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		id, err := s.auth.SessionIdentity(r.Context(), c.Value)
		return &id, err
	}
	return nil, nil
}

// gate authenticates every request, applies its route's rule, checks the CSRF token of
// cookie-authenticated writes, and records the changes its rule names in the audit log.
func (s *Server) gate(mux *chi.Mux) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if s.auth == nil { // one user who may do everything: no rule to look up, nothing to record
			local := auth.Local()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, &local)))
			})
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := accessOf(mux, r)
			id, err := s.authenticate(r)
			if err != nil {
				if a.rule != auth.Public {
					s.writeError(w, r, err)
					return
				}
				id = nil // a stale cookie does not stop the sign-in page
			}
			write := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions && !isRelay(r)
			if err := a.rule.Check(id, write); err != nil {
				s.writeError(w, r, err)
				return
			}
			if write && a.rule != auth.Public && id.Via == auth.ViaSession && !auth.CSRFMatches(*id, r.Header.Get(csrfHeader)) {
				s.writeError(w, r, errCSRF)
				return
			}
			ctx := context.WithValue(r.Context(), identityKey{}, id)
			if a.action == "" {
				next.ServeHTTP(w, r.WithContext(ctx))
				return
			}
			note := &auditNote{}
			sw := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(sw, r.WithContext(context.WithValue(ctx, auditKey{}, note)))
			status := sw.Status()
			if status == 0 {
				status = http.StatusOK
			}
			if status >= 400 {
				return
			}
			target := note.target
			if target == "" {
				target = pathTarget(r)
			}
			e := auth.Entry{Actor: id.User, Action: a.action, Target: target, Status: status, RemoteAddr: clientAddr(r), RequestID: requestID(r.Context())}
			if err := s.auth.Record(context.WithoutCancel(r.Context()), e); err != nil {
				s.log.ErrorContext(r.Context(), "audit log write failed", "action", e.Action, "target", e.Target, "err", err)
			}
		})
	}
}

// pathTarget is what a route's path parameters name, e.g. "str_3" or "builtin/AAPL".
func pathTarget(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return ""
	}
	var parts []string
	for i, k := range rc.URLParams.Keys {
		if k != "*" {
			parts = append(parts, rc.URLParams.Values[i])
		}
	}
	return strings.Join(parts, "/")
}

type auditKey struct{}

// auditNote carries what a create made (its new id) back to the gate for the audit log.
type auditNote struct{ target string }

// noteTarget names what the request made, for the audit log.
func noteTarget(r *http.Request, target string) {
	if n, ok := r.Context().Value(auditKey{}).(*auditNote); ok {
		n.target = target
	}
}
