// Package nodelease is a storage node's side of read leases (internal/readlease): for each of
// its devices in a replicated storage policy's ring (a device is in one policy's ring), the
// holder state (the grants its device
// holds as the first primary of partitions, and the names not yet settled) and the granter
// state (what it granted other devices, what it revoked). It runs the renewal loop to the
// peers, answers their renewals and proxies' revocations, takes the storage node's writes
// (marking names unsettled before they become visible) and the replicator's completed passes,
// and tells the node whether a read may be answered alone.
//
// It owns no data: what a device holds is asked of the storage node (Config.Holds), and the
// messages travel over the node protocol (Config.Peers); both are the caller's edges.
package nodelease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/readlease"
)

// Ring is one replicated storage policy's object ring, as leases need it: devices are named
// "node/device" (the node's address as the ring has it, and the device's name on it).
type Ring interface {
	// Devices lists the ring's devices.
	Devices() []string
	Replicas() int
	Partitions() int
	// Primaries lists part's primaries, the first primary first.
	Primaries(part uint32) []string
	// Version tells one ring from another: every node must compute it the same way.
	Version() string
}

// Peers carries a renewal to the node of its granter and brings back the grant.
type Peers interface {
	Renew(ctx context.Context, node string, r readlease.Renewal) (readlease.Grant, error)
}

// Config configures a Service.
type Config struct {
	// Lease is the protocol's timing, the same on every node and proxy; Replicas is taken
	// from each ring.
	Lease readlease.Config
	// Local names this node's devices, "node/device".
	Local []string
	// Rings are the replicated storage policies' object rings, by policy index.
	Rings map[int]Ring
	Peers Peers
	// Holds reports whether a local device holds the version of a name a holder asks about.
	Holds  func(ctx context.Context, device string, v readlease.Version) bool
	Logger *slog.Logger
	// Registry receives the metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (time.Now); its monotonic reading is what counts.
	Now func() time.Time
}

// Errors.
var (
	ErrInvalidConfig = errors.New("nodelease: invalid config")
	// ErrNotHere: a message for a device this node does not serve in a replicated policy.
	ErrNotHere = errors.New("nodelease: no such local device in a replicated policy's ring")
)

// Validate reports a configuration the service cannot run with.
func (c *Config) Validate() error {
	switch {
	case c.Peers == nil || c.Holds == nil:
		return fmt.Errorf("%w: Peers and Holds are needed", ErrInvalidConfig)
	case len(c.Local) == 0:
		return fmt.Errorf("%w: no local devices", ErrInvalidConfig)
	}
	for p, r := range c.Rings {
		lc := c.Lease
		lc.Replicas = r.Replicas()
		if err := lc.Validate(); err != nil {
			return fmt.Errorf("policy %d: %w", p, err)
		}
	}
	return nil
}

// Service is one storage node's lease state. Its methods are safe for concurrent use.
type Service struct {
	cfg Config
	log *slog.Logger

	mu      sync.RWMutex // guards devices
	devices map[string]*state

	renewals    *prometheus.CounterVec // this node's holders' renewals, by outcome
	grants      *prometheus.CounterVec // renewals this node's granters answered, by outcome
	revocations prometheus.Counter
	marks       prometheus.Counter
	reads       *prometheus.CounterVec // lease reads, by answer
	crossRing   prometheus.Counter
}

// readAnswers are the label values of the lease reads' answers.
var readAnswers = map[string]string{
	readlease.Answers: "alone", readlease.NotFirst: "not_first", readlease.NoGrant: "no_grant",
	readlease.Expired: "expired", readlease.Revoked: "revoked", readlease.NotPushed: "not_replicated",
	readlease.Unsettled: "unsettled",
}

// state is one local device's holder and granter.
type state struct {
	mu      sync.Mutex
	policy  int
	ring    Ring
	holder  *readlease.Holder
	granter *readlease.Granter
}

