package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// AuditorConfig configures the node's auditor, the daemon that re-reads everything its devices
// store and checks it against its checksums, so that a copy that went bad is found (and, in a
// cluster, restored by replication from a good one) before anyone needs it.
type AuditorConfig struct {
	// Interval is the rest between two passes over all devices (default DefaultAuditInterval).
	Interval time.Duration
	// BytesPerSecond bounds the bytes a pass reads a second: records, listing rows and data
	// files (default DefaultAuditBytesPerSecond; negative: no bound). Devices are audited one at a
	// time, so it bounds the disk bandwidth the auditor takes from any one of them.
	BytesPerSecond int64
	// RecordsPerSecond bounds the object records and listing rows a pass visits a second
	// (default DefaultAuditRecordsPerSecond; negative: no bound).
	RecordsPerSecond int
	Logger           *slog.Logger
	// Registry receives the auditor's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// The auditor's defaults: Swift's object auditor rests 30 s between passes and reads at most
// 10 MB/s.
const (
	DefaultAuditInterval         = 30 * time.Second
	DefaultAuditBytesPerSecond   = 10 << 20
	DefaultAuditRecordsPerSecond = 2000
)

// Validate fills in defaults and checks the rest.
func (c *AuditorConfig) Validate() error {
	if c.Interval == 0 {
		c.Interval = DefaultAuditInterval
	}
	if c.Interval < 0 {
		return errors.New("storage: auditor: negative interval")
	}
	if c.BytesPerSecond == 0 {
		c.BytesPerSecond = DefaultAuditBytesPerSecond
	}
	if c.RecordsPerSecond == 0 {
		c.RecordsPerSecond = DefaultAuditRecordsPerSecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Auditor is the running daemon.
type Auditor struct {
	cfg AuditorConfig
	n   *Node
	// records and bytes are nil when unbounded.
	records, bytes *rate.Limiter
	m              auditorMetrics
	loop           *daemon.Loop

	mu     sync.Mutex
	status nodeclient.DaemonStatus // what DaemonStatus reports
}

// DaemonStatus is the auditor's progress as the node reports it (cairn admin status): passes
// over all devices, the current one's progress by device, and what the last pass found.
func (a *Auditor) DaemonStatus() nodeclient.DaemonStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.status
	st.Counters = maps.Clone(st.Counters)
	return st
}

type auditorMetrics struct {
	records, bytes, passes, errs, sealed, recounted *prometheus.CounterVec
	failures                                        *prometheus.CounterVec
	progress, lastPass                              *prometheus.GaugeVec
}

func newAuditorMetrics() auditorMetrics {
	dev := []string{"device"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, dev)
	}
	return auditorMetrics{
		records: counter("cairn_auditor_records_total", "Object records and listing rows the auditor read (the rows a recount of usage reads included).", dev),
		bytes:   counter("cairn_auditor_bytes_total", "Bytes the auditor read and verified: records, listing rows and data files.", dev),
		failures: counter("cairn_auditor_failures_total",
			"What the auditor found failing its checksums, by kind: object (a version, flagged corrupt: reads of it fail until it is rewritten or restored) or listing (a listing row or account row, removed or rebuilt).",
			[]string{"device", "kind"}),
		passes: counter("cairn_auditor_passes_total", "Auditor passes completed over a device.", dev),
		errs:   counter("cairn_auditor_errors_total", "Auditor passes over a device that stopped on an error (retried next pass).", dev),
		sealed: counter("cairn_auditor_listing_rows_sealed_total",
			"Listing rows written before rows carried checksums that the auditor gave one.", dev),
		recounted: counter("cairn_auditor_usage_recounts_total",
			"Containers and accounts whose usage counters the auditor corrected from their listings (after a bad row was removed or replaced).", dev),
		progress: gauge("cairn_auditor_pass_progress", "How far the auditor's current pass over a device has come (0 to 1, by the position of the keys passed in the device's LSM); 1 between passes."),
		lastPass: gauge("cairn_auditor_last_pass_completion_timestamp_seconds", "When the auditor last completed a pass over the device (Unix time)."),
	}
}

func (m auditorMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.records, m.bytes, m.failures, m.passes, m.errs, m.sealed, m.recounted, m.progress, m.lastPass}
}

// NewAuditor returns the node's auditor; Start runs it.
func (n *Node) NewAuditor(cfg AuditorConfig) (*Auditor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Auditor{cfg: cfg, n: n, m: newAuditorMetrics()}
	if cfg.RecordsPerSecond > 0 {
		a.records = rate.NewLimiter(rate.Limit(cfg.RecordsPerSecond), max(1, cfg.RecordsPerSecond/10))
	}
	if cfg.BytesPerSecond > 0 {
		a.bytes = rate.NewLimiter(rate.Limit(cfg.BytesPerSecond), int(max(1, min(cfg.BytesPerSecond/10, 1<<30))))
	}
	if cfg.Registry != nil {
		for _, c := range a.m.collectors() {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("storage: auditor metrics: %w", err)
			}
		}
	}
	return a, nil
}

// Start runs passes until Stop, resting Interval before each.
func (a *Auditor) Start() {
	a.loop = daemon.StartPaused(a.cfg.Interval, func(ctx context.Context) { a.Pass(ctx) })
}

// Stop ends the daemon, waiting for a running pass to stop.
func (a *Auditor) Stop() {
	if a.loop != nil {
		a.loop.Stop()
	}
}

// AuditResult is what one pass did on one device.
type AuditResult struct {
	Objects  engine.AuditStats
	Listings index.AuditStats
	// Err is what stopped the pass over the device early (nil: it completed).
	Err error
}

