package replicator_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/replicator"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

const ecSegment = 3000

// ecCluster is eight storage nodes behind the node protocol, each with a device "d0" (accounts,
// containers, policy 0: 3 replicas) and a device "ec" (policy 1, erasure-coded 4+2): replica r
// of partition p on node (p+r) mod 8, so that the two nodes after a partition's primaries are
// its handoffs. A proxy writes through them; every node runs a reconstructor.
type ecCluster struct {
	t      *testing.T
	ecRing *ring.Ring
	scheme *ec.Scheme
	nodes  []*storage.Node
	dirs   []string
	recons []*replicator.Reconstructor
	proxy  *proxy.Proxy

	mu   sync.Mutex
	down map[string]bool // addresses the proxy cannot reach
	d    nodeclient.Dialer
}

func (c *ecCluster) Dial(addr string) (nodeclient.Client, error) {
	c.mu.Lock()
	down := c.down[addr]
	c.mu.Unlock()
	if down {
		return nil, fmt.Errorf("%s is down", addr)
	}
	return c.d.Dial(addr)
}

func fixedRing(addrs []string, dev string, replicas int) *ring.Ring {
	r := &ring.Ring{PartPower: 3}
	for i, a := range addrs {
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: a, Name: dev, Weight: 1})
	}
	for rep := range replicas {
		row := make([]int, r.Partitions())
		for p := range row {
			row[p] = (p + rep) % len(addrs)
		}
		r.Assignments = append(r.Assignments, row)
	}
	return r
}

func newECCluster(t *testing.T) *ecCluster {
	t.Helper()
	c := &ecCluster{t: t, down: map[string]bool{}}
	var err error
	if c.d, err = backend.NewDialer(backend.ClientConfig{Secret: []byte(secret)}); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 8 {
		dir := t.TempDir()
		n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(dir, "d0")}, {Name: "ec", Dir: filepath.Join(dir, "ec")}}, Peers: c.d})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: []byte(secret)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c.nodes, c.dirs = append(c.nodes, n), append(c.dirs, filepath.Join(dir, "ec"))
		addrs = append(addrs, srv.Listener.Addr().String())
	}
	r0 := fixedRing(addrs, "d0", 3)
	c.ecRing = fixedRing(addrs, "ec", 6)
	if c.scheme, err = ec.New(4, 2, ecSegment); err != nil {
		t.Fatal(err)
	}
	pols, err := policy.New(policy.Policy{Index: 0, Name: "gold", Default: true},
		policy.Policy{Index: 1, Name: "ec42", Type: policy.ErasureCoding, EC: policy.EC{Scheme: policy.CairnScheme, DataFragments: 4, ParityFragments: 2, SegmentSize: ecSegment}})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy, err = proxy.New(proxy.Config{AccountRing: func() *ring.Ring { return r0 }, ContainerRing: func() *ring.Ring { return r0 }, Policies: pols,
		ObjectRings: map[int]func() *ring.Ring{0: func() *ring.Ring { return r0 }, 1: func() *ring.Ring { return c.ecRing }}, Dialer: c, ContainerCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range c.nodes {
		rc, err := replicator.NewReconstructor(replicator.ReconstructorConfig{Node: n, Self: addrs[i], Dialer: c.d, BytesPerSecond: -1,
			Rings: func() []replicator.ECRing { return []replicator.ECRing{{Ring: c.ecRing, Scheme: c.scheme}} }})
		if err != nil {
			t.Fatal(err)
		}
		c.recons = append(c.recons, rc)
	}
	if err := c.proxy.CreateContainer(ctx, "acct", "ec", map[string]string{meta.ContainerPolicyKey: "1"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func ecObj(o string) meta.ObjectName {
	return meta.ObjectName{Account: "acct", Container: "ec", Object: o}
}

// placement returns an object's partition and the node index of each primary, in fragment
// order, then its two handoffs.
func (c *ecCluster) placement(name meta.ObjectName) (uint32, []int, []int) {
	part := c.ecRing.Partition(name.Placed())
	var prim []int
	for r := range 6 {
		prim = append(prim, (int(part)+r)%8)
	}
	return part, prim, []int{(int(part) + 6) % 8, (int(part) + 7) % 8}
}

func (c *ecCluster) setDown(node int, v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down[c.ecRing.Devices[node].Node] = v
}

func (c *ecCluster) put(name meta.ObjectName, data []byte) {
	c.t.Helper()
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data)), UserMeta: map[string]string{"k": "v"}}, bytes.NewReader(data), proxy.PutOptions{}); err != nil {
		c.t.Fatalf("put %s: %v", name.Object, err)
	}
}

func (c *ecCluster) pass() replicator.ReconstructStats {
	var total replicator.ReconstructStats
	for _, r := range c.recons {
		st := r.RunPass(ctx)
		total.Failed += st.Failed
		total.Rebuilt += st.Rebuilt
		total.Copied += st.Copied
		total.Reverted += st.Reverted
		total.Tombstones += st.Tombstones
		total.Evicted += st.Evicted
		total.Unrebuildable += st.Unrebuildable
		total.Remaining += st.Remaining
	}
	return total
}

