package server

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodelease"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/readlease"
	"github.com/cairn-store/cairn/internal/ring"
)

// openLeases makes a storage node's read-lease state (internal/nodelease) for its devices in
// the replicated policies' rings, when the server runs with ReadLeases: the node marks its
// writes in it and answers its peers' renewals and the proxies' revocations, and the
// replicator tells it of the passes. Run renews the leases.
func (s *Server) openLeases(reg prometheus.Registerer) error {
	if !s.cfg.ReadLeases || s.node == nil || s.cfg.Role == RoleEmbedded {
		return nil
	}
	var local []string
	for _, d := range s.node.Devices() {
		local = append(local, nodelease.DeviceName(s.ringAddress(), d))
	}
	rings := map[int]nodelease.Ring{}
	for idx, r := range s.replicatedObjectRings() {
		rings[idx] = nodelease.RingOf(r)
	}
	svc, err := nodelease.New(nodelease.Config{
		Lease: readlease.DefaultConfig(3), Local: local, Rings: rings,
		Peers: leasePeers{s}, Holds: s.node.HoldsVersion, Logger: s.cfg.Logger, Registry: reg,
	})
	if err != nil {
		return err
	}
	s.leases = svc
	s.node.SetLeases(svc)
	return nil
}

// replicatedObjectRings are the object rings of the replicated storage policies, by policy
// index.
func (s *Server) replicatedObjectRings() map[int]*ring.Ring {
	out := map[int]*ring.Ring{}
	for _, p := range s.rings.policies.All() {
		if p.Type == policy.Replication {
			out[p.Index] = s.rings.objects[p.Index].Current()
		}
	}
	return out
}

// followLeaseRings gives the leases the replicated policies' rings that changed since seen
// (updated).
func (s *Server) followLeaseRings(seen map[int]*ring.Ring) {
	for idx, r := range s.replicatedObjectRings() {
		if seen[idx] != r {
			seen[idx] = r
			s.leases.SetRing(idx, nodelease.RingOf(r))
		}
	}
}

// leasePeers carries renewals to the granters' nodes over the node protocol.
type leasePeers struct{ s *Server }

func (p leasePeers) Renew(ctx context.Context, node string, r readlease.Renewal) (readlease.Grant, error) {
	var c nodeclient.Client = p.s.node
	if node != p.s.ringAddress() {
		var err error
		if c, err = p.s.dialer.Dial(node); err != nil {
			return readlease.Grant{}, err
		}
	}
	l, ok := c.(nodeclient.Leases)
	if !ok {
		return readlease.Grant{}, nodeclient.ErrNoLeases
	}
	return l.RenewLease(ctx, nodelease.LocalDevice(r.Granter), r)
}
