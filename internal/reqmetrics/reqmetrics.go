// Package reqmetrics owns what every protocol front end (S3, Swift) measures about the requests
// it serves: a Prometheus counter by operation and status and a latency histogram by operation,
// what the workload monitor is told of each request, and the response writer that remembers
// which status a handler sent and how many bytes.
package reqmetrics

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/workload"
)

// Metrics counts requests by operation and status, and times them by operation.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// New builds the collectors cairn_<subsystem>_requests_total and
// cairn_<subsystem>_request_duration_seconds and registers them on reg; with reg nil they are
// kept but exported nowhere. protocol names the protocol in the help texts ("S3", "Swift").
func New(reg prometheus.Registerer, subsystem, protocol string) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "cairn", Subsystem: subsystem, Name: "requests_total",
			Help: protocol + " requests served, by operation and HTTP status.",
		}, []string{"operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "cairn", Subsystem: subsystem, Name: "request_duration_seconds",
			Help:    "Time to serve one " + protocol + " request, by operation (until the handler returns).",
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

// Observe records one served request.
func (m *Metrics) Observe(op string, status int, d time.Duration) {
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(op).Observe(d.Seconds())
}

// ObserveWorkload tells the workload monitor (nil: none) of a request served: kind is what
// the front end's operation does, account and bucket whose data it works on. The object's size
// is the body sent by a GET answered 2xx, or the one received by a write answered 2xx (none
// for a copy, an empty body or one of unknown length).
func ObserveWorkload(m *workload.Monitor, account, bucket string, kind workload.Kind, r *http.Request, rec *StatusRecorder, d time.Duration) {
	if m == nil {
		return
	}
	in := requestBytes(r)
	size := int64(-1)
	if ok := rec.Status == 0 || rec.Status/100 == 2; ok {
		switch {
		case kind == workload.Read && r.Method == http.MethodGet:
			size = rec.Written
		case kind == workload.Write && in > 0:
			size = in
		}
	}
	m.Observe(workload.Observation{Account: account, Bucket: bucket, Kind: kind, Size: size, In: max(in, 0), Out: rec.Written, Latency: d})
}

// requestBytes is the length of a request's body as sent (an aws-chunked body's decoded
// length), -1 when unknown.
func requestBytes(r *http.Request) int64 {
	if v := r.Header.Get("X-Amz-Decoded-Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return r.ContentLength
}

// StatusRecorder remembers the status a handler sent, and how many body bytes it wrote.
type StatusRecorder struct {
	http.ResponseWriter
	Status      int
	WroteHeader bool
	Written     int64
}

func (s *StatusRecorder) WriteHeader(code int) {
	if !s.WroteHeader {
		s.Status, s.WroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *StatusRecorder) Write(b []byte) (int, error) {
	if !s.WroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(b)
	s.Written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes, deadlines).
func (s *StatusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