// New makes the service; Run renews its leases.
func New(cfg Config) (*Service, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, log: cfg.Logger, devices: map[string]*state{},
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_read_lease_renewals_total",
			Help: "Read-lease renewals this node's devices asked of their granters, by outcome (granted, refused, failed)."}, []string{"outcome"}),
		grants: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_read_lease_grants_total",
			Help: "Read-lease renewals this node's devices answered as granters, by outcome (granted, refused)."}, []string{"outcome"}),
		revocations: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_read_lease_revocations_total",
			Help: "Read-lease revocations proxies asked of this node's devices."}),
		marks: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_read_lease_writes_total",
			Help: "Writes to this node's devices in replicated policies' rings that the read leases heard of before they became visible."}),
		crossRing: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_read_lease_other_ring_requests_total",
			Help: "Object requests from proxies whose rings do not include this node's (a ring not yet everywhere): each revokes the node's ring's first primary for the partition."}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_read_lease_reads_total",
			Help: "Reads a proxy asked this node to answer alone, by answer: alone, or why not (not_first, no_grant, expired, revoked, not_replicated, unsettled)."}, []string{"answer"}),
	}
	if cfg.Registry != nil {
		unsettled := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_read_lease_unsettled_names",
			Help: "Names this node's devices hold a version of that no majority of the primaries was seen to hold yet."}, s.unsettled)
		for _, c := range []prometheus.Collector{s.renewals, s.grants, s.revocations, s.marks, s.reads, s.crossRing, unsettled} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("nodelease: metrics: %w", err)
			}
		}
	}
	for policy, r := range cfg.Rings {
		s.SetRing(policy, r)
	}
	return s, nil
}

func (s *Service) newState(dev string, policy int, r Ring, now time.Time) *state {
	lc := s.cfg.Lease
	lc.Replicas = r.Replicas()
	return &state{
		policy:  policy,
		ring:    r,
		holder:  readlease.NewHolder(lc, dev, leaseRing{r}, holderPeers(dev, r), now),
		granter: readlease.NewGranter(lc, dev, leaseRing{r}, now),
	}
}

// leaseRing adapts a Ring to readlease's.
type leaseRing struct{ r Ring }

func (l leaseRing) Primaries(part uint32) []string { return l.r.Primaries(part) }
func (l leaseRing) Version() string                { return l.r.Version() }

// holderPeers are the devices that grant dev its leases: the later primaries of the
// partitions dev is the first primary of.
func holderPeers(dev string, r Ring) []string {
	seen := map[string]bool{}
	var out []string
	for p := range r.Partitions() {
		prim := r.Primaries(uint32(p))
		if len(prim) == 0 || prim[0] != dev {
			continue
		}
		for _, peer := range prim[1:] {
			if !seen[peer] {
				seen[peer] = true
				out = append(out, peer)
			}
		}
	}
	return out
}

// SetRing takes a policy's new ring: a ring change is a start for the leases of the local
// devices in it.
func (s *Service) SetRing(policy int, r Ring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	in := map[string]bool{}
	for _, d := range r.Devices() {
		in[d] = true
	}
	for _, dev := range s.cfg.Local {
		st := s.devices[dev]
		switch {
		case !in[dev]:
			if st != nil && st.policy == policy {
				delete(s.devices, dev) // no longer in this policy's ring
			}
		case st == nil || st.policy != policy:
			s.devices[dev] = s.newState(dev, policy, r, now)
		default:
			st.mu.Lock()
			st.ring = r
			st.holder.Reset(leaseRing{r}, holderPeers(dev, r), now)
			st.granter.Reset(leaseRing{r}, now)
			st.mu.Unlock()
		}
	}
}

func (s *Service) state(dev string) *state {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.devices[dev]
}

// Wrote marks a name unsettled on a local device before a new version of it (or its
// deletion, or new metadata) becomes visible there. A device in no replicated policy's ring
// is ignored.
func (s *Service) Wrote(device string, part uint32, name, version string) {
	st := s.state(device)
	if st == nil {
		return
	}
	s.marks.Inc()
	now := s.cfg.Now()
	st.mu.Lock()
	st.holder.Wrote(part, name, version, now)
	st.mu.Unlock()
}

// CrossRing is a request about part on a local device from a proxy on the rings of these
// placement ids: when the device's ring is not among them, it revokes the lease of its own
// ring's first primary for part, and returns how long the answer must wait for that lease to
// run out (readlease.Granter.CrossRing).
func (s *Service) CrossRing(device string, part uint32, rings []string) time.Duration {
	st := s.state(device)
	if st == nil {
		return 0
	}
	now := s.cfg.Now()
	st.mu.Lock()
	mine := st.ring.Version()
	wait := st.granter.CrossRing(now, part, rings...)
	st.mu.Unlock()
	if !slices.Contains(rings, mine) {
		s.crossRing.Inc()
	}
	return wait
}

// Refusal is why a read of name on a local device may not be answered alone (readlease's
// reasons; readlease.Answers: it may). Ask after reading the version.
func (s *Service) Refusal(device string, part uint32, name string) string {
	st := s.state(device)
	if st == nil {
		return readlease.NotFirst
	}
	now := s.cfg.Now()
	st.mu.Lock()
	why := st.holder.Refusal(now, part, name)
	st.mu.Unlock()
	s.reads.WithLabelValues(readAnswers[why]).Inc()
	return why
}

