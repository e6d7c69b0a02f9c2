package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// statusTimeout bounds how long a node may take to report: a node that does not answer in
// time is reported down rather than holding up the operator.
const statusTimeout = 5 * time.Second

// clusterStatus gathers `cairn admin status`: the rings in force and the report of every
// storage node they name, asked in parallel.
func (s *Server) clusterStatus(ctx context.Context) (admin.ClusterStatus, error) {
	var st admin.ClusterStatus
	type named struct {
		name string
		r    *ring.Ring
	}
	var rings []named
	var dialer nodeclient.Dialer
	if s.cfg.Role == RoleEmbedded {
		rings = []named{{"object", ring.SingleDevice(localNode, "d0", 10, "")}}
		dialer = nodeclient.Local{Client: s.node}
	} else {
		rings = append(rings, named{"account", s.rings.account.Current()}, named{"container", s.rings.container.Current()})
		for _, p := range s.rings.policies.All() {
			rings = append(rings, named{p.RingName(), s.rings.objects[p.Index].Current()})
		}
		dialer = s.dialer
		if s.node != nil {
			dialer = selfDialer{self: s.ringAddress(), node: s.node, others: s.dialer}
		}
	}
	var addrs []string
	for _, n := range rings {
		st.Rings = append(st.Rings, admin.RingStatus{Name: n.name, PartPower: n.r.PartPower, Replicas: n.r.ReplicaCount(),
			Devices: len(n.r.Devices), Version: n.r.Version})
		for _, d := range n.r.Devices {
			if !slices.Contains(addrs, d.Node) {
				addrs = append(addrs, d.Node)
			}
		}
	}
	slices.Sort(addrs)
	st.Nodes = make([]admin.NodeReport, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.Nodes[i] = nodeReport(ctx, dialer, addr)
		}()
	}
	wg.Wait()
	st.Summarize()
	return st, nil
}

func nodeReport(ctx context.Context, dialer nodeclient.Dialer, addr string) admin.NodeReport {
	rep := admin.NodeReport{Address: addr}
	c, err := dialer.Dial(addr)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	r, ok := c.(nodeclient.Reporter)
	if !ok {
		rep.Error = fmt.Sprintf("%s reports no status (not a Cairn node)", addr)
		return rep
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	if rep.NodeStatus, err = r.NodeStatus(ctx); err != nil {
		rep.Error = err.Error()
	}
	return rep
}
