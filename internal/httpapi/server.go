// Package httpapi is the HTTP and WebSocket API: one http.Handler built by New, servable on
// its own, under a path prefix, or mounted in another program's router. Handlers are thin:
// they decode input, call one store or service function and encode the result.
package httpapi

import (
	"compress/gzip"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/cors"
	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/lookahead"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/mcpserver"
	"github.com/backtestd/backtestd/internal/pricepaths"
	"github.com/backtestd/backtestd/internal/procstat"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
	"github.com/backtestd/backtestd/internal/studies"
	"github.com/backtestd/backtestd/internal/tasks"
)

// Version is the API version reported at GET /.
const Version = "1.0.0"

// DefaultMaxBody is the default limit on request bodies (strategy code is the largest).
const DefaultMaxBody = 1 << 20

// Config holds the API's settings.
type Config struct {
	BasePath    string   // e.g. "/backtests"; empty serves at the root
	CORSOrigins []string // origins other pages may call from; empty: none; "*" (accounts off only): any, without credentials
	MaxBody     int64    // request body limit in bytes; 0 means DefaultMaxBody

	// AllowedHosts are the Host names served besides loopback ones (see hostGuard); "*": any.
	AllowedHosts []string

	// WebSocket limits (see ws.go). Zero means the Default* value; a negative cap or rate
	// means no limit. The connection caps count this handler's open connections; the
	// per-address one keys on the host of the request's RemoteAddr.
	WSMaxConns        int     // open connections in all; over it the upgrade answers 503
	WSMaxConnsPerAddr int     // open connections from one client address; over it 429
	WSMsgRate         float64 // client messages per second on one connection; over it close 1008
	WSMsgBurst        int     // messages a connection may send at once before WSMsgRate applies; <= 0 default

	// ReadMemory is the bytes that heavy reads (charts, exports and comparisons of long
	// results) may hold at once (see readbudget.go); 0 means DefaultReadMemory. ReadWait is
	// how long one waits for its share, ReadStall how long a client may take no part of a
	// heavy answer; 0 means DefaultReadWait and DefaultReadStall.
	ReadMemory          int64
	ReadWait, ReadStall time.Duration
	// ReadConcurrency is how many heavy reads run at once; 0 means DefaultReadConcurrency
	// (one fewer than GOMAXPROCS, at least 1).
	ReadConcurrency int
}

// Deps are the parts the API talks to.
type Deps struct {
	Store *store.Store // health checks; the default Data and Results read through it
	// Data is the market data service; nil: one over Store that cannot queue refreshes.
	Data *marketdata.Service
	// Results reads stored results; nil: one over Store.
	Results *results.Service
	// Report builds charts, exports and comparisons; nil: one over Results and Data.
	Report *report.Service
	Logger *slog.Logger
	Tasks  *tasks.Service // backtest tasks; nil leaves the task routes answering 503
	// Studies is the parameter study service; nil leaves the study routes answering 503.
	Studies *studies.Service
	// Lookahead is the look-ahead check service; nil leaves its routes answering 503 and
	// runs without a lookahead verdict.
	Lookahead *lookahead.Service
	// Paths is Monte Carlo on price paths; nil leaves method=price_paths answering 503.
	Paths *pricepaths.Service
	Hub   *events.Hub // WebSocket fan-out fed by the process's event listener
	// Strategies is the strategy service; its inspector runs uploaded code in runner
	// processes.
	Strategies *strategy.Service
	// Auth is the accounts service: with it every route but the public ones needs a
	// signed-in user or an API token; nil is the single-user service without accounts.
	Auth *auth.Service
	// Metrics is the registry /metrics serves, holding the service's other metrics; the
	// API adds its own. Nil: a registry of the API's metrics only.
	Metrics *prometheus.Registry
}

// Server holds the API's dependencies. It is created by New and used through its handler.
type Server struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	tasks   *tasks.Service
	studies *studies.Service
	look    *lookahead.Service
	paths   *pricepaths.Service
	hub     *events.Hub
	strat   *strategy.Service
	data    *marketdata.Service
	results *results.Service
	report  *report.Service
	ws      *wsGate // WebSocket connection caps, shared by all of this handler's sockets
	reads   *readBudget
	healthy *healthCheck // /health's database check, apart from the pool
	auth    *auth.Service
	// retention pins runs and studies and prunes old ones (over store).
	retention *retention.Service
	reg       *prometheus.Registry
	httpm     *httpMetrics
}

// New builds the API handler.
func New(cfg Config, deps Deps) http.Handler {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	cfg.BasePath = strings.TrimRight(cfg.BasePath, "/")
	s := &Server{cfg: cfg, store: deps.Store, log: deps.Logger, tasks: deps.Tasks, studies: deps.Studies, look: deps.Lookahead, paths: deps.Paths, hub: deps.Hub, strat: deps.Strategies, ws: newWSGate(cfg), auth: deps.Auth, reads: newReadBudget(cfg)}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = slog.New(requestLog{s.log.Handler()})
	if s.reg = deps.Metrics; s.reg == nil {
		s.reg = prometheus.NewRegistry()
	}
	s.httpm = newHTTPMetrics(s.reg, s.ws)
	if s.data = deps.Data; s.data == nil && deps.Store != nil {
		s.data = marketdata.NewService(deps.Store, nil)
	}
	if s.results = deps.Results; s.results == nil && deps.Store != nil {
		s.results = results.NewService(deps.Store.Pool)
	}
	if deps.Store != nil {
		s.retention = retention.New(deps.Store, s.log)
		s.healthy = newHealthCheck(deps.Store.Pool)
	}
	if s.report = deps.Report; s.report == nil && s.results != nil {
		s.report = report.New(s.results, s.data.Bars)
	}
	r := s.routes()
	if cfg.BasePath == "" {
		return r
	}
	outer := chi.NewRouter()
	outer.Use(checkFraming) // for requests outside BasePath too, so each is counted (framedConn.next)
	outer.Mount(cfg.BasePath, r)
	return outer
}

