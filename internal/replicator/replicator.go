// Package replicator keeps the data of a storage node's devices where the rings put it, as
// Swift's object, container and account replicators do. For every object partition a device
// holds, it compares the digests of the partition's suffixes with the other primaries' and
// pushes the versions they lack or hold older (objects and tombstones). For every container and
// account a device holds (listing.go), it compares a digest of its record and of its rows with
// the other primaries' and pushes what differs. A partition held by a device that is not one of
// its primaries (a handoff's, or one a rebalance moved away) is pushed to all its primaries and
// removed once every one of them holds it. Replication is push-only: each replica sends what it
// has, so every pair is reconciled by the two passes of its ends. One pass visits the three
// kinds of partitions with one pool of workers; bandwidth and concurrency are bounded; progress
// is in /metrics and in Status.
package replicator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// Local is what the replicator needs of its own storage node, in-process.
type Local interface {
	nodeclient.Client
	nodeclient.Replication
	// Devices names the node's open devices.
	Devices() []string
	// PartitionsWithData calls fn with each partition that holds a version on a device.
	PartitionsWithData(ctx context.Context, device string, partPower uint, fn func(part uint32) error) error
	// EvictObject removes a device's copy of a name at ts, if it is still the current one.
	EvictObject(ctx context.Context, device string, name meta.ObjectName, ts meta.Timestamp) (bool, error)

	nodeclient.ListingReplication
	// Listings calls fn with every container a device holds, live or deleted (accounts false),
	// or every account it holds rows of (accounts true).
	Listings(ctx context.Context, device string, accounts bool, fn func(nodeclient.Listing) error) error
	// ListingRows returns up to limit rows of a listing after the name after, in name order, of
	// the given buckets of 2^bits (nil: every row); more says there are further rows.
	ListingRows(ctx context.Context, device string, name nodeclient.Listing, bits uint, buckets []uint32, after string, limit int) (rows []nodeclient.ListingRow, more bool, err error)
	// ContainerRecord returns a container's record; ok is false when the device holds neither
	// the container nor its tombstone.
	ContainerRecord(ctx context.Context, device, account, container string) (rec nodeclient.ContainerRecord, ok bool, err error)
	// EvictRows removes the rows of a listing that are still as given, and returns how many.
	EvictRows(ctx context.Context, device string, name nodeclient.Listing, rows []nodeclient.ListingRow) (int, error)
	// EvictListing removes what is left of a listing once its rows are gone, if its record
	// still has the given digest; false while something remains.
	EvictListing(ctx context.Context, device string, name nodeclient.Listing, recordDigest uint64) (bool, error)
}

// Config configures a Replicator.
type Config struct {
	// Node is this storage node.
	Node Local
	// Self is the node's address as the rings name it.
	Self string
	// ObjectRings returns the object rings in force, one per storage policy.
	ObjectRings func() []*ring.Ring
	// ContainerRing and AccountRing return the listing rings in force (nil: those listings
	// are not replicated).
	ContainerRing, AccountRing func() *ring.Ring
	// Dialer reaches the nodes the rings name (this one included); their clients must
	// implement nodeclient.Replication.
	Dialer nodeclient.Dialer
	// Interval is the pause between the start of passes (default 30s, Swift's).
	Interval time.Duration
	// Concurrency is how many partitions (of any ring) are replicated at once (default 2).
	Concurrency int
	// BytesPerSecond bounds the bytes pushed to other nodes (default 100 MiB/s; negative:
	// unbounded).
	BytesPerSecond int64
	Logger         *slog.Logger
	// Registry receives the metrics; nil registers none.
	Registry prometheus.Registerer
	// Leases, when set, hears of the object partitions' syncs (the node's read leases,
	// internal/nodelease).
	Leases LeaseHooks
}

// LeaseHooks hear which of a device's object partitions a pass brought whole to another
// primary: every version the device held when the pass began, that the primary lacked, pushed
// to it (none left for a better-placed replica to send). Devices are named "node/device".
type LeaseHooks interface {
	// Replicated: one partition synced whole to peer.
	Replicated(device, peer string, part uint32, begun time.Time)
	// FullPass: every partition the device shares with peer synced whole in the pass.
	FullPass(device, peer string, begun time.Time)
}

