package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// wideCluster is a proxy over five storage nodes and a built 3-replica ring, so that every
// partition has two devices that are not its primaries: handoffs.
type wideCluster struct {
	proxy *Proxy
	ring  *ring.Ring
	nodes map[string]*storage.Node

	mu    sync.Mutex
	down  map[string]bool
	hang  map[string]bool // the node accepts requests and never answers HEADs
	cut   map[string]bool // the node's object bodies break off after 1000 bytes
	full  map[string]bool // the node's device is full: object PUTs answer 507
	dials map[string]int
	heads map[string]int // HEADs of clients' names a hanging node took, by node and by node/object
}

func (c *wideCluster) Dial(node string) (nodeclient.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dials[node]++
	if c.down[node] {
		return nil, fmt.Errorf("node %s is down", node)
	}
	if c.hang[node] {
		return hangingClient{c.nodes[node], c, node}, nil
	}
	if c.cut[node] {
		return cuttingClient{c.nodes[node]}, nil
	}
	if c.full[node] {
		return fullClient{c.nodes[node]}, nil
	}
	return c.nodes[node], nil
}

// fullClient is a node whose device is full.
type fullClient struct{ *storage.Node }

func (fullClient) PutObject(context.Context, string, uint32, meta.ObjectName, meta.Object, io.Reader, nodeclient.PutOptions) (nodeclient.PutResult, error) {
	return nodeclient.PutResult{}, fmt.Errorf("device full: %w", meta.ErrInsufficientStorage)
}

func (c *wideCluster) set(m map[string]bool, node string, v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m[node] = v
}

// hangingClient is a node that takes a HEAD and never answers it. It counts the HEADs of
// clients' names it takes (a suppressed node's probes are not).
type hangingClient struct {
	*storage.Node
	c    *wideCluster
	node string
}

func (h hangingClient) HeadObject(ctx context.Context, _ string, _ uint32, name meta.ObjectName, _ nodeclient.HeadOptions) (meta.Object, error) {
	if name != probeName {
		h.c.mu.Lock()
		h.c.heads[h.node]++
		h.c.heads[h.node+"/"+name.Object]++
		h.c.mu.Unlock()
	}
	<-ctx.Done()
	return meta.Object{}, fmt.Errorf("hung: %w", ctx.Err())
}

// cuttingClient is a node that dies while it sends an object's body.
type cuttingClient struct{ *storage.Node }

func (c cuttingClient) GetObject(ctx context.Context, dev string, part uint32, name meta.ObjectName, rng *meta.Range) (*nodeclient.ObjectReader, error) {
	r, err := c.Node.GetObject(ctx, dev, part, name, rng)
	if err != nil {
		return nil, err
	}
	r.ReadCloser = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(r.ReadCloser, 1000), iotest.ErrReader(errors.New("connection reset"))), r.ReadCloser}
	return r, nil
}

