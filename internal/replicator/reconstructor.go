package replicator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// The reconstructor keeps the fragment archives of erasure-coded storage policies where their
// rings put them, as Swift's object reconstructor does. Primary i of a partition holds archive
// i of each object, so primaries are not copies of each other and the replicator's sync does
// not apply: a device that is primary i of a partition compares suffix digests with the other
// primaries (a version digests alike whatever fragment a device holds of it), and for each
// version it lacks, holds older or holds flagged corrupt, rebuilds its own archive from k
// others (ec.Scheme.Reconstruct) or copies it where one exists whole (a handoff holding it, or
// its own bytes under older metadata), and takes newer tombstones. Each device rebuilds only
// its own fragments, so that no two nodes rebuild the same one; a device that holds nothing of
// a partition (a disk replaced, or away for every write to the partition) is not visited by
// its own pass, so the nearest primary before it in ring order that holds data rebuilds its
// archives for it. A device that is not a primary of a partition (a handoff) sends each
// archive to the primary of its fragment index alone, tombstones to every primary, and removes
// what they hold.

// ECRing is an erasure-coded storage policy's object ring and its code.
type ECRing struct {
	Ring   *ring.Ring
	Scheme *ec.Scheme
}

// ReconstructorConfig configures a Reconstructor.
type ReconstructorConfig struct {
	// Node is this storage node; Self its address as the rings name it.
	Node Local
	Self string
	// Rings returns the erasure-coded policies' rings in force.
	Rings func() []ECRing
	// Dialer reaches the nodes the rings name (this one included); their clients must
	// implement nodeclient.Replication.
	Dialer nodeclient.Dialer
	// Interval, Concurrency and BytesPerSecond are as the replicator's (defaults 30s, 2,
	// 100 MiB/s of archive bytes read and sent; negative: unbounded).
	Interval       time.Duration
	Concurrency    int
	BytesPerSecond int64
	Logger         *slog.Logger
	// Registry receives the metrics; nil registers none.
	Registry prometheus.Registerer
}

// Reconstructor is the running daemon.
type Reconstructor struct {
	cfg     ReconstructorConfig
	log     *slog.Logger
	limit   *rate.Limiter
	metrics reconMetrics
	loop    *daemon.Loop

	mu      sync.Mutex
	status  ReconstructorStatus
	schemes map[[3]int64]*ec.Scheme // codes archives name, by k, m and segment size
}

// ReconstructorStatus is what the reconstructor reports of its passes.
type ReconstructorStatus struct {
	Passes             int64
	Running            bool
	Done, Total        int
	LastStart, LastEnd time.Time
	Last               ReconstructStats
}

// ReconstructStats counts what a pass did.
type ReconstructStats struct {
	Partitions int // partitions visited
	Handoffs   int // of them, held away from their primaries
	Failed     int // partitions with a device that could not be reached or written
	// Rebuilt: archives decoded from k others; Copied: archives copied whole (a handoff's
	// copy of one, or the device's own bytes under newer metadata); Reverted: archives a
	// handoff sent to their primary; Tombstones: deletes taken or sent.
	Rebuilt, Copied, Reverted, Tombstones int64
	Bytes                                 int64 // archive bytes written
	Evicted                               int64 // handoff versions removed once home
	// Unrebuildable: versions newer elsewhere of which fewer than k archives exist (a write
	// that failed on most devices): nothing can rebuild them.
	Unrebuildable int64
	Remaining     int // handoff partitions still held at the end of the pass
}

func (s *ReconstructStats) add(o ReconstructStats) {
	s.Partitions += o.Partitions
	s.Handoffs += o.Handoffs
	s.Failed += o.Failed
	s.Rebuilt += o.Rebuilt
	s.Copied += o.Copied
	s.Reverted += o.Reverted
	s.Tombstones += o.Tombstones
	s.Bytes += o.Bytes
	s.Evicted += o.Evicted
	s.Unrebuildable += o.Unrebuildable
	s.Remaining += o.Remaining
}

