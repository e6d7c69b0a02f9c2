package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodelease"
	"github.com/cairn-store/cairn/internal/readlease"
	"github.com/cairn-store/cairn/internal/ring"
)

// leasedCluster is a wideCluster whose nodes keep read leases (in-process, renewed by tick),
// replicated both ways between every pair so that leases are granted.
type leasedCluster struct {
	*wideCluster
	services map[string]*nodelease.Service
}

func (c *leasedCluster) Renew(ctx context.Context, node string, r readlease.Renewal) (readlease.Grant, error) {
	c.mu.Lock()
	down := c.down[node]
	c.mu.Unlock()
	if down {
		return readlease.Grant{}, fmt.Errorf("node %s is down", node)
	}
	return c.services[node].Renew(ctx, r)
}

func (c *leasedCluster) tick() {
	time.Sleep(2 * time.Millisecond)
	for _, s := range c.services {
		s.Tick(context.Background())
	}
}

// passes records a whole replication pass between every pair of nodes, begun now.
func (c *leasedCluster) passes() {
	now := time.Now()
	for from := range c.nodes {
		for to := range c.nodes {
			if from != to {
				c.services[from].FullPass(from+"/d0", to+"/d0", now)
			}
		}
	}
}

func newLeasedCluster(t *testing.T) *leasedCluster {
	t.Helper()
	c := &leasedCluster{wideCluster: newWideCluster(t, Config{ContainerCacheTTL: -1, ReadLeases: true}), services: map[string]*nodelease.Service{}}
	lc := readlease.DefaultConfig(3)
	lc.Renew = time.Millisecond // every tick renews
	for name, n := range c.nodes {
		svc, err := nodelease.New(nodelease.Config{Lease: lc, Local: []string{name + "/d0"},
			Rings: map[int]nodelease.Ring{0: nodelease.RingOf(c.ring)}, Peers: c, Holds: n.HoldsVersion})
		if err != nil {
			t.Fatal(err)
		}
		n.SetLeases(svc)
		c.services[name] = svc
	}
	time.Sleep(time.Millisecond) // passes begin after every start
	c.passes()
	c.tick()
	return c
}

func (c *leasedCluster) proxyWithLeases(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(Config{Ring: c.ring, Dialer: c.wideCluster, ContainerCacheTTL: -1, ReadLeases: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// read is a GET's body and whether the first primary answered it alone.
func (c *leasedCluster) read(t *testing.T, p *Proxy, name meta.ObjectName) (string, bool) {
	t.Helper()
	prim, _ := c.primaries(name)
	p.alone.Delete(prim[0])
	r, err := p.GetObject(context.Background(), name, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", name.Object, err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	return string(b), p.expectAlone(prim[0])
}

// TestReadLeases: under read leases a GET is answered by the first primary alone; a write it
// missed and a read of a version it lacks revoke its lease first, so that it never answers
// alone what was there before.
func TestReadLeases(t *testing.T) {
	ctx := context.Background()
	put := func(t *testing.T, p *Proxy, name meta.ObjectName, body string) {
		t.Helper()
		if _, err := p.PutObject(ctx, name, meta.Object{Size: int64(len(body))}, bytes.NewReader([]byte(body)), PutOptions{}); err != nil {
			t.Fatalf("PUT %s: %v", body, err)
		}
	}
	setup := func(t *testing.T, object string) (*leasedCluster, meta.ObjectName, []string) {
		c := newLeasedCluster(t)
		if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
			t.Fatal(err)
		}
		name := meta.ObjectName{Account: "acct", Container: "bkt", Object: object}
		put(t, c.proxy, name, "v1")
		c.tick() // settles v1
		c.tick()
		if got, alone := c.read(t, c.proxy, name); got != "v1" || !alone {
			t.Fatalf("GET of a settled version: %q, alone %v", got, alone)
		}
		prim, _ := c.primaries(name)
		return c, name, prim
	}
	t.Run("a write the first primary missed", func(t *testing.T) {
		c, name, prim := setup(t, "written-past")
		c.set(c.down, prim[0], true)
		start := time.Now()
		put(t, c.proxy, name, "v2")
		t.Logf("the write waited %v for the revocation", time.Since(start).Round(time.Millisecond))
		c.set(c.down, prim[0], false)
		// The first primary holds v1 and believes its grants until it renews; the proxy
		// waited them out.
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || alone {
			t.Fatalf("GET after a write the first primary missed: %q, alone %v", got, alone)
		}
		c.tick()
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || alone {
			t.Fatalf("GET after a renewal naming the partition revoked: %q, alone %v", got, alone)
		}
		// Replication from the granters clears the revocation; the read wrote v2 back.
		part := partition(c.ring, name.Account, name.Container, name.Object)
		now := time.Now()
		for _, g := range prim[1:] {
			c.services[g].Replicated(g+"/d0", prim[0]+"/d0", part, now)
		}
		c.tick()
		c.tick()
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || !alone {
			t.Fatalf("GET once replicated: %q, alone %v", got, alone)
		}
	})
	t.Run("a write through a proxy on another ring", func(t *testing.T) {
		c, name, prim := setup(t, "other-ring")
		// A proxy with a ring on which the first replica of the partition moved off the
		// first primary (a ring the nodes do not have yet, without the change it made):
		// it writes to the new primary and the other two, and revokes the new primary only.
		part := partition(c.ring, name.Account, name.Container, name.Object)
		var hand []ring.Device
		for d := range c.ring.Handoffs(part) {
			hand = append(hand, d)
		}
		other, err := New(Config{Ring: movedRing(c.wideCluster, part, hand[1], time.Time{}), Dialer: c.wideCluster, ContainerCacheTTL: -1, ReadLeases: true})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		put(t, other, name, "v2")
		t.Logf("the write waited %v for the granters' CrossRing", time.Since(start).Round(time.Millisecond))
		if held := c.holders(t, name); held[prim[0]] >= held[prim[1]] {
			t.Fatalf("the old first primary took the write: %v", held)
		}
		// The granters of the nodes' ring took it from a proxy on another: they revoked the
		// old first primary before answering, so it does not answer alone with v1.
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || alone {
			t.Fatalf("GET on the nodes' ring after a write on another: %q, alone %v", got, alone)
		}
		c.tick()
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || alone {
			t.Fatalf("GET after a renewal: %q, alone %v", got, alone)
		}
	})
	t.Run("a read of a version the first primary lacks", func(t *testing.T) {
		c, name, prim := setup(t, "read-past")
		// A proxy died after v2 reached the second and third primaries only.
		part := partition(c.ring, name.Account, name.Container, name.Object)
		v2 := meta.Object{Timestamp: meta.Now(), Size: 2}
		for _, n := range prim[1:] {
			if _, err := c.nodes[n].PutObject(ctx, "d0", part, name, v2, bytes.NewReader([]byte("v2")), nodeclient.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// A reader that cannot reach the first primary answers v2...
		c.set(c.down, prim[0], true)
		if got, _ := c.read(t, c.proxyWithLeases(t), name); got != "v2" {
			t.Fatalf("GET without the first primary: %q", got)
		}
		// ...so no later read may answer v1, the first primary's.
		c.set(c.down, prim[0], false)
		if got, alone := c.read(t, c.proxyWithLeases(t), name); got != "v2" || alone {
			t.Fatalf("GET after a read of a version the first primary lacked: %q, alone %v", got, alone)
		}
	})
}
