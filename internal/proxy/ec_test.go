package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// ecSegment is the test policy's segment size: small, so that objects of a few kilobytes span
// several segments.
const ecSegment = 4000

// ecCluster is a proxy over eight storage nodes with two devices each: "d0" for accounts,
// containers and replicated policy 0 (3 replicas), "ec" for policy 1, erasure-coded 4+2 (6
// replicas over 8 devices: every partition has two handoffs).
type ecCluster struct {
	proxy  *Proxy
	cfg    Config // the proxy's: another proxy over the same nodes is New(cfg)
	ecRing *ring.Ring
	scheme *ec.Scheme
	nodes  map[string]*storage.Node
	dirs   map[string]string // node → its "ec" device's directory

	mu    sync.Mutex
	down  map[string]bool
	cut   map[string]bool // object bodies break off after 1000 bytes
	late  map[string]bool // object PUTs take the whole body, then fail
	calls map[string]int  // object PUTs by node
}

func (c *ecCluster) Dial(node string) (nodeclient.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down[node] {
		return nil, fmt.Errorf("node %s is down", node)
	}
	if c.cut[node] {
		return cuttingClient{c.nodes[node]}, nil
	}
	return countingClient{Node: c.nodes[node], c: c, node: node}, nil
}

// countingClient counts a node's object PUTs.
type countingClient struct {
	*storage.Node
	c    *ecCluster
	node string
}

func (n countingClient) PutObject(ctx context.Context, dev string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts nodeclient.PutOptions) (nodeclient.PutResult, error) {
	n.c.mu.Lock()
	n.c.calls[n.node]++
	late := n.c.late[n.node]
	n.c.mu.Unlock()
	if late {
		io.Copy(io.Discard, body)
		return nodeclient.PutResult{}, fmt.Errorf("node %s failed after the body: %w", n.node, meta.ErrUnavailable)
	}
	return n.Node.PutObject(ctx, dev, part, name, obj, body, opts)
}

func (c *ecCluster) set(m map[string]bool, node string, v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m[node] = v
}