// NewReconstructor returns a Reconstructor that is not running yet (Start runs it; RunPass runs
// one pass).
func NewReconstructor(cfg ReconstructorConfig) (*Reconstructor, error) {
	if cfg.Node == nil || cfg.Rings == nil || cfg.Dialer == nil || cfg.Self == "" {
		return nil, errors.New("reconstructor: Config needs Node, Self, Rings and Dialer")
	}
	if cfg.Interval == 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 2
	}
	if cfg.BytesPerSecond == 0 {
		cfg.BytesPerSecond = 100 << 20
	}
	if cfg.Interval < 0 || cfg.Concurrency < 0 {
		return nil, errors.New("reconstructor: negative interval or concurrency")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reconstructor{cfg: cfg, log: cfg.Logger.With("component", "reconstructor"), metrics: newReconMetrics(),
		schemes: map[[3]int64]*ec.Scheme{}}
	if cfg.BytesPerSecond > 0 {
		r.limit = rate.NewLimiter(rate.Limit(cfg.BytesPerSecond), int(min(cfg.BytesPerSecond, 4<<20)))
	}
	if cfg.Registry != nil {
		if err := r.metrics.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("reconstructor: metrics: %w", err)
		}
	}
	return r, nil
}

// Start runs passes until Stop, the first at once.
func (r *Reconstructor) Start() {
	r.loop = daemon.Start(r.cfg.Interval, true, func(ctx context.Context) { r.RunPass(ctx) })
}

// Stop ends the daemon, canceling a running pass.
func (r *Reconstructor) Stop() {
	if r.loop != nil {
		r.loop.Stop()
	}
}

// Status returns the reconstructor's progress.
func (r *Reconstructor) Status() ReconstructorStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// ecJob is one partition of one device of an erasure-coded ring.
type ecJob struct {
	ring   ECRing
	device string
	part   uint32
}

// RunPass visits every partition the node's devices of erasure-coded rings hold, once.
func (r *Reconstructor) RunPass(ctx context.Context) ReconstructStats {
	start := time.Now()
	open := map[string]bool{}
	for _, d := range r.cfg.Node.Devices() {
		open[d] = true
	}
	var jobs []ecJob
	for _, er := range r.cfg.Rings() {
		for _, dev := range ringDevices(er.Ring, r.cfg.Self, open) {
			err := r.cfg.Node.PartitionsWithData(ctx, dev, er.Ring.PartPower, func(part uint32) error {
				jobs = append(jobs, ecJob{ring: er, device: dev, part: part})
				return nil
			})
			if err != nil && ctx.Err() == nil {
				r.log.Warn("listing a device's partitions", "device", dev, "err", err)
			}
		}
	}
	r.mu.Lock()
	r.status.Running, r.status.Done, r.status.Total = true, 0, len(jobs)
	r.mu.Unlock()
	r.metrics.progress.Set(0)

	st := runPool(ctx, r.cfg.Concurrency, jobs, func(j ecJob) ReconstructStats { return r.reconstruct(ctx, j) }, (*ReconstructStats).add, func(done int) {
		r.mu.Lock()
		r.status.Done = done
		r.mu.Unlock()
		r.metrics.progress.Set(float64(done) / float64(len(jobs)))
	})
	end := time.Now()
	r.mu.Lock()
	r.status.Running = false
	if ctx.Err() == nil {
		r.status.Passes++
		r.status.LastStart, r.status.LastEnd, r.status.Last = start, end, st
	}
	r.mu.Unlock()
	if ctx.Err() == nil {
		r.metrics.passes.Inc()
		r.metrics.progress.Set(1)
		r.metrics.lastPass.Set(end.Sub(start).Seconds())
		r.metrics.lastEnd.Set(float64(end.Unix()))
		r.metrics.handoffs.Set(float64(st.Remaining))
		r.log.Info("reconstruction pass", "partitions", st.Partitions, "handoffs", st.Handoffs, "failed", st.Failed,
			"rebuilt", st.Rebuilt, "copied", st.Copied, "reverted", st.Reverted, "tombstones", st.Tombstones, "bytes", st.Bytes,
			"evicted", st.Evicted, "unrebuildable", st.Unrebuildable, "handoffs_left", st.Remaining, "took", end.Sub(start).Round(time.Millisecond))
	}
	return st
}

// reconstruct reconciles one partition of one device: as its primary, or as a handoff.
func (r *Reconstructor) reconstruct(ctx context.Context, j ecJob) ReconstructStats {
	primaries := j.ring.Ring.Nodes(j.part)
	for i, d := range primaries {
		if d.Node == r.cfg.Self && d.Name == j.device {
			st, err := r.rebuild(ctx, j, primaries, i)
			return r.outcome(ctx, j, "primary", st, err)
		}
	}
	st, err := r.revert(ctx, j, primaries)
	st.Handoffs = 1
	return r.outcome(ctx, j, "handoff", st, err)
}

