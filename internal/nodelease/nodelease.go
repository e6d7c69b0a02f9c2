// Package nodelease is a storage node's side of read leases (internal/readlease): for each of
// its devices and each replicated storage policy, the holder state (the grants its device
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
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/readlease"
)

// Ring is one replicated storage policy's object ring, as leases need it: devices are named
// "node/device" (the node's address as the ring has it, and the device's name on it).
type Ring interface {
	Replicas() int
	Partitions() int
	// Primaries lists part's primaries, the first primary first.
	Primaries(part uint32) []string
	// Version tells one ring from another: every node must compute it the same way.
	Version() string
}

// Peers carries a renewal to the node of its granter and brings back the grant.
type Peers interface {
	Renew(ctx context.Context, node string, policy int, r readlease.Renewal) (readlease.Grant, error)
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
	Holds  func(ctx context.Context, device string, policy int, v readlease.Version) bool
	Logger *slog.Logger
	// Now is the clock (time.Now); its monotonic reading is what counts.
	Now func() time.Time
}

// Errors.
var (
	ErrInvalidConfig = errors.New("nodelease: invalid config")
	// ErrNotHere: a message for a device or policy this node does not serve.
	ErrNotHere = errors.New("nodelease: no such local device or policy")
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

	mu    sync.RWMutex // guards sides (replaced whole on a ring change)
	sides map[side]*state
}

type side struct {
	device string
	policy int
}

// state is one local device's holder and granter for one policy.
type state struct {
	mu      sync.Mutex
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
	s := &Service{cfg: cfg, log: cfg.Logger, sides: map[side]*state{}}
	now := cfg.Now()
	for policy, r := range cfg.Rings {
		for _, dev := range cfg.Local {
			s.sides[side{dev, policy}] = s.newState(dev, r, now)
		}
	}
	return s, nil
}

func (s *Service) newState(dev string, r Ring, now time.Time) *state {
	lc := s.cfg.Lease
	lc.Replicas = r.Replicas()
	return &state{
		ring:    r,
		holder:  readlease.NewHolder(lc, dev, leaseRing{r}, holderPeers(dev, r), now),
		granter: readlease.NewGranter(lc, dev, r.Version(), now),
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

// SetRing takes a policy's new ring: a ring change is a start for its leases.
func (s *Service) SetRing(policy int, r Ring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	for _, dev := range s.cfg.Local {
		st := s.sides[side{dev, policy}]
		if st == nil {
			s.sides[side{dev, policy}] = s.newState(dev, r, now)
			continue
		}
		st.mu.Lock()
		st.ring = r
		st.holder.Reset(leaseRing{r}, holderPeers(dev, r), now)
		st.granter.Reset(r.Version(), now)
		st.mu.Unlock()
	}
}

func (s *Service) state(dev string, policy int) *state {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sides[side{dev, policy}]
}

// Wrote marks a name unsettled on a local device before a new version of it (or its
// deletion, or new metadata) becomes visible there. A policy without leases is ignored.
func (s *Service) Wrote(device string, policy int, part uint32, name, version string) {
	st := s.state(device, policy)
	if st == nil {
		return
	}
	now := s.cfg.Now()
	st.mu.Lock()
	st.holder.Wrote(part, name, version, now)
	st.mu.Unlock()
}

// Refusal is why a read of name on a local device may not be answered alone (readlease's
// reasons; readlease.Answers: it may). Ask after reading the version.
func (s *Service) Refusal(device string, policy int, part uint32, name string) string {
	st := s.state(device, policy)
	if st == nil {
		return readlease.NotFirst
	}
	now := s.cfg.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.holder.Refusal(now, part, name)
}

// Renew answers a peer's renewal for a local device.
func (s *Service) Renew(ctx context.Context, policy int, r readlease.Renewal) (readlease.Grant, error) {
	st := s.state(r.Granter, policy)
	if st == nil {
		return readlease.Grant{}, fmt.Errorf("%w: device %q, policy %d", ErrNotHere, r.Granter, policy)
	}
	// The lookups come first, outside the lock: they read the device.
	held := map[readlease.Version]bool{}
	for _, v := range r.Settle {
		if ctx.Err() != nil {
			return readlease.Grant{}, ctx.Err()
		}
		if s.cfg.Holds(ctx, r.Granter, policy, v) {
			held[v] = true
		}
	}
	now := s.cfg.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.granter.Grant(now, r, func(v readlease.Version) bool { return held[v] }), nil
}

// Revoke revokes holder's lease for part on a local granter device, and returns how long the
// holder's last grant from it may still run.
func (s *Service) Revoke(device string, policy int, holder string, part uint32) (time.Duration, error) {
	st := s.state(device, policy)
	if st == nil {
		return 0, fmt.Errorf("%w: device %q, policy %d", ErrNotHere, device, policy)
	}
	now := s.cfg.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.granter.Revoke(now, holder, part), nil
}

// Replicated records that the replicator's sync of part from a local device to peer, begun at
// begun, completed: the peer holds what the device held then.
func (s *Service) Replicated(device string, policy int, peer string, part uint32, begun time.Time) {
	if st := s.state(device, policy); st != nil {
		st.mu.Lock()
		st.granter.Replicated(peer, part, begun)
		st.mu.Unlock()
	}
}

// FullPass records that a replication pass from a local device to peer, begun at begun,
// completed for every partition they share.
func (s *Service) FullPass(device string, policy int, peer string, begun time.Time) {
	if st := s.state(device, policy); st != nil {
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
		st     *state
		policy int
		r      readlease.Renewal
	}
	var sends []out
	now := s.cfg.Now()
	s.mu.RLock()
	for sd, st := range s.sides {
		st.mu.Lock()
		for _, r := range st.holder.Renewals(now) {
			sends = append(sends, out{st, sd.policy, r})
		}
		st.mu.Unlock()
	}
	s.mu.RUnlock()
	var wg sync.WaitGroup
	for _, o := range sends {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.cfg.Lease.Renew)
			defer cancel()
			g, err := s.cfg.Peers.Renew(ctx, nodeOf(o.r.Granter), o.policy, o.r)
			if err != nil {
				s.log.Debug("lease renewal failed", "holder", o.r.Holder, "granter", o.r.Granter, "policy", o.policy, "err", err)
				return
			}
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

// nodeOf is the node part of a "node/device" name.
func nodeOf(dev string) string {
	if i := strings.LastIndexByte(dev, '/'); i >= 0 {
		return dev[:i]
	}
	return dev
}

// DeviceName is a device's name as leases use it.
func DeviceName(node, device string) string { return node + "/" + device }