// Validate fills in defaults and checks the rest.
func (c *Config) Validate() error {
	if c.Node == nil || c.ObjectRings == nil || c.Dialer == nil {
		return errors.New("replicator: Config needs Node, ObjectRings and Dialer")
	}
	if c.Self == "" {
		return errors.New("replicator: Config.Self is empty")
	}
	if c.Interval == 0 {
		c.Interval = 30 * time.Second
	}
	if c.Concurrency == 0 {
		c.Concurrency = 2
	}
	if c.BytesPerSecond == 0 {
		c.BytesPerSecond = 100 << 20
	}
	if c.Interval < 0 || c.Concurrency < 0 {
		return errors.New("replicator: negative interval or concurrency")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Replicator is the running daemon.
type Replicator struct {
	cfg     Config
	log     *slog.Logger
	limit   *rate.Limiter // nil: unbounded
	metrics metrics
	loop    *daemon.Loop

	mu     sync.Mutex
	status Status
}

// Status is what the replicator reports of its passes.
type Status struct {
	Passes int64 // completed
	// Running: a pass is under way; Done and Total count its partitions.
	Running     bool
	Done, Total int
	// Of the last completed pass:
	LastStart, LastEnd time.Time
	Last               PassStats
}

// PassStats counts what a pass did.
type PassStats struct {
	Partitions int // partitions visited (object, container and account)
	Handoffs   int // of them, partitions held away from their primaries
	// Failed: partitions with a replica that could not be reached or written.
	Failed   int
	Pushed   int64 // object versions sent (objects and tombstones)
	Bytes    int64 // object bytes sent
	Listings int   // containers and accounts visited
	Records  int64 // container records sent
	Rows     int64 // listing rows sent (object rows of containers, container rows of accounts)
	// Offered: versions of listing rows offered to a replica, which took the Rows it lacked.
	Offered int64
	// Evicted: what handoffs removed once their primaries held it: object versions, listing
	// rows, and listings (a container's record, an account's totals).
	Evicted   int64
	Remaining int // handoff partitions still held at the end of the pass
}

// New returns a Replicator that is not running yet (Start runs it; RunPass runs one pass).
func New(cfg Config) (*Replicator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Replicator{cfg: cfg, log: cfg.Logger.With("component", "replicator"), metrics: newMetrics()}
	if cfg.BytesPerSecond > 0 {
		burst := int(min(cfg.BytesPerSecond, 4<<20))
		r.limit = rate.NewLimiter(rate.Limit(cfg.BytesPerSecond), burst)
	}
	if cfg.Registry != nil {
		if err := r.metrics.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("replicator: metrics: %w", err)
		}
	}
	return r, nil
}

// Start runs passes until Stop, the first at once.
func (r *Replicator) Start() {
	r.loop = daemon.Start(r.cfg.Interval, true, func(ctx context.Context) { r.RunPass(ctx) })
}

// Stop ends the daemon, canceling a running pass.
func (r *Replicator) Stop() {
	if r.loop != nil {
		r.loop.Stop()
	}
}

// Status returns the replicator's progress.
func (r *Replicator) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// ringKind is what a ring places.
type ringKind int

const (
	objectRing ringKind = iota
	containerRing
	accountRing
)

func (k ringKind) String() string { return [...]string{"object", "container", "account"}[k] }

// job is one partition of one device to replicate: for a listing ring, the listings of the
// device in that partition.
type job struct {
	kind   ringKind
	ring   *ring.Ring
	device string
	part   uint32
	names  []nodeclient.Listing
	pass   *leasePass
}

// leasePass collects, for the lease hooks, the pairs of devices a pass did not sync whole.
type leasePass struct {
	begun  time.Time
	mu     sync.Mutex
	broken map[[2]string]bool
}

func (l *leasePass) synced(r *Replicator, j job, peer ring.Device, whole bool) {
	if l == nil || r.cfg.Leases == nil {
		return
	}
	dev, to := r.cfg.Self+"/"+j.device, peer.Node+"/"+peer.Name
	if whole {
		r.cfg.Leases.Replicated(dev, to, j.part, l.begun)
		return
	}
	l.mu.Lock()
	l.broken[[2]string{dev, to}] = true
	l.mu.Unlock()
}

// finish tells the hooks of every device pair of the object rings the pass synced whole.
func (l *leasePass) finish(r *Replicator, rings []*ring.Ring, local map[string]bool) {
	if l == nil || r.cfg.Leases == nil {
		return
	}
	for _, rg := range rings {
		for _, dev := range ringDevices(rg, r.cfg.Self, local) {
			self := r.cfg.Self + "/" + dev
			for _, peer := range coPrimaries(rg, r.cfg.Self, dev) {
				if !l.broken[[2]string{self, peer}] {
					r.cfg.Leases.FullPass(self, peer, l.begun)
				}
			}
		}
	}
}

// coPrimaries are the devices that are primaries of a partition with a device.
func coPrimaries(rg *ring.Ring, node, dev string) []string {
	seen := map[string]bool{}
	var out []string
	for p := range uint32(1) << rg.PartPower {
		prim := rg.Nodes(p)
		mine := false
		for _, d := range prim {
			if d.Node == node && d.Name == dev {
				mine = true
			}
		}
		if !mine {
			continue
		}
		for _, d := range prim {
			if name := d.Node + "/" + d.Name; (d.Node != node || d.Name != dev) && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// RunPass replicates every partition the node's devices hold, once.
func (r *Replicator) RunPass(ctx context.Context) PassStats {
	start := time.Now()
	lp := &leasePass{begun: start, broken: map[[2]string]bool{}}
	var jobs []job
	local := map[string]bool{}
	for _, d := range r.cfg.Node.Devices() {
		local[d] = true
	}
	rings := r.cfg.ObjectRings()
	named := map[string]bool{}
	for _, rg := range rings {
		for _, dev := range ringDevices(rg, r.cfg.Self, local) {
			named[dev] = true
		}
	}
	for i, rg := range rings {
		devs := ringDevices(rg, r.cfg.Self, local)
		if i == 0 {
			// A device no object ring names any more (removed from its ring) still holds what
			// it held: every partition of it is pushed to its primaries and removed, which
			// empties it. Devices belong to the first ring's policy unless another names them.
			for _, d := range r.cfg.Node.Devices() {
				if !named[d] {
					devs = append(devs, d)
				}
			}
		}
		for _, dev := range devs {
			err := r.cfg.Node.PartitionsWithData(ctx, dev, rg.PartPower, func(part uint32) error {
				jobs = append(jobs, job{kind: objectRing, ring: rg, device: dev, part: part, pass: lp})
				return nil
			})
			if err != nil && ctx.Err() == nil {
				r.log.Warn("listing a device's partitions", "device", dev, "err", err)
			}
		}
	}
	if r.cfg.ContainerRing != nil {
		jobs = append(jobs, r.listingJobs(ctx, containerRing, r.cfg.ContainerRing(), local)...)
	}
	if r.cfg.AccountRing != nil {
		jobs = append(jobs, r.listingJobs(ctx, accountRing, r.cfg.AccountRing(), local)...)
	}
	r.mu.Lock()
	r.status.Running, r.status.Done, r.status.Total = true, 0, len(jobs)
	r.mu.Unlock()
	r.metrics.progress.Set(0)

	st := runPool(ctx, r.cfg.Concurrency, jobs, func(j job) PassStats { return r.replicate(ctx, j) }, (*PassStats).add, func(done int) {
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
		lp.finish(r, rings, local)
		r.metrics.passes.Inc()
		r.metrics.progress.Set(1)
		r.metrics.lastPass.Set(end.Sub(start).Seconds())
		r.metrics.lastEnd.Set(float64(end.Unix()))
		r.metrics.handoffs.Set(float64(st.Remaining))
		r.log.Info("replication pass", "partitions", st.Partitions, "handoffs", st.Handoffs, "failed", st.Failed,
			"pushed", st.Pushed, "bytes", st.Bytes, "listings", st.Listings, "records", st.Records, "rows", st.Rows, "offered", st.Offered,
			"evicted", st.Evicted, "handoffs_left", st.Remaining, "took", end.Sub(start).Round(time.Millisecond))
	}
	return st
}

func (s *PassStats) add(o PassStats) {
	s.Partitions += o.Partitions
	s.Handoffs += o.Handoffs
	s.Failed += o.Failed
	s.Pushed += o.Pushed
	s.Bytes += o.Bytes
	s.Listings += o.Listings
	s.Records += o.Records
	s.Rows += o.Rows
	s.Offered += o.Offered
	s.Evicted += o.Evicted
	s.Remaining += o.Remaining
}

// ringDevices returns the devices of a ring on this node that the node has open.
func ringDevices(rg *ring.Ring, self string, open map[string]bool) []string {
	var out []string
	for _, d := range rg.Devices {
		if d.Node == self && open[d.Name] {
			out = append(out, d.Name)
		}
	}
	return out
}

// placement returns the primaries of a job's partition other than its device, each with its
// replica index, and whether the device is a handoff (not one of them).
func (r *Replicator) placement(j job) (targets []target, handoff bool) {
	handoff = true
	for i, d := range j.ring.Nodes(j.part) {
		if d.Node == r.cfg.Self && d.Name == j.device {
			handoff = false
			continue
		}
		targets = append(targets, target{Device: d, replica: i})
	}
	return targets, handoff
}

// previousPrimary reports whether the job's device was one of its partition's primaries
// before the ring's last change, and the change may still be under way.
func (r *Replicator) previousPrimary(j job) bool {
	for _, d := range j.ring.PreviousNodes(j.part, time.Now()) {
		if d.Node == r.cfg.Self && d.Name == j.device {
			return true
		}
	}
	return false
}

// target is a primary to push to.
type target struct {
	ring.Device
	replica int // its index among the partition's primaries
}

// addr is where a device's node takes replication.
func (t target) addr() string {
	if t.ReplicationNode != "" {
		return t.ReplicationNode
	}
	return t.Node
}

// replicate reconciles one partition of one device with its primaries.
func (r *Replicator) replicate(ctx context.Context, j job) PassStats {
	if j.kind != objectRing {
		return r.replicateListings(ctx, j)
	}
	st := PassStats{Partitions: 1}
	primaries := j.ring.Nodes(j.part)
	handoff := true
	var targets []ring.Device
	for _, d := range primaries {
		if d.Node == r.cfg.Self && d.Name == j.device {
			handoff = false
			continue
		}
		targets = append(targets, d)
	}
	// Which targets got the partition whole, for the lease hooks: none unless shown below.
	whole := make([]bool, len(targets))
	defer func() {
		for i, t := range targets {
			j.pass.synced(r, j, t, whole[i])
		}
	}()
	kind := "primary"
	if handoff && r.previousPrimary(j) {
		// While the ring's last change may be under way, proxies that keep the ring before
		// it read and write this device as one of the partition's primaries (joint quorums,
		// docs/consistency.md "Ring changes"): it pushes what it holds to the new primaries
		// as a handoff does, and keeps its copy until the change is complete.
		handoff, kind = false, "previous"
	}
	var held []nodeclient.ObjectVersion
	if handoff {
		kind = "handoff"
		st.Handoffs = 1
		// What the device holds before the pushes: each of these is confirmed by them, and
		// is removed afterwards unless it changed meanwhile.
		var err error
		if held, err = r.cfg.Node.PartitionVersions(ctx, j.device, j.ring.PartPower, j.part, nil); err != nil {
			return r.failed(ctx, st, j, kind, "listing the partition", err)
		}
	}
	// Every replica's digests first: a suffix that a better-placed replica holds identically
	// is left for that one to send, so that a new primary gets each object once, not from
	// every replica that has it.
	mine, err := r.cfg.Node.PartitionDigests(ctx, j.device, j.ring.PartPower, j.part)
	if err != nil {
		return r.failed(ctx, st, j, kind, "local digests", err)
	}
	theirs := make([]map[uint32]uint64, len(targets))
	clients := make([]nodeclient.Client, len(targets))
	ok, complete := true, true
	for i, t := range targets {
		if clients[i], theirs[i], err = r.digests(ctx, j, t); err != nil {
			ok = false
			if ctx.Err() != nil {
				return st
			}
			r.log.Debug("replicating a partition", "device", j.device, "partition", j.part, "to", t.Node+"/"+t.Name, "err", err)
		}
	}
	myRank := len(primaries) // a handoff ranks after every primary
	for i, d := range primaries {
		if d.Node == r.cfg.Self && d.Name == j.device {
			myRank = i
		}
	}
	for i, t := range targets {
		if theirs[i] == nil {
			continue
		}
		var send []uint32
		skipped := false
		for _, s := range differing(mine, theirs[i]) {
			if r.coveredBy(primaries, targets, theirs, i, s, mine[s], myRank) {
				complete = false // the target lacks it still: a handoff keeps its copy
				skipped = true
				continue
			}
			send = append(send, s)
		}
		pushed, bytes, err := r.sync(ctx, j, t, clients[i], send)
		st.Pushed += pushed
		st.Bytes += bytes
		whole[i] = err == nil && !skipped
		if err != nil {
			ok = false
			if ctx.Err() != nil {
				return st
			}
			r.log.Debug("replicating a partition", "device", j.device, "partition", j.part, "to", t.Node+"/"+t.Name, "err", err)
		}
	}
	if !ok || (handoff && !complete) {
		return r.outcome(st, j, kind, ok, handoff)
	}
	if handoff {
		for _, v := range held {
			gone, err := r.cfg.Node.EvictObject(ctx, j.device, v.Name, v.Timestamp)
			if err != nil {
				return r.failed(ctx, st, j, kind, "removing a handoff copy", err)
			}
			if gone {
				st.Evicted++
				r.metrics.evicted.WithLabelValues(j.kind.String()).Inc()
			}
		}
	}
	// Versions written to the handoff during the pass stay for the next one.
	return r.outcome(st, j, kind, true, handoff && int(st.Evicted) < len(held))
}

// outcome counts a partition's replication, ok or failed; remains says a handoff still holds
// it (it failed, or a primary lacks part of it still).
func (r *Replicator) outcome(st PassStats, j job, kind string, ok, remains bool) PassStats {
	outcome := "ok"
	if !ok {
		st.Failed, outcome = 1, "failed"
	}
	if remains {
		st.Remaining = 1
	}
	r.metrics.partitions.WithLabelValues(j.kind.String(), kind, outcome).Inc()
	return st
}

func (r *Replicator) failed(ctx context.Context, st PassStats, j job, kind, what string, err error) PassStats {
	if ctx.Err() == nil {
		r.log.Warn("replication: "+what, "ring", j.kind.String(), "device", j.device, "partition", j.part, "err", err)
	}
	return r.outcome(st, j, kind, false, kind == "handoff")
}

// digests dials a replica and asks for its digests of the partition.
func (r *Replicator) digests(ctx context.Context, j job, t ring.Device) (nodeclient.Client, map[uint32]uint64, error) {
	addr := t.Node
	if t.ReplicationNode != "" {
		addr = t.ReplicationNode
	}
	c, err := r.cfg.Dialer.Dial(addr)
	if err != nil {
		return nil, nil, err
	}
	remote, ok := c.(nodeclient.Replication)
	if !ok {
		return nil, nil, fmt.Errorf("replicator: node %s does not replicate", addr)
	}
	d, err := remote.PartitionDigests(ctx, t.Name, j.ring.PartPower, j.part)
	if err != nil {
		return nil, nil, fmt.Errorf("digests of %s/%s: %w", addr, t.Name, err)
	}
	return c, d, nil
}

// coveredBy says whether another replica than target i, placed before this one (rank), holds
// suffix s exactly as this one does (digest): that replica sends it to the target.
func (r *Replicator) coveredBy(primaries, targets []ring.Device, theirs []map[uint32]uint64, i int, s uint32, digest uint64, rank int) bool {
	for k, t := range targets {
		if k == i || theirs[k] == nil || theirs[k][s] != digest {
			continue
		}
		for p, d := range primaries {
			if d == t && p < rank {
				return true
			}
		}
	}
	return false
}

// sync pushes to one replica the versions it lacks in some suffixes of a partition.
func (r *Replicator) sync(ctx context.Context, j job, t ring.Device, c nodeclient.Client, suffixes []uint32) (pushed, bytes int64, err error) {
	if len(suffixes) == 0 {
		return 0, 0, nil
	}
	remote := c.(nodeclient.Replication)
	versions, err := r.cfg.Node.PartitionVersions(ctx, j.device, j.ring.PartPower, j.part, suffixes)
	if err != nil {
		return 0, 0, fmt.Errorf("local versions: %w", err)
	}
	want, err := remote.WantVersions(ctx, t.Name, versions)
	if err != nil {
		return 0, 0, fmt.Errorf("asking %s/%s: %w", t.Node, t.Name, err)
	}
	for _, i := range want {
		n, err := r.push(ctx, j, c, t.Name, versions[i])
		if err != nil {
			return pushed, bytes, fmt.Errorf("pushing %s/%s/%s to %s/%s: %w", versions[i].Name.Account, versions[i].Name.Container, versions[i].Name.Object, t.Node, t.Name, err)
		}
		pushed++
		bytes += n
	}
	return pushed, bytes, nil
}

// differing returns the suffixes whose local digest the remote does not have.
func differing(mine, theirs map[uint32]uint64) []uint32 {
	var out []uint32
	for s, d := range mine {
		if theirs[s] != d {
			out = append(out, s)
		}
	}
	return out
}

// push sends one version to a replica: a tombstone as a DELETE at its timestamp, an object as
// a PUT of its bytes and metadata (no listing update: listings replicate on their own).
func (r *Replicator) push(ctx context.Context, j job, c nodeclient.Client, device string, v nodeclient.ObjectVersion) (int64, error) {
	if v.Deleted {
		_, err := c.DeleteObject(ctx, device, j.part, v.Name, v.Timestamp, nodeclient.DeleteOptions{})
		if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrConflict) {
			return 0, err
		}
		r.metrics.pushed.WithLabelValues("object", "tombstone").Inc()
		return 0, nil
	}
	src, err := r.cfg.Node.GetObject(ctx, j.device, j.part, v.Name, nil)
	if errors.Is(err, meta.ErrNotFound) {
		return 0, nil // deleted or moved meanwhile: the next pass sees what is there now
	}
	if err != nil {
		return 0, fmt.Errorf("reading the local copy: %w", err)
	}
	defer src.Close()
	body := &meteredReader{r: src, ctx: ctx, limit: r.limit}
	_, err = c.PutObject(ctx, device, j.part, v.Name, src.Object, body, nodeclient.PutOptions{})
	if err != nil && !errors.Is(err, meta.ErrConflict) {
		return body.n, err
	}
	r.metrics.pushed.WithLabelValues("object", "object").Inc()
	r.metrics.bytes.Add(float64(body.n))
	return body.n, nil
}

// meteredReader counts the bytes read and holds them to the bandwidth limit.
type meteredReader struct {
	r     io.Reader
	ctx   context.Context
	limit *rate.Limiter
	n     int64
}

func (m *meteredReader) Read(p []byte) (int, error) {
	if m.limit != nil && len(p) > m.limit.Burst() {
		p = p[:m.limit.Burst()]
	}
	n, err := m.r.Read(p)
	if n > 0 {
		m.n += int64(n)
		if m.limit != nil {
			if werr := m.limit.WaitN(m.ctx, n); werr != nil {
				return n, werr
			}
		}
	}
	return n, err
}

// DaemonStatus is the replicator's progress as a node reports it (nodeclient.NodeStatus).
func (r *Replicator) DaemonStatus() nodeclient.DaemonStatus {
	st := r.Status()
	ds := nodeclient.DaemonStatus{Passes: st.Passes, Running: st.Running, LastPassEnd: st.LastEnd,
		Counters: map[string]int64{
			"partitions": int64(st.Last.Partitions), "handoff_partitions": int64(st.Last.Handoffs),
			"failed_partitions": int64(st.Last.Failed), "pushed": st.Last.Pushed, "pushed_bytes": st.Last.Bytes,
			"evicted": st.Last.Evicted, "handoffs_left": int64(st.Last.Remaining),
			"listings": int64(st.Last.Listings), "listing_records_pushed": st.Last.Records, "listing_rows_pushed": st.Last.Rows,
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

// runPool runs do on every job with n workers until ctx ends, adds each result into one total
// with add, and calls done after each job with how many are done: a pass of the replicator or
// the reconstructor.
func runPool[J, S any](ctx context.Context, n int, jobs []J, do func(J) S, add func(*S, S), done func(int)) S {
	var total S
	var mu sync.Mutex
	var next atomic.Int64
	finished := 0
	var wg sync.WaitGroup
	for range max(1, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				s := do(jobs[i])
				mu.Lock()
				add(&total, s)
				finished++
				d := finished
				mu.Unlock()
				done(d)
			}
		}()
	}
	wg.Wait()
	return total
}