// Renew answers a peer's renewal for a local device.
func (s *Service) Renew(ctx context.Context, r readlease.Renewal) (readlease.Grant, error) {
	st := s.state(r.Granter)
	if st == nil {
		return readlease.Grant{}, fmt.Errorf("%w: device %q", ErrNotHere, r.Granter)
	}
	// The lookups come first, outside the lock: they read the device.
	held := map[readlease.Version]bool{}
	for _, v := range r.Settle {
		if ctx.Err() != nil {
			return readlease.Grant{}, ctx.Err()
		}
		if s.cfg.Holds(ctx, r.Granter, v) {
			held[v] = true
		}
	}
	now := s.cfg.Now()
	st.mu.Lock()
	g := st.granter.Grant(now, r, func(v readlease.Version) bool { return held[v] })
	st.mu.Unlock()
	s.grants.WithLabelValues(outcome(g)).Inc()
	return g, nil
}

func outcome(g readlease.Grant) string {
	if g.Granted {
		return "granted"
	}
	return "refused"
}

// unsettled is the names the node's holders wait to see settled.
func (s *Service) unsettled() float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, st := range s.devices {
		st.mu.Lock()
		n += st.holder.Unsettled()
		st.mu.Unlock()
	}
	return float64(n)
}

// Revoke revokes holder's lease for part on a local granter device, and returns how long the
// holder's last grant from it may still run.
func (s *Service) Revoke(device, holder string, part uint32) (time.Duration, error) {
	st := s.state(device)
	if st == nil {
		return 0, fmt.Errorf("%w: device %q", ErrNotHere, device)
	}
	s.revocations.Inc()
	now := s.cfg.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.granter.Revoke(now, holder, part), nil
}

// Replicated records that the replicator's sync of part from a local device to peer, begun at
// begun, completed: the peer holds what the device held then.
func (s *Service) Replicated(device, peer string, part uint32, begun time.Time) {
	if st := s.state(device); st != nil {
		st.mu.Lock()
		st.granter.Replicated(peer, part, begun)
		st.mu.Unlock()
	}
}

// FullPass records that a replication pass from a local device to peer, begun at begun,
// completed for every partition they share.
func (s *Service) FullPass(device, peer string, begun time.Time) {
	if st := s.state(device); st != nil {
		st.mu.Lock()
		st.granter.FullPass(peer, begun)
		st.holder.Pushed(peer, begun)
		st.mu.Unlock()
	}
}

// Tick sends the renewals due now and takes their grants; Run calls it every quarter of
// Renew. It returns when every renewal has been answered or has failed.
func (s *Service) Tick(ctx context.Context) {
	type out struct {
		st *state
		r  readlease.Renewal
	}
	var sends []out
	now := s.cfg.Now()
	s.mu.RLock()
	for _, st := range s.devices {
		st.mu.Lock()
		for _, r := range st.holder.Renewals(now) {
			sends = append(sends, out{st, r})
		}
		st.mu.Unlock()
	}
	s.mu.RUnlock()
	var wg sync.WaitGroup
	for _, o := range sends {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.cfg.Lease.Renew)
			defer cancel()
			g, err := s.cfg.Peers.Renew(ctx, NodeOf(o.r.Granter), o.r)
			if err != nil {
				s.renewals.WithLabelValues("failed").Inc()
				s.log.Debug("lease renewal failed", "holder", o.r.Holder, "granter", o.r.Granter, "err", err)
				return
			}
			s.renewals.WithLabelValues(outcome(g)).Inc()
			now := s.cfg.Now()
			o.st.mu.Lock()
			o.st.holder.Granted(now, g)
			o.st.mu.Unlock()
		})
	}
	wg.Wait()
}

// Run renews the leases until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(max(time.Millisecond, s.cfg.Lease.Renew/4))
	defer t.Stop()
	for {
		s.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// NodeOf is the node part of a "node/device" name.
func NodeOf(dev string) string {
	if i := strings.LastIndexByte(dev, '/'); i >= 0 {
		return dev[:i]
	}
	return dev
}

// DeviceName is a device's name as leases use it.
func DeviceName(node, device string) string { return node + "/" + device }

// LocalDevice is the device part of a "node/device" name.
func LocalDevice(dev string) string {
	if i := strings.LastIndexByte(dev, '/'); i >= 0 {
		return dev[i+1:]
	}
	return dev
}
