package swift

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts requests by operation and status, and times them by operation.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics builds the collectors and registers them on reg; with reg nil they are kept but
// exported nowhere.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "cairn", Subsystem: "swift", Name: "requests_total",
			Help: "Swift requests served, by operation and HTTP status.",
		}, []string{"operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "cairn", Subsystem: "swift", Name: "request_duration_seconds",
			Help:    "Time to serve a Swift request, by operation (until the handler returns).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"operation"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				// A second handler on the same registry shares the first one's collectors.
				switch existing := already.ExistingCollector.(type) {
				case *prometheus.CounterVec:
					m.requests = existing
				case *prometheus.HistogramVec:
					m.duration = existing
				}
				continue
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(op string, status int, d time.Duration) {
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(op).Observe(d.Seconds())
}
