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
	evicted    *prometheus.CounterVec
	listings   *prometheus.CounterVec
	offered    *prometheus.CounterVec
	progress   prometheus.Gauge
	handoffs   prometheus.Gauge
	lastPass   prometheus.Gauge
	lastEnd    prometheus.Gauge
}

func newMetrics() metrics {
	return metrics{
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_replication_passes_total",
			Help: "Replication passes completed (each over the object, container and account partitions of the node's devices)."}),
		partitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_partitions_total",
			Help: "Partitions replicated, by ring (object, container, account), kind (primary: the device is one of the partition's primaries; handoff: it holds the partition away from them) and outcome (ok, or failed: a replica could not be reached or written, retried next pass)."},
			[]string{"ring", "kind", "outcome"}),
		pushed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_pushed_total",
			Help: "What was sent to replicas that lacked it or held it older, by ring and kind: object ring: object, tombstone; container ring: record (a container's creation, deletion or metadata), row (an object row or listing tombstone); account ring: row (a container's row)."},
			[]string{"ring", "kind"}),
		listings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_listings_total",
			Help: "Containers (ring container) and accounts (ring account) compared with a replica, by outcome: in_sync (the digests agreed), synced (something was sent), failed."},
			[]string{"ring", "outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_replication_pushed_bytes_total",
			Help: "Object bytes sent to other replicas."}),
		offered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_rows_offered_total",
			Help: "Versions of listing rows (names and timestamps) offered to replicas whose digests differed, by ring; the rows they took are counted in cairn_replication_pushed_total."},
			[]string{"ring"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_replication_handoff_evicted_total",
			Help: "What a handoff device removed once every primary held it, by ring: object versions, listing rows, and listings (a container's record, an account's totals)."},
			[]string{"ring"}),
		progress: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_pass_progress",
			Help: "Fraction of the current (or last) pass's partitions done."}),
		handoffs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_handoff_partitions",
			Help: "Partitions of any ring (object, container, account) held away from their primaries (handoffs, or moved by a rebalance) at the end of the last pass: 0 when everything is home."}),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_last_pass_seconds",
			Help: "Duration of the last completed replication pass."}),
		lastEnd: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_replication_last_pass_end_seconds",
			Help: "Unix time the last replication pass completed."}),
	}
}

func (m metrics) register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.passes, m.partitions, m.pushed, m.listings, m.offered, m.bytes, m.evicted, m.progress, m.handoffs, m.lastPass, m.lastEnd} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
