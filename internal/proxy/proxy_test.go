package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// cluster is a proxy over real storage nodes, one device each, every partition on all of them.
type cluster struct {
	proxy *Proxy
	nodes map[string]*storage.Node
	down  map[string]bool
}

func (c *cluster) Dial(node string) (nodeclient.Client, error) {
	if c.down[node] {
		return nil, fmt.Errorf("node %s is down", node)
	}
	return c.nodes[node], nil
}

func newCluster(t testing.TB, replicas int) *cluster {
	t.Helper()
	c := &cluster{nodes: map[string]*storage.Node{}, down: map[string]bool{}}
	const partPower = 4
	r := &ring.Ring{PartPower: partPower}
	for i := 0; i < replicas; i++ {
		name := fmt.Sprintf("node%d", i)
		n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), name)}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name] = n
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: name, Name: "d0", Weight: 1})
		r.Assignments = append(r.Assignments, make([]int, 1<<partPower))
		for p := range r.Assignments[i] {
			r.Assignments[i][p] = i
		}
	}
	p, err := New(Config{Ring: r, Dialer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	return c
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func readAll(t *testing.T, p *Proxy, name meta.ObjectName, rng *meta.Range) []byte {
	t.Helper()
	r, err := p.GetObject(context.Background(), name, rng)
	if err != nil {
		t.Fatalf("get %s: %v", name.Object, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name.Object, err)
	}
	if int64(len(b)) != r.Length {
		t.Fatalf("read %d bytes, reader promised %d", len(b), r.Length)
	}
	return b
}

func TestReplicatedWritesSurviveAMinorityDown(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); !errors.Is(err, meta.ErrExists) {
		t.Fatalf("second create = %v, want ErrExists", err)
	}
	for _, size := range []int{0, 1000, 300 << 10} {
		name := meta.ObjectName{Account: "acct", Container: "bkt", Object: fmt.Sprintf("obj-%d", size)}
		data := randomBytes(size)
		c.down["node1"] = true // one of three replicas unreachable: quorum is two
		o, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(size)}, bytes.NewReader(data), PutOptions{})
		if err != nil {
			t.Fatalf("put with a node down: %v", err)
		}
		if o.Size != int64(size) {
			t.Fatalf("size %d, want %d", o.Size, size)
		}
		c.down["node1"] = false
		c.down["node0"] = true // reads fall back past a dead node and past the one that missed the write
		if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back different bytes", size)
		}
		c.down["node0"] = false
	}
	c.down["node0"], c.down["node1"] = true, true
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "no-quorum"}
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 3}, bytes.NewReader([]byte("abc")), PutOptions{}); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("put with two of three down = %v, want ErrUnavailable", err)
	}
}

func TestPutIntoMissingContainer(t *testing.T) {
	c := newCluster(t, 1)
	name := meta.ObjectName{Account: "a", Container: "nope", Object: "x"}
	_, err := c.proxy.PutObject(context.Background(), name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{})
	if !errors.Is(err, meta.ErrNoContainer) || !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNoContainer", err)
	}
}

func TestManifestReadsAsOneObjectWithRanges(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 1)
	for _, cn := range []string{"bkt", meta.ReservedPrefix + "segs"} {
		if err := c.proxy.CreateContainer(ctx, "a", cn, nil); err != nil {
			t.Fatal(err)
		}
	}
	var whole []byte
	var segs []meta.Segment
	for i, size := range []int{100 << 10, 7, 200 << 10} {
		data := randomBytes(size)
		whole = append(whole, data...)
		sn := meta.ObjectName{Account: "a", Container: meta.ReservedPrefix + "segs", Object: fmt.Sprintf("part%d", i)}
		o, err := c.proxy.PutObject(ctx, sn, meta.Object{Size: int64(size)}, bytes.NewReader(data), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, meta.Segment{Container: sn.Container, Object: sn.Object, Size: o.Size, ETag: o.ETag})
	}
	name := meta.ObjectName{Account: "a", Container: "bkt", Object: "big"}
	o, err := c.proxy.PutObject(ctx, name, meta.Object{ETag: "abc-3", Manifest: segs, SysMeta: map[string]string{SysOwnsSegments: "1"}}, bytes.NewReader(nil), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != int64(len(whole)) || o.ETag != "abc-3" {
		t.Fatalf("manifest served as size %d etag %q", o.Size, o.ETag)
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, whole) {
		t.Fatal("manifest read differs")
	}
	for _, r := range []meta.Range{{Start: 0, End: 0}, {Start: 100<<10 - 3, End: 100<<10 + 10}, {Start: 5, End: -1}, {Suffix: 150 << 10}} {
		off, n, _ := r.Resolve(int64(len(whole)))
		if got := readAll(t, c.proxy, name, &r); !bytes.Equal(got, whole[off:off+n]) {
			t.Fatalf("range %+v differs", r)
		}
	}
	l, err := c.proxy.ListObjects(ctx, "a", "bkt", meta.ListOptions{})
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Size != int64(len(whole)) || l.Objects[0].ETag != "abc-3" {
		t.Fatalf("listing = %+v, %v", l, err)
	}
	// Deleting a manifest that owns its segments deletes them, after a grace period in which a
	// download already under way still reads them all.
	under, err := c.proxy.GetObject(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(under); err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("download under way when its manifest was deleted: %d bytes, %v", len(got), err)
	}
	for _, s := range segs {
		if _, err := c.proxy.HeadObject(ctx, meta.ObjectName{Account: "a", Container: s.Container, Object: s.Object}); err != nil {
			t.Fatalf("segment %s deleted before its grace period: %v", s.Object, err)
		}
	}
	c.proxy.Close() // runs the deletions waiting out their grace period
	for _, s := range segs {
		if _, err := c.proxy.HeadObject(ctx, meta.ObjectName{Account: "a", Container: s.Container, Object: s.Object}); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("segment %s survived its manifest: %v", s.Object, err)
		}
	}
}

