package workload

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClassStats is the workload of the buckets of one class, together.
type ClassStats struct {
	Class   Class `json:"class"`
	Buckets int   `json:"buckets"`
	// The sums of the buckets' rates.
	OpsPerSecond      float64 `json:"ops_per_second"`
	BytesInPerSecond  float64 `json:"bytes_in_per_second"`
	BytesOutPerSecond float64 `json:"bytes_out_per_second"`
	// Latency percentiles over every read and write of the class's buckets (0: none).
	ReadP95  time.Duration `json:"read_p95_ns"`
	WriteP95 time.Duration `json:"write_p95_ns"`
}

// ByClass returns the workload of each class that has buckets in the window, in class order.
func (m *Monitor) ByClass() []ClassStats {
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now) // what aged out of the window
	var out [LargeWrites + 1]ClassStats
	var latency [LargeWrites + 1][2][latencyBuckets]uint64
	for _, b := range m.buckets {
		m.evaluate(b, now)
		st, w := m.stats(b, now), m.sum(b, now)
		c := &out[b.class]
		c.Buckets++
		c.OpsPerSecond += st.OpsPerSecond
		c.BytesInPerSecond += st.BytesInPerSecond
		c.BytesOutPerSecond += st.BytesOutPerSecond
		for op := range 2 {
			for i, n := range w.latency[op] {
				latency[b.class][op][i] += n
			}
		}
	}
	var list []ClassStats
	for cl := range out {
		if out[cl].Buckets == 0 {
			continue
		}
		out[cl].Class = Class(cl)
		if i, ok := percentile(latency[cl][0][:], 0.95); ok {
			out[cl].ReadP95 = latencyBound(i)
		}
		if i, ok := percentile(latency[cl][1][:], 0.95); ok {
			out[cl].WriteP95 = latencyBound(i)
		}
		list = append(list, out[cl])
	}
	return list
}

// Collector exports the monitor's figures by class. Buckets are not named: /metrics is served
// to anyone who can reach the endpoint, and one tenant must not learn another's bucket names;
// each bucket's figures are in the admin API (cairn admin workload).
func (m *Monitor) Collector() prometheus.Collector { return collector{m} }

type collector struct{ m *Monitor }

var (
	descBuckets = prometheus.NewDesc("cairn_workload_buckets",
		"Buckets with requests in the workload monitor's window, by workload class (A: small objects mostly read, B: small mostly written, C: large mostly read, D: large mostly written).", []string{"class"}, nil)
	descOps = prometheus.NewDesc("cairn_workload_requests_per_second",
		"Requests a second to the buckets of each workload class, over the monitor's window.", []string{"class"}, nil)
	descBytes = prometheus.NewDesc("cairn_workload_bytes_per_second",
		"Body bytes a second to (in) and from (out) the buckets of each workload class, over the monitor's window.", []string{"class", "direction"}, nil)
	descLatency = prometheus.NewDesc("cairn_workload_latency_p95_seconds",
		"95th percentile of the reads' and writes' latency in each workload class, over the monitor's window.", []string{"class", "op"}, nil)
)

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuckets, descOps, descBytes, descLatency} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.m.ByClass() {
		cl := s.Class.String()
		ch <- prometheus.MustNewConstMetric(descBuckets, prometheus.GaugeValue, float64(s.Buckets), cl)
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.GaugeValue, s.OpsPerSecond, cl)
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, s.BytesInPerSecond, cl, "in")
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, s.BytesOutPerSecond, cl, "out")
		ch <- prometheus.MustNewConstMetric(descLatency, prometheus.GaugeValue, s.ReadP95.Seconds(), cl, "read")
		ch <- prometheus.MustNewConstMetric(descLatency, prometheus.GaugeValue, s.WriteP95.Seconds(), cl, "write")
	}
}