// archive returns what a node's "ec" device holds of a name: its bytes and metadata (nil
// bytes and a zero object: nothing, or a tombstone).
func (c *ecCluster) archive(node int, name meta.ObjectName) ([]byte, meta.Object) {
	c.t.Helper()
	part, _, _ := c.placement(name)
	r, err := c.nodes[node].GetObject(ctx, "ec", part, name, nil)
	if err != nil {
		return nil, meta.Object{}
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		c.t.Fatalf("reading %s on node %d: %v", name.Object, node, err)
	}
	return b, r.Object
}

// checkHome checks that every primary holds exactly its archive of data (encoded anew here),
// with the object's metadata, and that no handoff holds anything of the name.
func (c *ecCluster) checkHome(name meta.ObjectName, data []byte) {
	c.t.Helper()
	want := make([]bytes.Buffer, 6)
	ws := make([]io.Writer, 6)
	for i := range want {
		ws[i] = &want[i]
	}
	if _, err := c.scheme.Encode(bytes.NewReader(data), ws); err != nil {
		c.t.Fatal(err)
	}
	_, prim, hand := c.placement(name)
	for i, n := range prim {
		b, o := c.archive(n, name)
		a, ok := o.ECArchive()
		if !ok || a.Index != i || a.Size != int64(len(data)) || !bytes.Equal(b, want[i].Bytes()) || o.UserMeta["k"] != "v" {
			c.t.Fatalf("%s: primary %d (node %d) holds %d bytes, %+v (archive %+v, ok %v)", name.Object, i, n, len(b), o, a, ok)
		}
	}
	part, _, _ := c.placement(name)
	for _, n := range hand {
		if vs, _ := c.nodes[n].PartitionVersions(ctx, "ec", c.ecRing.PartPower, part, nil); len(vs) != 0 {
			c.t.Fatalf("%s: handoff node %d still holds %v", name.Object, n, vs)
		}
	}
}