// Pass audits every device once, one device at a time, and returns what it did by device.
func (a *Auditor) Pass(ctx context.Context) map[string]AuditResult {
	names := make([]string, 0, len(a.n.devs()))
	for name := range a.n.devs() {
		names = append(names, name)
	}
	slices.Sort(names)
	out := map[string]AuditResult{}
	started := a.cfg.Now()
	a.mu.Lock()
	a.status.Running, a.status.Progress = true, 0
	a.mu.Unlock()
	counters := map[string]int64{}
	for i, name := range names {
		if ctx.Err() != nil {
			break
		}
		r := a.device(ctx, name, a.n.devs()[name])
		out[name] = r
		counters["records"] += r.Objects.Records
		counters["bytes"] += r.Objects.Bytes + r.Listings.Bytes
		counters["rows"] += r.Listings.Rows
		counters["corrupt_objects"] += r.Objects.Corrupt
		counters["corrupt_rows"] += r.Listings.Corrupt
		counters["read_errors"] += r.Objects.ReadErrors
		a.mu.Lock()
		a.status.Progress = float64(i+1) / float64(len(names))
		a.mu.Unlock()
		if r.Err != nil && ctx.Err() == nil {
			a.m.errs.WithLabelValues(name).Inc()
			a.cfg.Logger.Warn("auditor pass over a device stopped; retried next pass", "device", name, "err", r.Err)
		}
	}
	a.mu.Lock()
	a.status.Running = false
	if ctx.Err() == nil {
		end := a.cfg.Now()
		a.status.Passes++
		a.status.LastPassEnd, a.status.LastPassSeconds, a.status.Counters = end, end.Sub(started).Seconds(), counters
	}
	a.mu.Unlock()
	return out
}

// device audits one device: its objects, then its listings.
func (a *Auditor) device(ctx context.Context, name string, d *device) AuditResult {
	var r AuditResult
	progress := a.m.progress.WithLabelValues(name)
	progress.Set(0)
	objects, listings := d.engine.AuditSize(), d.index.AuditSize()
	report := func(done int64) {
		if total := objects + listings; total > 0 {
			progress.Set(min(1, float64(done)/float64(total)))
		}
	}
	records, bytes := a.m.records.WithLabelValues(name), a.m.bytes.WithLabelValues(name)
	pace := func(ctx context.Context, n, size int64) error {
		records.Add(float64(n))
		bytes.Add(float64(size))
		return a.pace(ctx, n, size)
	}
	started := a.cfg.Now()
	r.Objects, r.Err = d.engine.Audit(ctx, engine.AuditOptions{Pace: pace, Progress: report})
	a.m.failures.WithLabelValues(name, "object").Add(float64(r.Objects.Corrupt))
	if r.Err != nil {
		return r
	}
	r.Listings, r.Err = d.index.Audit(ctx, index.AuditOptions{
		Pace:     pace,
		Progress: func(done int64) { report(objects + done) },
		Lock: func(account, container, object string) func() {
			return d.engine.LockName(meta.ObjectName{Account: account, Container: container, Object: object})
		},
		Rebuild:    a.rebuilder(d),
		Quarantine: func(key, value []byte) { d.engine.SaveQuarantined(key, value, "listing") },
	})
	a.m.failures.WithLabelValues(name, "listing").Add(float64(r.Listings.Corrupt))
	a.m.sealed.WithLabelValues(name).Add(float64(r.Listings.Sealed))
	a.m.recounted.WithLabelValues(name).Add(float64(r.Listings.Recounted))
	if r.Err != nil {
		return r
	}
	progress.Set(1)
	a.m.passes.WithLabelValues(name).Inc()
	now := a.cfg.Now()
	a.m.lastPass.WithLabelValues(name).Set(float64(now.UnixNano()) / 1e9)
	// A pass over a small device takes no time, and the next follows one rest later: only
	// what a pass found is worth a line at the default level.
	level := slog.LevelDebug
	if r.Objects.Corrupt+r.Listings.Corrupt+r.Objects.ReadErrors > 0 {
		level = slog.LevelWarn
	}
	a.cfg.Logger.Log(ctx, level, "auditor pass over a device completed", "device", name, "took", now.Sub(started).Round(time.Millisecond),
		"records", r.Objects.Records, "rows", r.Listings.Rows, "corrupt_objects", r.Objects.Corrupt, "corrupt_rows", r.Listings.Corrupt,
		"read_errors", r.Objects.ReadErrors)
	return r
}

// rebuilder returns how a bad listing row of d is rebuilt: on a node alone, every listing of
// a device is fed by that device's own engine only, in the same batches as its records, so
// the current record says what the row held (and the usage counted all along); elsewhere the
// row is removed, and container replication restores it from another replica.
func (a *Auditor) rebuilder(d *device) func(account, container, object string) (*meta.ListEntry, error) {
	if !a.n.alone() {
		return nil
	}
	return func(account, container, object string) (*meta.ListEntry, error) {
		o, err := d.engine.Version(meta.ObjectName{Account: account, Container: container, Object: object})
		switch {
		case errors.Is(err, meta.ErrNotFound), errors.Is(err, meta.ErrCorrupt):
			return nil, nil // no version, or none that can say what it was: no entry
		case err != nil:
			return nil, err
		case o.Deleted:
			return nil, nil
		}
		e := listEntry(object, &o)
		return &e, nil
	}
}

// pace waits until the rate limits allow reading n records and size bytes.
func (a *Auditor) pace(ctx context.Context, n, size int64) error {
	if a.records != nil && n > 0 {
		if err := a.records.WaitN(ctx, int(n)); err != nil {
			return err
		}
	}
	for a.bytes != nil && size > 0 {
		step := min(size, int64(a.bytes.Burst()))
		if err := a.bytes.WaitN(ctx, int(step)); err != nil {
			return err
		}
		size -= step
	}
	return nil
}
