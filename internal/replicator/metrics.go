package replicator

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	passes     prometheus.Counter
	partitions *prometheus.CounterVec
	pushed     *prometheus.CounterVec
	bytes      prometheus.Counter
	evicted    prometheus.Counter
	progress   prometheus.Gauge
	handoffs   prometheus.Gauge
	lastPass   prometheus.Gauge
	lastEnd    prometheus.Gauge
}

func newMetrics() metrics {
	return metrics{
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_replication_passes_total",
			Help: "Object replication passes completed."}),
		partitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_partitions_total",
			Help: "Partitions replicated, by kind (primary: the device is one of the partition's primaries; handoff: it holds the partition away from them) and outcome (ok, or failed: a replica could not be reached or written, retried next pass)."},
			[]string{"kind", "outcome"}),
		pushed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_pushed_total",
			Help: "Versions sent to replicas that lacked them or held them older, by kind (object, tombstone)."}, []string{"kind"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_replication_pushed_bytes_total",
			Help: "Object bytes sent to other replicas."}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_replication_handoff_evicted_total",
			Help: "Versions removed from a handoff device once every primary held them."}),
		progress: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_pass_progress",
			Help: "Fraction of the current (or last) pass's partitions done."}),
		handoffs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_handoff_partitions",
			Help: "Partitions held away from their primaries (handoffs, or moved by a rebalance) at the end of the last pass: 0 when everything is home."}),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_last_pass_seconds",
			Help: "Duration of the last completed replication pass."}),
		lastEnd: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_last_pass_end_seconds",
			Help: "Unix time the last replication pass completed."}),
	}
}

func (m metrics) register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.passes, m.partitions, m.pushed, m.bytes, m.evicted, m.progress, m.handoffs, m.lastPass, m.lastEnd} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