func newWideCluster(t *testing.T, cfg Config) *wideCluster {
	t.Helper()
	c := &wideCluster{nodes: map[string]*storage.Node{}, down: map[string]bool{}, hang: map[string]bool{}, cut: map[string]bool{}, full: map[string]bool{}, dials: map[string]int{}, heads: map[string]int{}}
	b, err := ring.NewBuilder(6, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		name := fmt.Sprintf("127.0.0.1:%d", 7000+i)
		n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), "n")}}, Address: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name] = n
		if _, err := b.Add(ring.Device{ID: -1, Zone: i, Node: name, Name: "d0", Weight: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Rebalance(time.Unix(0, 0), 1); err != nil {
		t.Fatal(err)
	}
	if c.ring, err = b.Ring(); err != nil {
		t.Fatal(err)
	}
	cfg.Ring, cfg.Dialer = c.ring, c
	if c.proxy, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// primaries returns the primary node addresses of an object, in ring order, and its handoffs.
func (c *wideCluster) primaries(name meta.ObjectName) (prim, hand []string) {
	part := partition(c.ring, name.Account, name.Container, name.Object)
	for _, d := range c.ring.Nodes(part) {
		prim = append(prim, d.Node)
	}
	for d := range c.ring.Handoffs(part) {
		hand = append(hand, d.Node)
	}
	return prim, hand
}

// holders returns the nodes whose device has the object (asked directly, not through the proxy).
func (c *wideCluster) holders(t *testing.T, name meta.ObjectName) map[string]meta.Timestamp {
	t.Helper()
	part := partition(c.ring, name.Account, name.Container, name.Object)
	out := map[string]meta.Timestamp{}
	for addr, n := range c.nodes {
		if o, err := n.HeadObject(context.Background(), "d0", part, name, nodeclient.HeadOptions{}); err == nil {
			out[addr] = o.Timestamp
		}
	}
	return out
}

func TestWritesGoToHandoffsInPlaceOfDownPrimaries(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	for i, downCount := range []int{1, 2} {
		name := meta.ObjectName{Account: "acct", Container: "bkt", Object: fmt.Sprintf("obj-%d", i)}
		prim, hand := c.primaries(name)
		for _, n := range prim[:downCount] {
			c.set(c.down, n, true)
		}
		data := randomBytes(100 << 10)
		_, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{})
		switch {
		case downCount == 1 && err != nil:
			t.Fatalf("%d primary down: put: %v", downCount, err)
		case downCount == 2 && !errors.Is(err, meta.ErrUnavailable):
			// A quorum counts primaries: with one primary taking it the write is not
			// acknowledged (a read's quorum of primaries could miss it), though it is as
			// durable, on three devices.
			t.Fatalf("%d primaries down: put: %v, want ErrUnavailable", downCount, err)
		}
		got := c.holders(t, name)
		if len(got) != 3 {
			t.Fatalf("%d primaries down: object on %v, want three devices", downCount, got)
		}
		for _, n := range hand[:downCount] {
			if _, ok := got[n]; !ok {
				t.Fatalf("%d primaries down: handoff %s lacks the object (holders %v, handoffs %v)", downCount, n, got, hand)
			}
		}
		if b := readAll(t, c.proxy, name, nil); !bytes.Equal(b, data) {
			t.Fatalf("%d primaries down: read back different bytes", downCount)
		}
		// Every primary back but the one that has it: the read finds it on a handoff (and
		// writes it back to the primaries it heard nothing from).
		for _, n := range prim[:downCount] {
			c.set(c.down, n, false)
		}
		for _, n := range prim[downCount:] {
			c.set(c.down, n, true)
		}
		if b := readAll(t, c.proxy, name, nil); !bytes.Equal(b, data) {
			t.Fatalf("%d primaries down: read through handoffs: different bytes", downCount)
		}
		for _, n := range prim[downCount:] {
			c.set(c.down, n, false)
		}
	}
}

func TestDeleteLeavesTombstonesOnHandoffs(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "doomed"}
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 3}, bytes.NewReader([]byte("abc")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	prim, _ := c.primaries(name)
	c.set(c.down, prim[0], true)
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatalf("delete with a primary down: %v", err)
	}
	if _, err := c.proxy.HeadObject(ctx, name); !isNotFound(err) {
		t.Fatalf("head after delete = %v, want not found", err)
	}
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, meta.ErrNotFound) }

