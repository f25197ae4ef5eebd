package service

import (
	"net/http"

	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newRegistry is the process's metrics: Go's and the process's own, the task service's,
// the runner pool's, and the database pools' (the API adds its own when it serves).
func (s *Service) newRegistry(workers int, serving bool) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		s.tasks.svc.Collector(),
		s.tasks.store.Collector("workers"),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "backtestd_workers", Help: "Backtests this process's workers run at once at most (WORKERS)."},
			func() float64 { return float64(workers) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "backtestd_runner_processes", Help: "Runner processes alive for strategy code: running, warm or idle."},
			func() float64 { return float64(s.runners.Stats().Processes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "backtestd_runner_busy", Help: "Runs and inspections of strategy code in progress in runner processes."},
			func() float64 { return float64(s.runners.Stats().Busy) }),
	)
	if serving {
		reg.MustRegister(s.db.Store.Collector("api"))
	}
	return reg
}

// MetricsHandler serves the process's metrics in Prometheus's text format, without
// authentication: `backtestd worker` serves it on METRICS_LISTEN, an address only the
// Prometheus server should reach. `backtestd serve` has /metrics in its API instead.
func (s *Service) MetricsHandler() http.Handler { return httpapi.MetricsHandler(s.metrics, s.log) }