func ecPolicies(t testing.TB, segment int) *policy.Set {
	t.Helper()
	s, err := policy.New(policy.Policy{Index: 0, Name: "gold", Default: true},
		policy.Policy{Index: 1, Name: "ec42", Type: policy.ErasureCoding,
			EC: policy.EC{Scheme: policy.CairnScheme, DataFragments: 4, ParityFragments: 2, SegmentSize: segment}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func buildRing(t testing.TB, nodes []string, dev string, replicas int) *ring.Ring {
	t.Helper()
	b, err := ring.NewBuilder(6, replicas, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		if _, err := b.Add(ring.Device{ID: -1, Zone: i, Node: n, Name: dev, Weight: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Rebalance(time.Unix(0, 0), 1); err != nil {
		t.Fatal(err)
	}
	r, err := b.Ring()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newECCluster(t testing.TB) *ecCluster { return newECClusterWith(t, ecSegment) }

// newECClusterWith is newECCluster with the policy's segment size given, and containers "ec"
// (the erasure-coded policy) and "rep" (policy 0, three replicas) in account "acct".
func newECClusterWith(t testing.TB, segment int) *ecCluster {
	t.Helper()
	c := &ecCluster{nodes: map[string]*storage.Node{}, dirs: map[string]string{}, down: map[string]bool{}, cut: map[string]bool{}, late: map[string]bool{}, calls: map[string]int{}}
	var names []string
	for i := range 8 {
		name := fmt.Sprintf("127.0.0.1:%d", 7100+i)
		dir := t.TempDir()
		n, err := storage.Open(storage.Config{Address: name, Peers: c, Devices: []storage.DeviceConfig{
			{Name: "d0", Dir: filepath.Join(dir, "d0")}, {Name: "ec", Dir: filepath.Join(dir, "ec")}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name], c.dirs[name] = n, filepath.Join(dir, "ec")
		names = append(names, name)
	}
	r0 := buildRing(t, names, "d0", 3)
	c.ecRing = buildRing(t, names, "ec", 6)
	c.cfg = Config{AccountRing: func() *ring.Ring { return r0 }, ContainerRing: func() *ring.Ring { return r0 },
		Policies: ecPolicies(t, segment), ObjectRings: map[int]func() *ring.Ring{0: func() *ring.Ring { return r0 }, 1: func() *ring.Ring { return c.ecRing }},
		Dialer: c, ContainerCacheTTL: -1}
	p, err := New(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	if c.scheme, err = ec.New(4, 2, int64(segment)); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateContainer(context.Background(), "acct", "ec", map[string]string{meta.ContainerPolicyKey: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateContainer(context.Background(), "acct", "rep", nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// primaries returns the nodes of an object's primaries, in fragment order, and its handoffs.
func (c *ecCluster) primaries(name meta.ObjectName) (prim, hand []string) {
	part := partition(c.ecRing, name.Account, name.Container, name.Object)
	for _, d := range c.ecRing.Nodes(part) {
		prim = append(prim, d.Node)
	}
	for d := range c.ecRing.Handoffs(part) {
		hand = append(hand, d.Node)
	}
	return prim, hand
}

// archives returns the archive each node's "ec" device holds of an object (asked directly).
func (c *ecCluster) archives(t *testing.T, name meta.ObjectName) map[string]meta.Object {
	t.Helper()
	part := partition(c.ecRing, name.Account, name.Container, name.Object)
	out := map[string]meta.Object{}
	for addr, n := range c.nodes {
		if o, err := n.HeadObject(context.Background(), "ec", part, name, nodeclient.HeadOptions{}); err == nil {
			out[addr] = o
		}
	}
	return out
}

func (c *ecCluster) put(t *testing.T, object string, data []byte) meta.ObjectName {
	t.Helper()
	name := meta.ObjectName{Account: "acct", Container: "ec", Object: object}
	o, err := c.proxy.PutObject(context.Background(), name, meta.Object{Size: int64(len(data)), ContentType: "text/plain"}, bytes.NewReader(data), PutOptions{})
	if err != nil {
		t.Fatalf("put %s (%d bytes): %v", object, len(data), err)
	}
	if o.Size != int64(len(data)) || o.ETag != md5hex(data) {
		t.Fatalf("put %s: answered size %d etag %s, want %d %s", object, o.Size, o.ETag, len(data), md5hex(data))
	}
	return name
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// TestECRoundTrip writes objects of many sizes to a 4+2 policy and reads them whole and in
// ranges; every primary holds its own fragment index, an archive as long as the code says, and
// the container lists the object's size and ETag.
func TestECRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	sizes := []int{0, 1, 100, ecSegment - 1, ecSegment, ecSegment + 1, 3*ecSegment + 17, 120 << 10}
	bodies := map[string][]byte{}
	for _, size := range sizes {
		data := randomBytes(size)
		name := c.put(t, fmt.Sprintf("obj-%d", size), data)
		bodies[name.Object] = data
		if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back differently", size)
		}
		h, err := c.proxy.HeadObject(ctx, name)
		if err != nil || h.Size != int64(size) || h.ETag != md5hex(data) || h.ContentType != "text/plain" {
			t.Fatalf("%d bytes: head = %+v, %v", size, h, err)
		}
		if _, leaked := h.SysMeta[meta.SysECIndex]; leaked {
			t.Fatalf("%d bytes: the archive's own metadata is served: %v", size, h.SysMeta)
		}
		prim, _ := c.primaries(name)
		arcs := c.archives(t, name)
		if len(arcs) != 6 {
			t.Fatalf("%d bytes: archives on %d devices, want 6", size, len(arcs))
		}
		for i, n := range prim {
			a, ok := arcs[n].ECArchive()
			if !ok || a.Index != i || a.Size != int64(size) || a.ETag != md5hex(data) || arcs[n].Size != c.scheme.ArchiveSize(int64(size)) {
				t.Fatalf("%d bytes: primary %d (%s) holds %+v (archive %+v)", size, i, n, arcs[n], a)
			}
		}
		for _, rng := range []meta.Range{{Start: 0, End: 0}, {Start: 1, End: -1}, {Suffix: 5}, {Start: ecSegment - 3, End: ecSegment + 2},
			{Start: int64(size) / 3, End: 2 * int64(size) / 3}, {Start: int64(size) - 1, End: int64(size) + 100}} {
			off, n, err := rng.Resolve(int64(size))
			if err != nil {
				if _, gerr := c.proxy.GetObject(ctx, name, &rng); !errors.Is(gerr, meta.ErrInvalidRange) {
					t.Fatalf("%d bytes, range %+v: %v, want an invalid range", size, rng, gerr)
				}
				continue
			}
			if got := readAll(t, c.proxy, name, &rng); !bytes.Equal(got, data[off:off+n]) {
				t.Fatalf("%d bytes, range %+v: read %d bytes differently", size, rng, len(got))
			}
		}
	}
	l, err := c.proxy.ListObjects(ctx, "acct", "ec", meta.ListOptions{})
	if err != nil || len(l.Objects) != len(sizes) {
		t.Fatalf("listing: %+v, %v", l, err)
	}
	for _, e := range l.Objects {
		if data := bodies[e.Name]; e.Size != int64(len(data)) || e.ETag != md5hex(data) {
			t.Fatalf("listed %+v, want size %d etag %s", e, len(data), md5hex(data))
		}
	}
}

// TestECReadsWithNodesDown loses up to m primaries (down, or dying in the middle of a body) and
// still reads every byte; with m+1 down the read fails, never with wrong bytes.
func TestECReadsWithNodesDown(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	data := randomBytes(5*ecSegment + 321)
	name := c.put(t, "o", data)
	prim, _ := c.primaries(name)
	for _, down := range [][]int{{0}, {0, 1}, {2, 5}, {4, 5}} {
		for _, i := range down {
			c.set(c.down, prim[i], true)
		}
		if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
			t.Fatalf("primaries %v down: different bytes", down)
		}
		if h, err := c.proxy.HeadObject(ctx, name); err != nil || h.Size != int64(len(data)) {
			t.Fatalf("primaries %v down: head %+v, %v", down, h, err)
		}
		for _, i := range down {
			c.set(c.down, prim[i], false)
		}
	}
	// Two data fragments' nodes die in the middle of their bodies: the read moves to parity.
	c.set(c.cut, prim[0], true)
	c.set(c.cut, prim[2], true)
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("two archives cut off mid-body: different bytes")
	}
	c.set(c.cut, prim[0], false)
	c.set(c.cut, prim[2], false)
	for _, n := range prim[:3] {
		c.set(c.down, n, true)
	}
	if _, err := c.proxy.GetObject(ctx, name, nil); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("three of six down: get = %v, want unavailable", err)
	}
	if _, err := c.proxy.HeadObject(ctx, name); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("three of six down: head = %v, want unavailable", err)
	}
}

// TestECPutWithNodesDown writes with primaries down: handoffs take their fragment indexes, and
// the object reads back; with fewer than k+1 devices reachable the write fails and the version
// it would have replaced stays whole.
func TestECPutWithNodesDown(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	old := randomBytes(2*ecSegment + 5)
	name := c.put(t, "o", old)
	prim, hand := c.primaries(name)
	c.set(c.down, prim[1], true)
	c.set(c.down, prim[4], true)
	data := randomBytes(3*ecSegment + 9)
	c.put(t, "o", data)
	// The two archives' PUTs draw the handoffs concurrently: either may get either.
	arcs := c.archives(t, name)
	stood := map[int]bool{}
	for _, n := range hand[:2] {
		a, ok := arcs[n].ECArchive()
		if !ok || a.ETag != md5hex(data) {
			t.Fatalf("handoff %s holds %+v", n, arcs[n])
		}
		stood[a.Index] = true
	}
	if !stood[1] || !stood[4] {
		t.Fatalf("handoffs stand in for fragments %v, want 1 and 4", stood)
	}
	c.set(c.down, prim[1], false)
	c.set(c.down, prim[4], false)
	// The primaries back hold the old version: the read decodes the new one from the others.
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("primaries back with the old version: read something else than the new one")
	}

	// Four of eight nodes down: five devices at most, of them four reachable primaries and the
	// handoffs... make it four reachable in all.
	for _, n := range append(prim[:2:2], hand...) {
		c.set(c.down, n, true)
	}
	newer := randomBytes(100)
	_, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(newer))}, bytes.NewReader(newer), PutOptions{})
	if !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("put with four devices reachable = %v, want unavailable", err)
	}
	for _, n := range append(prim[:2:2], hand...) {
		c.set(c.down, n, false)
	}
	for n, o := range c.archives(t, name) {
		if a, _ := o.ECArchive(); a.ETag == md5hex(newer) {
			t.Fatalf("the failed write committed an archive on %s", n)
		}
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("after a failed overwrite: not the previous version")
	}

	// Two primaries fail once the whole body has reached them, and no handoff can stand in:
	// four archives arrive whole, one short of the quorum, and none may commit (the old
	// version would lose two archives to bytes nobody can read).
	for _, n := range hand {
		c.set(c.down, n, true)
	}
	c.set(c.late, prim[0], true)
	c.set(c.late, prim[3], true)
	_, err = c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(newer))}, bytes.NewReader(newer), PutOptions{})
	if !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("put with two archives failing at the end = %v, want unavailable", err)
	}
	for n, o := range c.archives(t, name) {
		if a, _ := o.ECArchive(); a.ETag == md5hex(newer) {
			t.Fatalf("a write short of its quorum committed an archive on %s", n)
		}
	}
	c.set(c.late, prim[0], false)
	c.set(c.late, prim[3], false)
	for _, n := range hand {
		c.set(c.down, n, false)
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("after an overwrite short of its quorum: not the previous version")
	}
}

