package store

import (
	"github.com/prometheus/client_golang/prometheus"
)

// poolMetrics reports a connection pool's use at each scrape.
type poolMetrics struct {
	s                                       *Store
	conns, maxConns, acquires, empty, waitD *prometheus.Desc
}

// Collector is the metrics of the store's connection pool, labelled pool=name (the service
// has one pool for requests and one for workers).
func (s *Store) Collector(name string) prometheus.Collector {
	l := prometheus.Labels{"pool": name}
	return &poolMetrics{
		s:        s,
		conns:    prometheus.NewDesc("backtestd_db_pool_connections", "Connections of the database pool by state (acquired: in use; idle).", []string{"state"}, l),
		maxConns: prometheus.NewDesc("backtestd_db_pool_max_connections", "The most connections the database pool opens.", nil, l),
		acquires: prometheus.NewDesc("backtestd_db_pool_acquires_total", "Connections taken from the database pool.", nil, l),
		empty:    prometheus.NewDesc("backtestd_db_pool_empty_acquires_total", "Connections taken from the database pool that had to wait, none being idle.", nil, l),
		waitD:    prometheus.NewDesc("backtestd_db_pool_acquire_wait_seconds_total", "Time spent waiting for a connection of the database pool.", nil, l),
	}
}

func (m *poolMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.conns, m.maxConns, m.acquires, m.empty, m.waitD} {
		ch <- d
	}
}

func (m *poolMetrics) Collect(ch chan<- prometheus.Metric) {
	st := m.s.Pool.Stat()
	ch <- prometheus.MustNewConstMetric(m.conns, prometheus.GaugeValue, float64(st.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(m.conns, prometheus.GaugeValue, float64(st.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(m.maxConns, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(m.acquires, prometheus.CounterValue, float64(st.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(m.empty, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(m.waitD, prometheus.CounterValue, st.AcquireDuration().Seconds())
}
