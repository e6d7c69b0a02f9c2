package nodelease

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/cairn-store/cairn/internal/readlease"
)

// testRing has three devices and eight partitions; partition p's first primary is device p%3.
type testRing struct{ version string }

var testDevs = []string{"n1:6200/d0", "n2:6200/d0", "n3:6200/d0"}

func (testRing) Devices() []string { return testDevs }
func (testRing) Replicas() int     { return 3 }
func (testRing) Partitions() int   { return 8 }
func (testRing) Primaries(p uint32) []string {
	i := int(p) % 3
	return []string{testDevs[i], testDevs[(i+1)%3], testDevs[(i+2)%3]}
}
func (r testRing) Version() string { return r.version }

// cluster is three services wired to each other directly, with one clock and one store.
type cluster struct {
	mu       sync.Mutex
	now      time.Time
	services map[string]*Service // by node
	store    map[string]string   // device + name → version
	cut      map[string]bool     // nodes whose renewals are lost
}

func (c *cluster) Renew(ctx context.Context, node string, r readlease.Renewal) (readlease.Grant, error) {
	c.mu.Lock()
	cut, s := c.cut[node], c.services[node]
	c.mu.Unlock()
	if cut {
		return readlease.Grant{}, fmt.Errorf("node %s cut off", node)
	}
	return s.Renew(ctx, r)
}

func (c *cluster) setCut(node string, cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut[node] = cut
}

func (c *cluster) clock() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *cluster) tick(t *testing.T, d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for _, s := range c.services {
		s.Tick(context.Background())
	}
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{now: time.Unix(1_700_000_000, 0), services: map[string]*Service{}, store: map[string]string{}, cut: map[string]bool{}}
	for _, dev := range testDevs {
		s, err := New(Config{
			Lease: readlease.DefaultConfig(3),
			Local: []string{dev},
			Rings: map[int]Ring{0: testRing{"r1"}},
			Peers: c,
			Holds: func(_ context.Context, device string, v readlease.Version) bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.store[device+" "+v.Name] == v.Version
			},
			Now: c.clock,
		})
		if err != nil {
			t.Fatal(err)
		}
		c.services[NodeOf(dev)] = s
	}
	return c
}

func (c *cluster) passes(begun time.Time) {
	for _, from := range testDevs {
		for _, to := range testDevs {
			if from != to {
				c.services[NodeOf(from)].FullPass(from, to, begun)
			}
		}
	}
}

func TestLeasesBetweenNodes(t *testing.T) {
	c := newCluster(t)
	holder, granter := c.services["n1:6200"], c.services["n2:6200"]
	const part = 0 // first primary n1
	refusal := func() string { return holder.Refusal(testDevs[0], part, "a/c/o") }
	c.tick(t, 0)
	if got := refusal(); got == readlease.Answers {
		t.Fatal("answers alone before any replication pass")
	}
	c.passes(c.clock())
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Answers {
		t.Fatalf("after passes and a renewal: %q", got)
	}
	if got := holder.Refusal(testDevs[0], 1, "a/c/o"); got != readlease.NotFirst {
		t.Fatalf("partition 1 (first primary n2) on n1: %q", got)
	}
	// A write marks the name; a renewal settles it once a granter holds the version.
	holder.Wrote(testDevs[0], part, "a/c/o", "v2")
	if got := refusal(); got != readlease.Unsettled {
		t.Fatalf("after a write: %q", got)
	}
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Unsettled {
		t.Fatalf("no granter holds it yet: %q", got)
	}
	c.mu.Lock()
	c.store[testDevs[2]+" a/c/o"] = "v2"
	c.mu.Unlock()
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Answers {
		t.Fatalf("a granter holds it: %q", got)
	}
	// A proxy revokes the holder at a granter: the wait runs from its last grant.
	wait, err := granter.Revoke(testDevs[1], testDevs[0], part)
	if err != nil || wait <= 0 || wait > readlease.DefaultConfig(3).Lease {
		t.Fatalf("revoke: %v, %v", wait, err)
	}
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Revoked {
		t.Fatalf("after a revocation: %q", got)
	}
	if got := holder.Refusal(testDevs[0], 3, "a/c/o"); got != readlease.Answers {
		t.Fatalf("another partition of the holder's after the revocation: %q", got)
	}
	c.services["n2:6200"].Replicated(testDevs[1], testDevs[0], part, c.clock())
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Answers {
		t.Fatalf("after a pass begun after the revocation: %q", got)
	}
	// A granter cut off: the lease runs out.
	c.setCut("n3:6200", true)
	c.tick(t, 3*time.Second)
	if got := refusal(); got != readlease.Expired {
		t.Fatalf("a granter cut off for 3s: %q", got)
	}
	c.setCut("n3:6200", false)
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Answers {
		t.Fatalf("the granter back: %q", got)
	}
	// A new ring is a start: nothing is granted until passes begun after it.
	for _, s := range c.services {
		s.SetRing(0, testRing{"r2"})
	}
	c.tick(t, time.Second)
	if got := refusal(); got == readlease.Answers {
		t.Fatal("answers alone on a new ring before any pass")
	}
	c.passes(c.clock())
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Answers {
		t.Fatalf("after passes on the new ring: %q", got)
	}
	// A request from a proxy whose rings do not include the granter's (a ring not yet
	// everywhere) revokes the granter's own first primary for the partition, and its answer
	// waits out the last grant; one from a proxy on the granter's ring (alone or with the
	// one before it) does nothing.
	if wait := granter.CrossRing(testDevs[1], part, []string{"r2"}); wait != 0 {
		t.Fatalf("a request on the granter's ring waits %v", wait)
	}
	if wait := granter.CrossRing(testDevs[1], part, []string{"r2", "r1"}); wait != 0 {
		t.Fatalf("a request on the granter's ring and the one before waits %v", wait)
	}
	if wait := granter.CrossRing(testDevs[1], part, []string{"r1"}); wait <= 0 || wait > readlease.DefaultConfig(3).Lease {
		t.Fatalf("a request from a proxy on the old ring waits %v", wait)
	}
	c.tick(t, time.Second)
	if got := refusal(); got != readlease.Revoked {
		t.Fatalf("after a request on another ring: %q", got)
	}
	var m dto.Metric
	if err := granter.crossRing.Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Fatalf("%v requests on another ring counted (%v), want 1", m.GetCounter().GetValue(), err)
	}
	if wait := holder.CrossRing("elsewhere/d9", part, []string{"r1"}); wait != 0 {
		t.Fatalf("a request for a device not here waits %v", wait)
	}
	// Messages for devices not served here are refused.
	if _, err := granter.Revoke("elsewhere/d9", testDevs[0], part); err == nil {
		t.Fatal("a revocation for a device not here was taken")
	}
	if _, err := granter.Renew(context.Background(), readlease.Renewal{Holder: testDevs[0], Granter: "n2:6200/d7"}); err == nil {
		t.Fatal("a renewal for a device not here was taken")
	}
}