// TestECDamagedArchive flips a byte of archives on disk: the node's checksum fails it, and the
// read decodes from the others; with more than m damaged the read fails, never with bad bytes.
func TestECDamagedArchive(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	// Archives past the inline threshold (64 KiB) are data files.
	data := randomBytes(400 << 10)
	name := c.put(t, "big", data)
	prim, _ := c.primaries(name)
	flip := func(node string) {
		t.Helper()
		var files []string
		filepath.WalkDir(c.dirs[node], func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".data") {
				files = append(files, p)
			}
			return nil
		})
		if len(files) != 1 {
			t.Fatalf("data files on %s: %v", node, files)
		}
		f, err := os.OpenFile(files[0], os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		at := int64(70_000) // well inside the archive, past its first segments
		if _, err := f.ReadAt(b, at); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x40
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
	}
	flip(prim[1])
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("one damaged archive: different bytes")
	}
	rng := &meta.Range{Start: 200 << 10, End: 300 << 10}
	if got := readAll(t, c.proxy, name, rng); !bytes.Equal(got, data[200<<10:300<<10+1]) {
		t.Fatal("one damaged archive, a range: different bytes")
	}
	flip(prim[3])
	flip(prim[4])
	r, err := c.proxy.GetObject(ctx, name, nil)
	if err == nil {
		got, rerr := io.ReadAll(r)
		r.Close()
		if rerr == nil {
			t.Fatalf("three damaged archives: read %d bytes without an error", len(got))
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatal("three damaged archives: bad bytes served before the error")
		}
	}
}