func TestANodeThatHangsCostsOneDeadline(t *testing.T) {
	ctx := context.Background()
	// The container and the objects are written with the default deadline, which no healthy
	// node misses, however loaded the machine (their writes sync).
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "o"}
	prim, _ := c.primaries(name)
	// A second object on the same primaries, read only once the node is suppressed, so that a
	// HEAD of the first one sent by the reads before and arriving late (a loaded machine
	// schedules goroutines late) is not taken for one of its read's.
	other := name
	for i := 0; ; i++ {
		other.Object = fmt.Sprintf("o-%d", i)
		if p, _ := c.primaries(other); slices.Equal(p, prim) {
			break
		}
	}
	for _, n := range []meta.ObjectName{name, other} {
		if _, err := c.proxy.PutObject(ctx, n, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Then read through a proxy whose deadline a hanging node costs, five seconds: thousands of
	// times what a node here (in process, no sync) takes to answer a HEAD.
	px, err := New(Config{Ring: c.ring, Dialer: c, ContainerCacheTTL: -1, NodeTimeout: 5 * time.Second, ErrorLimit: 1, ErrorInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.set(c.hang, prim[0], true)
	// The hanging node is asked first, gives up at the deadline, and the next replica answers.
	for i := range 2 {
		if o, err := px.HeadObject(ctx, name); err != nil || o.Size != 1 {
			t.Fatalf("head %d with a hanging primary = %+v, %v", i, o, err)
		}
	}
	// One failure reaches the limit: the node is suppressed, and no request is sent it (a
	// probe, outside the requests, asks it once a second whether it is back). Two things keep
	// it out of the read, and this fails only without both: its suppression, and reads asking
	// nodes with recent errors last (with a quorum from the others, it is never reached).
	if _, err := px.HeadObject(ctx, other); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	asked := c.heads[prim[0]+"/"+other.Object]
	c.mu.Unlock()
	if asked != 0 {
		t.Fatalf("a suppressed node was asked %d times", asked)
	}
}

func TestReadsPreferNodesThatWereNotAway(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "v"}
	put := func(body string) {
		t.Helper()
		if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(body))}, bytes.NewReader([]byte(body)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("version-1")
	prim, _ := c.primaries(name)
	// The first primary misses the overwrite, then returns with the old version.
	c.set(c.down, prim[0], true)
	put("version-2")
	c.set(c.down, prim[0], false)
	if b := readAll(t, c.proxy, name, nil); string(b) != "version-2" {
		t.Fatalf("read %q after a primary returned with a stale copy, want version-2", b)
	}
}

func TestReadsResumeOnAnotherReplicaWhenANodeDiesMidBody(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "big"}
	data := randomBytes(300 << 10)
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	prim, _ := c.primaries(name)
	c.set(c.cut, prim[0], true)
	c.set(c.cut, prim[1], true)
	if b := readAll(t, c.proxy, name, nil); !bytes.Equal(b, data) {
		t.Fatal("whole read: different bytes")
	}
	if b := readAll(t, c.proxy, name, &meta.Range{Start: 5000, End: 200_000}); !bytes.Equal(b, data[5000:200_001]) {
		t.Fatal("ranged read: different bytes")
	}
	// Every replica breaks off: the read fails rather than returning short.
	c.set(c.cut, prim[2], true)
	r, err := c.proxy.GetObject(ctx, meta.ObjectName{Account: "acct", Container: "bkt", Object: "big"}, nil)
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if err == nil {
		t.Fatal("read with every replica breaking off succeeded")
	}
}

func TestPairLocalFirst(t *testing.T) {
	dev := func(node, name string) ring.Device { return ring.Device{Node: node, Name: name} }
	a1, a2, b1, c1, d1 := dev("a", "1"), dev("a", "2"), dev("b", "1"), dev("c", "1"), dev("d", "1")
	for _, tc := range []struct {
		name           string
		objs, listings []ring.Device
		want           [][]int
	}{
		{"disjoint: ring order", []ring.Device{a1, b1, c1}, []ring.Device{d1, a2, dev("e", "1")}, [][]int{{1}, {0}, {2}}},
		{"same devices in another order", []ring.Device{a1, b1, c1}, []ring.Device{c1, a1, b1}, [][]int{{1}, {2}, {0}}},
		{"same device before same node", []ring.Device{a2, a1}, []ring.Device{a1, a2}, [][]int{{1}, {0}}},
		{"two shared nodes", []ring.Device{a1, b1, c1}, []ring.Device{d1, c1, b1}, [][]int{{0}, {2}, {1}}},
		{"more objects than listings", []ring.Device{a1, b1, c1}, []ring.Device{b1, d1}, [][]int{{1}, {0}, {0}}},
		// Two object replicas, three listings (Swift's peer: silver): the third goes to
		// the first object replica as well.
		{"fewer objects than listings", []ring.Device{b1, c1}, []ring.Device{d1, c1, a1}, [][]int{{0, 2}, {1}}},
		{"one object replica", []ring.Device{a1}, []ring.Device{b1, a1, c1}, [][]int{{1, 0, 2}}},
	} {
		got := pairLocalFirst(tc.objs, tc.listings)
		if !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		// Every listing replica hears of every write.
		seen := map[int]bool{}
		for _, js := range got {
			for _, j := range js {
				seen[j] = true
			}
		}
		if len(seen) != len(tc.listings) {
			t.Errorf("%s: %v leaves a listing replica out", tc.name, got)
		}
	}
}

// A full device refuses a write, which goes to a handoff in its place (as a dead node's would),
// without counting against the node's health; with every device full the client hears so.
func TestFullDeviceWritesGoToHandoffs(t *testing.T) {
	c := newWideCluster(t, Config{})
	ctx := context.Background()
	if err := c.proxy.CreateContainer(ctx, "acct", "cont", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "cont", Object: "obj"}
	prim, hand := c.primaries(name)
	c.set(c.full, prim[0], true)
	data := randomBytes(3000)
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{}); err != nil {
		t.Fatalf("put with a primary's device full: %v", err)
	}
	got := c.holders(t, name)
	if _, ok := got[prim[0]]; ok || len(got) != 3 {
		t.Fatalf("holders %v: want the two other primaries and a handoff, not the full %s", got, prim[0])
	}
	if _, ok := got[hand[0]]; !ok {
		t.Fatalf("holders %v: the first handoff %s lacks the write", got, hand[0])
	}
	if c.proxy.health.rank(prim[0]) != 0 {
		t.Fatal("a full device counted as a node failure")
	}
	for n := range c.nodes {
		c.set(c.full, n, true)
	}
	other := meta.ObjectName{Account: "acct", Container: "cont", Object: "other"}
	if _, err := c.proxy.PutObject(ctx, other, meta.Object{Size: 3}, bytes.NewReader([]byte("abc")), PutOptions{}); !errors.Is(err, meta.ErrInsufficientStorage) {
		t.Fatalf("put with every device full: %v, want ErrInsufficientStorage", err)
	}
}