func (r *Reconstructor) outcome(ctx context.Context, j ecJob, kind string, st ReconstructStats, err error) ReconstructStats {
	st.Partitions = 1
	if err != nil {
		st.Failed = 1
		if kind == "handoff" {
			st.Remaining = 1
		}
		if ctx.Err() == nil {
			r.log.Debug("reconstructing a partition", "device", j.device, "partition", j.part, "kind", kind, "err", err)
		}
		r.metrics.partitions.WithLabelValues(kind, "failed").Inc()
		return st
	}
	r.metrics.partitions.WithLabelValues(kind, "ok").Inc()
	return st
}

// scheme returns the code an archive names (the ring's, normally).
func (r *Reconstructor) scheme(k, m int, segment int64) (*ec.Scheme, error) {
	key := [3]int64{int64(k), int64(m), segment}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.schemes[key]; ok {
		return s, nil
	}
	s, err := ec.New(k, m, segment)
	if err != nil {
		return nil, err
	}
	r.schemes[key] = s
	return s, nil
}

// DaemonStatus is the reconstructor's progress as a node reports it (nodeclient.NodeStatus).
func (r *Reconstructor) DaemonStatus() nodeclient.DaemonStatus {
	st := r.Status()
	l := st.Last
	ds := nodeclient.DaemonStatus{Passes: st.Passes, Running: st.Running, LastPassEnd: st.LastEnd,
		Counters: map[string]int64{
			"partitions": int64(l.Partitions), "handoff_partitions": int64(l.Handoffs), "failed_partitions": int64(l.Failed),
			"rebuilt": l.Rebuilt, "copied": l.Copied, "reverted": l.Reverted, "tombstones": l.Tombstones, "bytes": l.Bytes,
			"evicted": l.Evicted, "unrebuildable": l.Unrebuildable, "handoffs_left": int64(l.Remaining),
		}}
	if !st.LastEnd.IsZero() {
		ds.LastPassSeconds = st.LastEnd.Sub(st.LastStart).Seconds()
	}
	if st.Total > 0 {
		ds.Progress = float64(st.Done) / float64(st.Total)
	} else if st.Passes > 0 {
		ds.Progress = 1
	}
	return ds
}

type reconMetrics struct {
	passes     prometheus.Counter
	partitions *prometheus.CounterVec
	fragments  *prometheus.CounterVec
	tombstones prometheus.Counter
	bytes      prometheus.Counter
	evicted    prometheus.Counter
	lost       prometheus.Counter
	progress   prometheus.Gauge
	handoffs   prometheus.Gauge
	lastPass   prometheus.Gauge
	lastEnd    prometheus.Gauge
}

func newReconMetrics() reconMetrics {
	return reconMetrics{
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_reconstructor_passes_total",
			Help: "Reconstruction passes completed (erasure-coded policies)."}),
		partitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_reconstructor_partitions_total",
			Help: "Erasure-coded partitions visited, by kind (primary, handoff) and outcome (ok, or failed: a device could not be reached or written, retried next pass)."},
			[]string{"kind", "outcome"}),
		fragments: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_reconstructor_fragments_total",
			Help: "Fragment archives restored, by how: rebuilt (decoded from k others), copied (whole, from a handoff or the device's own bytes), reverted (a handoff's sent to its primary)."},
			[]string{"how"}),
		tombstones: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_reconstructor_tombstones_total",
			Help: "Tombstones taken from other primaries or sent home by handoffs."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_reconstructor_bytes_total",
			Help: "Fragment archive bytes written by the reconstructor."}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_reconstructor_handoff_evicted_total",
			Help: "Versions removed from a handoff device once their primary held them."}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_reconstructor_unrebuildable_total",
			Help: "Versions newer elsewhere of which fewer than k archives exist (left by writes that failed): nothing can rebuild them."}),
		progress: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_reconstructor_pass_progress",
			Help: "Fraction of the current (or last) pass's partitions done."}),
		handoffs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_reconstructor_handoff_partitions",
			Help: "Erasure-coded partitions held away from their primaries at the end of the last pass: 0 when every archive is home."}),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_reconstructor_last_pass_seconds",
			Help: "Duration of the last completed reconstruction pass."}),
		lastEnd: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_reconstructor_last_pass_end_seconds",
			Help: "Unix time the last reconstruction pass completed."}),
	}
}

func (m reconMetrics) register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.passes, m.partitions, m.fragments, m.tombstones, m.bytes, m.evicted, m.lost,
		m.progress, m.handoffs, m.lastPass, m.lastEnd} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