// TestECDeleteAndPost: a DELETE removes the object from every primary (one down: a handoff
// takes its tombstone), a POST changes the metadata of every archive, and an archive that
// missed the POST still decodes with the others.
func TestECDeleteAndPost(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	data := randomBytes(2*ecSegment + 1)
	name := c.put(t, "o", data)
	prim, _ := c.primaries(name)
	c.set(c.down, prim[5], true)
	o, err := c.proxy.PostObject(ctx, name, meta.Object{ContentType: "image/png", UserMeta: map[string]string{"color": "blue"}})
	if err != nil || o.Size != int64(len(data)) || o.ETag != md5hex(data) {
		t.Fatalf("post = %+v, %v", o, err)
	}
	c.set(c.down, prim[5], false)
	// prim[5] holds the archive without the POST; every other primary with it.
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("after a POST: different bytes")
	}
	c.set(c.down, prim[0], true) // now decoding needs prim[5]'s archive, older metadata and all
	h, err := c.proxy.HeadObject(ctx, name)
	if err != nil || h.UserMeta["color"] != "blue" || h.ContentType != "image/png" || h.Size != int64(len(data)) {
		t.Fatalf("head after post = %+v, %v", h, err)
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
		t.Fatal("after a POST, decoding with the archive that missed it: different bytes")
	}
	l, err := c.proxy.ListObjects(ctx, "acct", "ec", meta.ListOptions{})
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Size != int64(len(data)) || l.Objects[0].ContentType != "image/png" {
		t.Fatalf("listing after post: %+v, %v", l, err)
	}
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatalf("delete with a primary down: %v", err)
	}
	c.set(c.down, prim[0], false)
	if _, err := c.proxy.HeadObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("head after delete = %v, want not found", err)
	}
	if _, err := c.proxy.GetObject(ctx, name, nil); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("get after delete = %v, want not found", err)
	}
	if err := c.proxy.DeleteObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("second delete = %v, want not found", err)
	}
}