func TestReservedContainersAreHidden(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 1)
	for _, cn := range []string{meta.ReservedPrefix + "mpu" + meta.ReservedPrefix + "b", "b", "c"} {
		if err := c.proxy.CreateContainer(ctx, "a", cn, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, reverse := range []bool{false, true} {
		l, err := c.proxy.ListContainers(ctx, "a", meta.ListOptions{Reverse: reverse})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Containers) != 2 {
			t.Fatalf("reverse=%v: listed %+v", reverse, l.Containers)
		}
	}
	// The account's container count agrees with its listing.
	if a, err := c.proxy.HeadAccount(ctx, "a"); err != nil || a.ContainerCount != 2 {
		t.Fatalf("HeadAccount = %+v, %v; want 2 containers", a, err)
	}
}

// PostObjectIf changes the version read, and only it: with one replica (the engine decides)
// and with three (the proxy compares the newest first), a POST against a version that changed
// since fails, and changes nothing.
func TestPostObjectIfIsACompareAndSwap(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		c := newCluster(t, replicas)
		ctx := context.Background()
		if err := c.proxy.CreateContainer(ctx, "acct", "cont", nil); err != nil {
			t.Fatal(err)
		}
		name := meta.ObjectName{Account: "acct", Container: "cont", Object: "o"}
		put, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 1}, strings.NewReader("x"), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first, err := c.proxy.PostObjectIf(ctx, name, meta.Object{SysMeta: map[string]string{"lock-mode": "COMPLIANCE"}}, put.Timestamp)
		if err != nil {
			t.Fatalf("%d replicas: POST of the version read: %v", replicas, err)
		}
		// A second writer that read before the first POST loses.
		if _, err := c.proxy.PostObjectIf(ctx, name, meta.Object{SysMeta: map[string]string{"lock-mode": "GOVERNANCE"}}, put.Timestamp); !errors.Is(err, meta.ErrPreconditionFailed) {
			t.Fatalf("%d replicas: POST of a version that changed: %v", replicas, err)
		}
		got, err := c.proxy.HeadObject(ctx, name)
		if err != nil || got.SysMeta["lock-mode"] != "COMPLIANCE" || got.Timestamp != first.Timestamp {
			t.Fatalf("%d replicas: after the refused POST: %v %v", replicas, err, got.SysMeta)
		}
	}
}

// A DELETE counts a replica that had nothing to delete (it missed the PUT) with those that
// had: each committed the tombstone. With the third primary down, a delete refused as "1 of 3"
// would be a 503 for a delete every reachable primary holds (TestKillStorageNodeDuringLoad
// saw one).
func TestDeleteCountsAReplicaThatMissedThePut(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "missed"}
	c.down["node1"] = true // node1 misses the PUT
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 3}, bytes.NewReader([]byte("abc")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c.down["node1"], c.down["node0"] = false, true
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatalf("delete with one primary down and one that missed the put = %v, want success", err)
	}
	c.down["node0"] = false
	if _, err := c.proxy.HeadObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("head after the delete = %v, want not found", err)
	}
	// Every replica without it: not found, and so with one of them down.
	if err := c.proxy.DeleteObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("delete of a deleted object = %v, want not found", err)
	}
	c.down["node2"] = true
	if err := c.proxy.DeleteObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("delete of a deleted object, a node down = %v, want not found", err)
	}
	c.down["node0"], c.down["node1"] = true, true
	if err := c.proxy.DeleteObject(ctx, name); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("delete with every node down = %v, want unavailable", err)
	}
}