func randomData(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestReconstructorRebuildsLostArchives: archives lost from one primary (some objects), from
// two (every object of a partition, a wiped device) and flagged corrupt on a third are rebuilt
// by a pass, each by its own primary or, for a device left with nothing of the partition, by
// the primary before it.
func TestReconstructorRebuildsLostArchives(t *testing.T) {
	c := newECCluster(t)
	objects := map[meta.ObjectName][]byte{}
	for i, size := range []int{0, 10, ecSegment, 5*ecSegment + 7, 400 << 10} {
		name := ecObj(fmt.Sprintf("o%d", i))
		objects[name] = randomData(size)
		c.put(name, objects[name])
	}
	// All five in one partition would be luck; take the first object's partition for the
	// wipe and lose some archives of the others.
	first := ecObj("o0")
	part, prim, _ := c.placement(first)
	for name := range objects {
		p, pr, _ := c.placement(name)
		if p == part {
			for _, n := range prim[1:3] { // primaries 1 and 2 of the partition lose everything
				c.nodes[n].EvictObject(ctx, "ec", name, c.version(n, name))
			}
			continue
		}
		c.nodes[pr[4]].EvictObject(ctx, "ec", name, c.version(pr[4], name))
	}
	// A bad byte in a data file: the read that meets it flags the archive corrupt.
	big := ecObj("o4")
	_, bprim, _ := c.placement(big)
	flipDataFile(t, c.dirs[bprim[0]])
	bpart, _, _ := c.placement(big)
	if r, err := c.nodes[bprim[0]].GetObject(ctx, "ec", bpart, big, nil); err == nil {
		_, err = io.ReadAll(r)
		r.Close()
		if err == nil {
			t.Fatal("a flipped byte was read without an error")
		}
	}
	if _, err := c.nodes[bprim[0]].HeadObject(ctx, "ec", bpart, big, nodeclient.HeadOptions{}); err == nil {
		t.Fatal("the damaged archive is not flagged")
	}

	st := c.pass()
	if st.Failed != 0 || st.Rebuilt == 0 {
		t.Fatalf("pass: %+v", st)
	}
	for name, data := range objects {
		c.checkHome(name, data)
	}
	if st := c.pass(); st.Rebuilt+st.Copied+st.Tombstones != 0 || st.Failed != 0 {
		t.Fatalf("a second pass found more to do: %+v", st)
	}
}

// version returns the timestamp of what a node's "ec" device holds of a name.
func (c *ecCluster) version(node int, name meta.ObjectName) meta.Timestamp {
	part, _, _ := c.placement(name)
	vs, _ := c.nodes[node].PartitionVersions(ctx, "ec", c.ecRing.PartPower, part, nil)
	for _, v := range vs {
		if v.Name == name {
			return v.Timestamp
		}
	}
	return 0
}

func flipDataFile(t *testing.T, dir string) {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".data") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("no data file under %s", dir)
	}
	f, err := os.OpenFile(files[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	f.ReadAt(b, 100)
	b[0] ^= 1
	if _, err := f.WriteAt(b, 100); err != nil {
		t.Fatal(err)
	}
}

// TestReconstructorRevertsHandoffsAndTombstones: writes made while two primaries were down sit
// on the handoffs, each archive of the fragment index it stands in for; a DELETE and a POST
// missed by a primary; a pass brings every archive home (a handoff's to its own primary),
// empties the handoffs, and takes the tombstone and the metadata where they were missed.
func TestReconstructorRevertsHandoffsAndTombstones(t *testing.T) {
	c := newECCluster(t)
	name := ecObj("away")
	_, prim, hand := c.placement(name)
	c.setDown(prim[1], true)
	c.setDown(prim[4], true)
	data := randomData(4*ecSegment + 1)
	c.put(name, data)
	posted := ecObj("posted")
	pdata := randomData(2 * ecSegment)
	c.put(posted, pdata)
	doomed := ecObj("doomed")
	c.put(doomed, randomData(100))
	_, dprim, _ := c.placement(doomed)
	c.setDown(prim[1], false)
	c.setDown(prim[4], false)
	// The two archives' PUTs draw the handoffs concurrently: either may get either.
	stood := map[string]bool{}
	for _, h := range hand {
		_, o := c.archive(h, name)
		stood[o.SysMeta[meta.SysECIndex]] = true
	}
	if !stood["1"] || !stood["4"] {
		t.Fatalf("the handoffs stand in for fragments %v, want 1 and 4", stood)
	}
	_, pprim, _ := c.placement(posted)
	c.setDown(pprim[5], true)
	if _, err := c.proxy.PostObject(ctx, posted, meta.Object{UserMeta: map[string]string{"k": "v", "new": "yes"}}); err != nil {
		t.Fatal(err)
	}
	c.setDown(pprim[5], false)
	c.setDown(dprim[0], true)
	if err := c.proxy.DeleteObject(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	c.setDown(dprim[0], false)

	st := c.pass()
	st2 := c.pass() // a handoff's copy leaves once its primary holds it
	if st.Failed+st2.Failed != 0 || st.Reverted == 0 || st.Tombstones == 0 || st.Copied == 0 {
		t.Fatalf("passes: %+v, %+v", st, st2)
	}
	if st.Rebuilt != 0 {
		t.Fatalf("archives were rebuilt that existed whole: %+v", st)
	}
	if st2.Remaining != 0 {
		t.Fatalf("handoffs left after two passes: %+v", st2)
	}
	c.checkHome(name, data)
	c.checkHome(posted, pdata)
	for _, n := range pprim {
		if _, o := c.archive(n, posted); o.UserMeta["new"] != "yes" {
			t.Fatalf("node %d lacks the POST: %+v", n, o.UserMeta)
		}
	}
	for _, n := range dprim {
		if b, o := c.archive(n, doomed); b != nil || o.Size != 0 {
			t.Fatalf("node %d still serves a deleted object", n)
		}
	}
	r, err := c.proxy.GetObject(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after reconstruction: %v", err)
	}
}

// TestReconstructorLeavesWhatCannotBeRebuilt: a version of which fewer than k archives exist
// (left by a write that reached three devices) is counted, not retried as a failure, and the
// older version the others hold is left alone.
func TestReconstructorLeavesWhatCannotBeRebuilt(t *testing.T) {
	c := newECCluster(t)
	name := ecObj("partial")
	old := randomData(1000)
	c.put(name, old)
	part, prim, _ := c.placement(name)
	// Three archives of a newer version, put on their primaries directly.
	arcs := make([]bytes.Buffer, 6)
	ws := make([]io.Writer, 6)
	for i := range arcs {
		ws[i] = &arcs[i]
	}
	newer := randomData(900)
	if _, err := c.scheme.Encode(bytes.NewReader(newer), ws); err != nil {
		t.Fatal(err)
	}
	ts := meta.Now()
	for i := range 3 {
		o := meta.Object{Timestamp: ts, Size: int64(arcs[i].Len()), SysMeta: map[string]string{}}
		meta.ECArchive{Index: i, K: 4, M: 2, SegmentSize: ecSegment, Size: 900, ETag: "x", Written: ts}.Set(o.SysMeta)
		if _, err := c.nodes[prim[i]].PutObject(ctx, "ec", part, name, o, bytes.NewReader(arcs[i].Bytes()), nodeclient.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st := c.pass()
	if st.Failed != 0 || st.Unrebuildable == 0 || st.Rebuilt != 0 {
		t.Fatalf("pass: %+v", st)
	}
	for _, n := range prim[3:] {
		if _, o := c.archive(n, name); o.Timestamp == ts || o.Timestamp == 0 {
			t.Fatalf("node %d: %+v", n, o)
		}
	}
}