// TestECConditionsAndChecks: If-None-Match and If-Match are decided by the archives against
// the object's ETag; the client's BeforeCommit sees the whole object once, may add metadata to
// every archive, and refuses before any archive commits; a body shorter than declared stores
// nothing.
func TestECConditionsAndChecks(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	data := randomBytes(ecSegment + 10)
	name := c.put(t, "o", data)
	put := func(body []byte, size int64, opts PutOptions) error {
		_, err := c.proxy.PutObject(ctx, name, meta.Object{Size: size}, bytes.NewReader(body), opts)
		return err
	}
	other := randomBytes(50)
	if err := put(other, 50, PutOptions{If: meta.Precondition{IfNoneMatch: true}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("If-None-Match over an object = %v", err)
	}
	if err := put(other, 50, PutOptions{If: meta.Precondition{IfMatch: []string{"0123"}}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("If-Match with another ETag = %v", err)
	}
	var calls int
	var mu sync.Mutex
	hook := func(o *meta.Object) error {
		mu.Lock()
		calls++
		mu.Unlock()
		if o.Size != 50 || o.ETag != md5hex(other) {
			return fmt.Errorf("hook saw size %d etag %s", o.Size, o.ETag)
		}
		o.SysMeta = map[string]string{"checksum-crc32": "abc"}
		return nil
	}
	if err := put(other, 50, PutOptions{If: meta.Precondition{IfMatch: []string{md5hex(data)}}, BeforeCommit: hook}); err != nil {
		t.Fatalf("If-Match with the object's ETag: %v", err)
	}
	if calls != 1 {
		t.Fatalf("BeforeCommit ran %d times, want once", calls)
	}
	for n, o := range c.archives(t, name) {
		if o.SysMeta["checksum-crc32"] != "abc" {
			t.Fatalf("archive on %s lacks what BeforeCommit added: %v", n, o.SysMeta)
		}
	}
	if h, _ := c.proxy.HeadObject(ctx, name); h.SysMeta["checksum-crc32"] != "abc" || h.ETag != md5hex(other) {
		t.Fatalf("head = %+v", h)
	}
	refuse := errors.New("bad digest")
	if err := put(randomBytes(10), 10, PutOptions{BeforeCommit: func(*meta.Object) error { return refuse }}); !errors.Is(err, refuse) {
		t.Fatalf("a refusing BeforeCommit: %v", err)
	}
	if err := put(randomBytes(10), 20, PutOptions{}); !errors.Is(err, meta.ErrIncompleteBody) {
		t.Fatalf("a short body: %v", err)
	}
	if err := put(randomBytes(30), 20, PutOptions{}); !errors.Is(err, meta.ErrBodyTooLong) {
		t.Fatalf("a long body: %v", err)
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, other) {
		t.Fatal("refused writes changed the object")
	}
	// Racing creators: one archive decides, so exactly one wins, and its object reads back.
	for round := range 5 {
		racy := meta.ObjectName{Account: "acct", Container: "ec", Object: fmt.Sprintf("race-%d", round)}
		bodies := [][]byte{randomBytes(3*ecSegment + round), randomBytes(2*ecSegment + round)}
		errs := make([]error, len(bodies))
		var wg sync.WaitGroup
		for i, b := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.proxy.PutObject(ctx, racy, meta.Object{Size: int64(len(b))}, bytes.NewReader(b), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner < 0:
				winner = i
			case err == nil:
				t.Fatalf("round %d: both racing creates succeeded", round)
			case !errors.Is(err, meta.ErrPreconditionFailed):
				t.Fatalf("round %d: the loser got %v, want a failed precondition", round, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: neither racing create succeeded: %v", round, errs)
		}
		if got := readAll(t, c.proxy, racy, nil); !bytes.Equal(got, bodies[winner]) {
			t.Fatalf("round %d: read back something else than the winner's", round)
		}
	}
	// A body of unknown length.
	chunked := randomBytes(3*ecSegment + 1)
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: -1}, iotest.HalfReader(bytes.NewReader(chunked)), PutOptions{}); err != nil {
		t.Fatalf("chunked put: %v", err)
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, chunked) {
		t.Fatal("chunked put: read back differently")
	}
}

// TestECManifest: segments and manifest in an erasure-coded container read as one object.
func TestECManifest(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	a, b := randomBytes(ecSegment+3), randomBytes(2*ecSegment)
	c.put(t, "seg-a", a)
	c.put(t, "seg-b", b)
	man := meta.ObjectName{Account: "acct", Container: "ec", Object: "whole"}
	segs := []meta.Segment{{Container: "ec", Object: "seg-a", Size: int64(len(a)), ETag: md5hex(a)}, {Container: "ec", Object: "seg-b", Size: int64(len(b)), ETag: md5hex(b)}}
	if _, err := c.proxy.PutObject(ctx, man, meta.Object{Manifest: segs, ETag: "m-etag"}, nil, PutOptions{}); err != nil {
		t.Fatalf("put manifest: %v", err)
	}
	want := append(bytes.Clone(a), b...)
	if got := readAll(t, c.proxy, man, nil); !bytes.Equal(got, want) {
		t.Fatal("manifest read differently")
	}
	if got := readAll(t, c.proxy, man, &meta.Range{Start: ecSegment, End: ecSegment + 10}); !bytes.Equal(got, want[ecSegment:ecSegment+11]) {
		t.Fatal("manifest range read differently")
	}
	if h, err := c.proxy.HeadObject(ctx, man); err != nil || h.Size != int64(len(want)) || h.ETag != "m-etag" {
		t.Fatalf("head manifest = %+v, %v", h, err)
	}
}

// TestECPutInOrder: a compare-and-swap on an erasure-coded object picks one winner.
func TestECPutInOrder(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	name := meta.ObjectName{Account: "acct", Container: "ec", Object: "lease"}
	first, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("one"), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
	if err != nil || first.Size != 3 || first.ETag != md5hex([]byte("one")) {
		t.Fatalf("first = %+v, %v", first, err)
	}
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("two"), PutOptions{If: meta.Precondition{IfNoneMatch: true}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("second create = %v", err)
	}
	noArchiveOf := func(body string) {
		t.Helper()
		for n, o := range c.archives(t, name) {
			if a, _ := o.ECArchive(); a.ETag == md5hex([]byte(body)) {
				t.Fatalf("%q, refused, has an archive on %s", body, n)
			}
		}
	}
	noArchiveOf("two")
	// Two archives fail once they are whole and no handoff can stand in: the decider must not
	// commit either, or readers (who decode the version k archives hold) would base every
	// later swap on a version the decider no longer has.
	prim, hand := c.primaries(name)
	for _, n := range hand {
		c.set(c.down, n, true)
	}
	c.set(c.late, prim[2], true)
	c.set(c.late, prim[5], true)
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("lost"), PutOptions{If: meta.Precondition{IfTimestamp: first.Timestamp}}); err == nil {
		t.Fatal("a swap reaching four archives succeeded")
	}
	c.set(c.late, prim[2], false)
	c.set(c.late, prim[5], false)
	for _, n := range hand {
		c.set(c.down, n, false)
	}
	noArchiveOf("lost")
	h, err := c.proxy.HeadObject(ctx, name)
	if err != nil || h.Timestamp != first.Timestamp {
		t.Fatalf("after a failed swap: %+v, %v", h, err)
	}
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("three"), PutOptions{If: meta.Precondition{IfTimestamp: h.Timestamp}}); err != nil {
		t.Fatalf("swap on what was read = %v", err)
	}
	if got := readAll(t, c.proxy, name, nil); string(got) != "three" {
		t.Fatalf("read %q", got)
	}
}
