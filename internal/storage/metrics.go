package storage

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Collector returns a Prometheus collector of the node's LSM state per device, read when
// scraped: what an operator watches to see a device falling behind (compaction debt, L0 files,
// read amplification) or its cache being too small (hits and misses).
func (n *Node) Collector() prometheus.Collector { return nodeCollector{n} }

type nodeCollector struct{ n *Node }

var (
	descL0Files   = prometheus.NewDesc("cairn_lsm_l0_tables", "SSTables in L0 of the device's LSM.", []string{"device"}, nil)
	descTables    = prometheus.NewDesc("cairn_lsm_tables", "SSTables in the device's LSM, all levels.", []string{"device"}, nil)
	descReadAmp   = prometheus.NewDesc("cairn_lsm_read_amplification", "Tables a point lookup may have to consult.", []string{"device"}, nil)
	descDebt      = prometheus.NewDesc("cairn_lsm_compaction_debt_bytes", "Estimated bytes compactions must still rewrite.", []string{"device"}, nil)
	descCompacts  = prometheus.NewDesc("cairn_lsm_compactions_total", "Compactions run since the device was opened.", []string{"device"}, nil)
	descMemtable  = prometheus.NewDesc("cairn_lsm_memtable_bytes", "Bytes in the device's memtables.", []string{"device"}, nil)
	descCacheSize = prometheus.NewDesc("cairn_lsm_block_cache_bytes", "Bytes in the device's block cache.", []string{"device"}, nil)
	descCacheHits = prometheus.NewDesc("cairn_lsm_block_cache_hits_total", "Block cache hits.", []string{"device"}, nil)
	descCacheMiss = prometheus.NewDesc("cairn_lsm_block_cache_misses_total", "Block cache misses.", []string{"device"}, nil)
	descFileSyncs = prometheus.NewDesc("cairn_device_file_syncs_total", "Fsyncs of data files and directories on the device (the WAL's are cairn_lsm_wal_syncs_total).", []string{"device"}, nil)
	descWALSyncs  = prometheus.NewDesc("cairn_lsm_wal_syncs_total", "WAL fsyncs of the device's LSM: PUTs that share one (group commit) count once.", []string{"device"}, nil)
	descCorrupt   = prometheus.NewDesc("cairn_device_corrupt_objects", "Object versions found corrupt and kept, flagged, until rewritten or repaired; reads of them fail.", []string{"device"}, nil)
	descChecksum  = prometheus.NewDesc("cairn_device_checksum_failures_total", "Object versions found corrupt since the device was opened.", []string{"device"}, nil)
	descBallast   = prometheus.NewDesc("cairn_device_ballast_bytes", "Size of the device's ballast file: 0 when it was removed to give a full disk room (free space, then it comes back).", []string{"device"}, nil)
	descOrphans   = prometheus.NewDesc("cairn_device_orphans_quarantined_total", "Data files without a record moved to the device's quarantine directory when it was opened.", []string{"device"}, nil)
	descRowsSkip  = prometheus.NewDesc("cairn_device_listing_rows_skipped_total", "Times listings skipped a listing or account row that failed its checksum (never shown; the auditor removes or rebuilds it).", []string{"device"}, nil)
	descRowsRepl  = prometheus.NewDesc("cairn_device_listing_rows_replaced_total", "Listing rows failing their checksums that writes replaced (the auditor then recounts the container's usage).", []string{"device"}, nil)
)

// nodeMetrics are the node's own counters, beside the per-device state read when scraped.
type nodeMetrics struct {
	listingUpdates *prometheus.CounterVec
	pendingUpdates prometheus.Gauge
	accountUpdates *prometheus.CounterVec
	pendingRows    prometheus.Gauge
}

func newNodeMetrics() nodeMetrics {
	return nodeMetrics{
		listingUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_listing_updates_total",
			Help: "Listing updates sent to container replicas on other devices, by outcome: sent, or deferred to the updater."}, []string{"outcome"}),
		pendingUpdates: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_listing_updates_pending",
			Help: "Listing updates left waiting for their container replica by the updater's last pass."}),
		accountUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_account_updates_total",
			Help: "Account rows sent to account replicas on other devices, by kind (row: a container created or deleted; usage: the stats pass) and outcome (sent, or deferred to the updater)."}, []string{"kind", "outcome"}),
		pendingRows: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_account_updates_pending",
			Help: "Account rows of created or deleted containers left waiting for their account replica by the updater's last pass."}),
	}
}

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	c.n.metrics.listingUpdates.Describe(ch)
	c.n.metrics.pendingUpdates.Describe(ch)
	c.n.metrics.accountUpdates.Describe(ch)
	c.n.metrics.pendingRows.Describe(ch)
	for _, d := range []*prometheus.Desc{descL0Files, descTables, descReadAmp, descDebt, descCompacts, descMemtable, descCacheSize, descCacheHits, descCacheMiss, descWALSyncs, descFileSyncs, descCorrupt, descChecksum, descOrphans, descBallast, descRowsSkip, descRowsRepl} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	c.n.metrics.listingUpdates.Collect(ch)
	c.n.metrics.pendingUpdates.Collect(ch)
	c.n.metrics.accountUpdates.Collect(ch)
	c.n.metrics.pendingRows.Collect(ch)
	for name, d := range c.n.devs() {
		m := d.db.Metrics()
		var tables int64
		for _, l := range m.Levels {
			tables += l.TablesCount
		}
		gauge := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, name)
		}
		counter := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, name)
		}
		gauge(descL0Files, float64(m.Levels[0].TablesCount))
		gauge(descTables, float64(tables))
		gauge(descReadAmp, float64(m.ReadAmp()))
		gauge(descDebt, float64(m.Compact.EstimatedDebt))
		counter(descCompacts, float64(m.Compact.Count))
		gauge(descMemtable, float64(m.MemTable.Size))
		gauge(descCacheSize, float64(m.BlockCache.Size))
		counter(descCacheHits, float64(m.BlockCache.Hits))
		counter(descCacheMiss, float64(m.BlockCache.Misses))
		if h := m.LogWriter.FsyncLatency; h != nil {
			var pm dto.Metric
			if h.Write(&pm) == nil && pm.Histogram != nil {
				counter(descWALSyncs, float64(pm.Histogram.GetSampleCount()))
			}
		}
		st := d.engine.Stats()
		gauge(descCorrupt, float64(st.CorruptObjects))
		counter(descChecksum, float64(st.ChecksumFailures))
		counter(descOrphans, float64(st.OrphansQuarantined))
		counter(descFileSyncs, float64(st.FileSyncs))
		gauge(descBallast, float64(st.BallastBytes))
		ist := d.index.Stats()
		counter(descRowsSkip, float64(ist.UnreadableRowsSkipped))
		counter(descRowsRepl, float64(ist.UnreadableRowsReplaced))
	}
}