// compression gzips responses of 1 KiB and more (JSON, CSV, HTML, scripts, styles) for
// clients that accept it; responses already encoded (the pre-compressed page assets) and
// WebSocket upgrades pass through.
func compression() func(http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(gzhttp.DefaultMinSize), gzhttp.CompressionLevel(gzip.DefaultCompression),
		gzhttp.ContentTypes([]string{"application/json", "text/csv", "text/html", "text/javascript", "application/javascript", "text/css", "image/svg+xml", "application/yaml", "text/plain"}))
	if err != nil {
		panic(err) // the options above are constants
	}
	return func(h http.Handler) http.Handler { return wrap(h) }
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(checkFraming, s.httpm.measure, withRequestID, s.recoverer, logRequests(s.log), s.hostGuard(), s.cors(), securityHeaders, s.refuseCrossSite(), refuseBadText, compression(), s.gate(r))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
	})
	r.Get("/", s.handle(s.root))
	r.Get("/health", s.handle(s.health))
	r.Method(http.MethodGet, "/metrics", MetricsHandler(s.reg, s.log))
	s.mountDocs(r)
	s.mountStrategies(r)
	s.mountTasks(r)
	s.mountStudies(r)
	s.mountSockets(r)
	s.mountSecondary(r)
	s.mountResults(r)
	s.mountData(r)
	s.mountUI(r)
	s.mountAccounts(r)
	r.Post("/api/admin/prune", s.handleIf(s.retention != nil, "Retention", s.prune))
	// The MCP tools call this router in-process, with each MCP request's credentials.
	r.Method(http.MethodPost, mcpPath, mcpserver.HTTPHandler(mcpserver.New(r, mcpserver.Options{}), s.cfg.MaxBody))
	checkRoutes(r)
	return r
}

func (s *Server) root(w http.ResponseWriter, r *http.Request) error {
	w.Header().Add("Vary", "Accept")
	if wantsHTML(r) { // a browser: the web page; API clients keep the JSON below
		http.Redirect(w, r, s.cfg.BasePath+"/ui/", http.StatusFound)
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"name":    "backtestd",
		"version": Version,
		"docs":    s.cfg.BasePath + "/docs",
	})
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if err := s.healthy.check(r.Context()); err != nil {
		s.log.WarnContext(r.Context(), "health check failed", "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(apperr.DatabaseRetryAfter/time.Second)))
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{
			"status": "unavailable",
			"detail": fmt.Sprintf("database unreachable: %v", err),
		})
		return nil
	}
	if r.URL.Query().Get("detail") == "" {
		// accounts: whether callers must sign in, so the page can open on sign-in without
		// first asking who the caller is (a 401 in a newcomer's console).
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "accounts": s.auth != nil})
		return nil
	}
	if s.auth != nil { // the process's gauges are for whoever may read the metrics
		if err := auth.Metrics.Check(identity(r), false); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, s.runtimeDetail())
	return nil
}

// runtimeDetail is GET /health?detail=1: the process's own gauges, which a soak run
// compares at its start and end (memory, goroutines, connections and files must stay flat).
func (s *Server) runtimeDetail() map[string]any {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	st := s.store.Pool.Stat()
	s.ws.mu.Lock()
	ws := s.ws.open
	s.ws.mu.Unlock()
	files, rss := -1, -1 // unknown off Linux
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		files = len(fds)
	}
	if n, err := procstat.RSS(os.Getpid()); err == nil {
		rss = int(n)
	}
	return map[string]any{
		"status":     "ok",
		"goroutines": runtime.NumGoroutine(),
		"heap_bytes": m.HeapAlloc,
		"sys_bytes":  m.Sys,
		"rss_bytes":  rss,
		"db_conns":   st.TotalConns(),
		"websockets": ws,
		"open_files": files,
	}
}

func (s *Server) cors() func(http.Handler) http.Handler {
	opts := cors.Options{
		AllowedMethods: []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"},
		AllowedHeaders: []string{"*"},
		MaxAge:         600,
	}
	switch {
	case anyOrigin(s.cfg.CORSOrigins) && s.auth == nil:
		// CORS_ORIGINS=*: the reference's permissive development policy, but never with
		// credentials (a page elsewhere must not act with a user's cookies).
		s.log.Warn("CORS_ORIGINS=*: any web page the user visits may call this API (read strategy code, run and delete backtests); for development only")
		opts.AllowedOrigins = []string{"*"}
	case len(s.cfg.CORSOrigins) == 0 || anyOrigin(s.cfg.CORSOrigins):
		// None listed (with accounts the service refuses "*" at start): no cross-origin
		// calls, so a page the user visits cannot read or change their work.
		return func(h http.Handler) http.Handler { return h }
	default:
		opts.AllowedOrigins = s.cfg.CORSOrigins
		opts.AllowCredentials = true
	}
	return cors.Handler(opts)
}

// anyOrigin says whether origins is CORS_ORIGINS's "any" ("*"; unset is none).
func anyOrigin(origins []string) bool {
	return len(origins) == 1 && origins[0] == "*"
}

// recoverer turns a panic into the 500 envelope and logs it.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.internalError(w, r, fmt.Errorf("panic: %v", v), "stack", string(debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