// A POST reaching a replica that missed the newest PUT (it was down; a handoff took the PUT)
// leaves that replica alone, so that its old bytes never become the newest version.
func TestPostSkipsAReplicaThatMissedTheNewestPut(t *testing.T) {
	c := newWideCluster(t, Config{})
	ctx := context.Background()
	if err := c.proxy.CreateContainer(ctx, "acct", "cont", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "cont", Object: "obj"}
	put := func(data string) meta.Object {
		t.Helper()
		o, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, strings.NewReader(data), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	v1 := put("version one")
	prim, _ := c.primaries(name)
	c.set(c.down, prim[2], true)
	v2 := put("version two")
	c.set(c.down, prim[2], false)
	if _, err := c.proxy.PostObject(ctx, name, meta.Object{UserMeta: map[string]string{"color": "red"}}); err != nil {
		t.Fatalf("post: %v", err)
	}
	part := partition(c.ring, name.Account, name.Container, name.Object)
	for i, n := range prim {
		o, err := c.nodes[n].HeadObject(ctx, "d0", part, name, nodeclient.HeadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i < 2 && (o.UserMeta["color"] != "red" || o.ETag != v2.ETag || o.Timestamp <= v2.Timestamp):
			t.Fatalf("primary %d: %+v; want version two, posted", i, o)
		case i == 2 && (o.UserMeta["color"] == "red" || o.ETag != v1.ETag):
			t.Fatalf("the primary that missed version two took the POST over version one: %+v", o)
		}
	}
	// With two of three replicas behind, the POST is refused as unavailable, not applied.
	// (The PUT that left them behind is itself answered unavailable: one primary and two
	// handoffs took it, and a quorum counts primaries.)
	c.set(c.down, prim[0], true)
	c.set(c.down, prim[1], true)
	three := "version three"
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(three))}, strings.NewReader(three), PutOptions{}); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("put with two primaries down: %v, want ErrUnavailable", err)
	}
	c.set(c.down, prim[0], false)
	c.set(c.down, prim[1], false)
	if _, err := c.proxy.PostObject(ctx, name, meta.Object{UserMeta: map[string]string{"color": "blue"}}); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("post with two replicas behind: %v, want ErrUnavailable", err)
	}
}

// TestNotFoundOnlyOnEvidence: a read answers "not found" only when a quorum of the primaries
// says so. Primaries suppressed for their recent errors (nodes that have just come back) are
// still asked before a read gives up, so that handoffs that never held the object cannot
// answer for them; and when too few primaries can answer, the answer is unavailable, not a
// guess.
func TestNotFoundOnlyOnEvidence(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1, ErrorLimit: 1, ErrorInterval: time.Hour})
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "kept"}
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 4}, bytes.NewReader([]byte("kept")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	prim, _ := c.primaries(name)
	// Two primaries fail (one error each suppresses them for an hour) and come back; then the
	// third goes down. Only the two suppressed ones hold the object.
	c.set(c.down, prim[0], true)
	c.set(c.down, prim[1], true)
	if b := readAll(t, c.proxy, name, nil); string(b) != "kept" {
		t.Fatalf("read with two primaries down: %q", b)
	}
	c.set(c.down, prim[0], false)
	c.set(c.down, prim[1], false)
	c.set(c.down, prim[2], true)
	if b := readAll(t, c.proxy, name, nil); string(b) != "kept" {
		t.Fatalf("read when only suppressed primaries hold the object: %q", b)
	}
	if o, err := c.proxy.HeadObject(ctx, name); err != nil || o.Size != 4 {
		t.Fatalf("head when only suppressed primaries hold the object: %+v %v", o, err)
	}

	// A name nobody wrote: with one primary down, two say not found, a quorum: not found.
	missing := meta.ObjectName{Account: "acct", Container: "bkt", Object: "never-written"}
	mp, _ := c.primaries(missing)
	c.set(c.down, prim[2], false)
	c.set(c.down, mp[0], true)
	if _, err := c.proxy.HeadObject(ctx, missing); !isNotFound(err) {
		t.Fatalf("head of a missing name with one primary down = %v, want not found", err)
	}
	// With two primaries down, the one left cannot speak for the others: unavailable.
	c.set(c.down, mp[1], true)
	_, err := c.proxy.HeadObject(ctx, missing)
	if isNotFound(err) || !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("head of a missing name with two primaries down = %v, want unavailable", err)
	}
	if _, err := c.proxy.GetObject(ctx, missing, nil); isNotFound(err) || !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("get of a missing name with two primaries down = %v, want unavailable", err)
	}
}
