package tasks

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics is what the task service measures for /metrics: run durations and queue waits
// observed by this process's workers, and, read from the database at each scrape, the
// tasks in each state and the longest current wait of the queue (shared by every process).
type metrics struct {
	runs    *prometheus.HistogramVec
	wait    prometheus.Histogram
	busy    atomic.Int32
	busyD   *prometheus.Desc
	statesD *prometheus.Desc
	oldestD *prometheus.Desc
	s       *Service
}

func newMetrics(s *Service) *metrics {
	return &metrics{
		runs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "backtestd_task_run_seconds",
			Help: "How long backtests run in this process's workers, from start to the stored outcome, by outcome (completed, failed, requeued).",
			// Backtests take from well under a second to the run time limit.
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800},
		}, []string{"outcome"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "backtestd_queue_wait_seconds",
			Help:    "How long backtests waited in the queue before this process's workers started them.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}),
		busyD: prometheus.NewDesc("backtestd_worker_busy", "Backtests this process's workers are running now.", nil, nil),
		statesD: prometheus.NewDesc("backtestd_tasks", "Tasks in each state (pending is the queue's depth), over all processes.",
			[]string{"state"}, nil),
		oldestD: prometheus.NewDesc("backtestd_queue_oldest_wait_seconds",
			"How long the longest-waiting pending task has waited since it was queued (0 when none waits), over all processes.", nil, nil),
		s: s,
	}
}

// Collector is the task service's metrics, for a Prometheus registry.
func (s *Service) Collector() prometheus.Collector { return s.metrics }

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.runs.Describe(ch)
	m.wait.Describe(ch)
	ch <- m.busyD
	ch <- m.statesD
	ch <- m.oldestD
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.runs.Collect(ch)
	m.wait.Collect(ch)
	ch <- prometheus.MustNewConstMetric(m.busyD, prometheus.GaugeValue, float64(m.busy.Load()))
	// A scrape must not hang on a busy database: what cannot be read in time is reported
	// as an error of these metrics, and the rest are still served.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := m.s.q.TaskStateCounts(ctx, m.s.db.Pool)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(m.statesD, err)
		return
	}
	n := make(map[string]int64, len(Machine.States))
	for _, c := range counts {
		n[c.Status] = c.Tasks
	}
	for _, st := range Machine.Names() { // every state, so a rule on a state that is empty now still sees 0
		ch <- prometheus.MustNewConstMetric(m.statesD, prometheus.GaugeValue, float64(n[st]), st)
	}
	oldest, err := m.s.q.OldestPendingWait(ctx, m.s.db.Pool)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(m.oldestD, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(m.oldestD, prometheus.GaugeValue, max(oldest, 0))
}

// started records a run starting after waiting since queued, and returns the function
// that records its end with its outcome.
func (m *metrics) started(queued time.Time, firstRun bool) func(outcome string) {
	if firstRun { // a rescued or retried run of the same job waited once already
		m.wait.Observe(max(time.Since(queued).Seconds(), 0))
	}
	m.busy.Add(1)
	start := time.Now()
	return func(outcome string) {
		m.busy.Add(-1)
		m.runs.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	}
}
