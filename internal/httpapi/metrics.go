package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpMetrics is what the API measures for /metrics: request latency by route, and open
// WebSocket connections.
type httpMetrics struct {
	latency *prometheus.HistogramVec
}

// newHTTPMetrics registers the API's metrics on reg.
func newHTTPMetrics(reg prometheus.Registerer, ws *wsGate) *httpMetrics {
	m := &httpMetrics{latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "backtestd_http_request_duration_seconds",
		Help:    "How long HTTP requests took to answer, by method, route pattern and status code (WebSocket connections are counted in backtestd_websocket_connections instead).",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"method", "route", "code"})}
	reg.MustRegister(m.latency, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "backtestd_websocket_connections",
		Help: "Open WebSocket connections (task progress and logs).",
	}, func() float64 { return float64(ws.count()) }))
	return m
}

// measure times every request under its route pattern ("/api/tasks/{task_id}", never the
// path itself, so ids do not make a series each); paths no route matches count as
// "unmatched". WebSocket connections are not timed: they last as long as a page is open.
func (m *httpMetrics) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		status := ww.Status()
		if status == 0 {
			if r.Header.Get("Upgrade") != "" {
				return // hijacked for a WebSocket
			}
			status = http.StatusOK
		}
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		m.latency.WithLabelValues(r.Method, route, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
	})
}

// MetricsHandler serves reg in Prometheus's text format (the API's /metrics, and
// `backtestd worker`'s). A metric that cannot be read now (the database is slow to answer)
// is left out and logged; the rest are served.
func MetricsHandler(reg prometheus.Gatherer, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      promLog{log},
	})
}

// promLog gives promhttp's errors to the service's log.
type promLog struct{ log *slog.Logger }

func (l promLog) Println(v ...any) { l.log.Warn("metrics: " + fmt.Sprint(v...)) }

// requestLog adds the request id to every log record made with a request's context
// (log.InfoContext(r.Context(), …)), so every line of a request can be found by its id.
type requestLog struct{ slog.Handler }

func (h requestLog) Handle(ctx context.Context, rec slog.Record) error {
	if id := requestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h requestLog) WithAttrs(a []slog.Attr) slog.Handler {
	return requestLog{h.Handler.WithAttrs(a)}
}

func (h requestLog) WithGroup(name string) slog.Handler {
	return requestLog{h.Handler.WithGroup(name)}
}
