package proxy

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Over nodes that keep no registers (OpenStack Swift's servers), the first replica decides a
// conditional write made in order: one it refuses is written nowhere, even on replicas whose
// own condition would hold; one it takes needs a quorum.
func TestPutObjectInOrderFirstReplicaDecides(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	p, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: withoutRegisters{c}})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	if err := c.proxy.CreateContainer(ctx, "acct", "state", nil); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "state", Object: "blob"}
	part := partition(c.proxy.objectRings[0](), name.Account, name.Container, name.Object)
	etagOn := func(node string) string {
		t.Helper()
		o, err := c.nodes[node].HeadObject(ctx, "d0", part, name, nodeclient.HeadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", node, err)
		}
		return o.ETag
	}

	v1, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("one"), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"node0", "node1", "node2"} {
		if got := etagOn(n); got != v1.ETag {
			t.Fatalf("%s has %q, want %q", n, got, v1.ETag)
		}
	}
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("again"), PutOptions{If: meta.Precondition{IfNoneMatch: true}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("second creation: %v", err)
	}

	// node1 holds another version (a writer that won there only, under parallel writes).
	putOn := func(node string, data []byte, ts meta.Timestamp) string {
		t.Helper()
		if _, err := c.nodes[node].PutObject(ctx, "d0", part, name, meta.Object{Timestamp: ts, Size: int64(len(data))}, bytes.NewReader(data), nodeclient.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		return etagOn(node)
	}
	stale := putOn("node1", []byte("other"), meta.Now())
	// A write on node1's version: node0 refuses it, and so it is made nowhere.
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("lost"), PutOptions{If: meta.Precondition{IfMatch: []string{stale}}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("write on a minority's version: %v", err)
	}
	if etagOn("node0") != v1.ETag || etagOn("node1") != stale || etagOn("node2") != v1.ETag {
		t.Fatal("a refused write changed a replica")
	}
	// A write on node0's version is decided there, and the others follow it.
	v2, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("two"), PutOptions{If: meta.Precondition{IfMatch: []string{v1.ETag}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"node0", "node1", "node2"} {
		if got := etagOn(n); got != v2.ETag {
			t.Fatalf("%s has %q after the decided write, want %q", n, got, v2.ETag)
		}
	}
	if got := readAll(t, c.proxy, name, nil); string(got) != "two" {
		t.Fatalf("read %q", got)
	}

	// A replica that holds a newer version counts as written: in a chain of compare-and-swaps
	// it was decided later.
	putOn("node2", []byte("later"), meta.Now()+meta.Timestamp(time.Hour))
	v3, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("three"), PutOptions{If: meta.Precondition{IfMatch: []string{v2.ETag}}})
	if err != nil {
		t.Fatalf("write with a newer version on a follower: %v", err)
	}

	// Without node0, node1 decides.
	c.down["node0"] = true
	if _, err := c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("four"), PutOptions{If: meta.Precondition{IfMatch: []string{v2.ETag}}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("write on an old version, decided by node1: %v", err)
	}
	c.down["node0"] = false

	// The first replica alone takes a write: no quorum, a failure that is not a refusal.
	c.down["node1"], c.down["node2"] = true, true
	_, err = c.proxy.PutObjectInOrder(ctx, name, meta.Object{}, []byte("five"), PutOptions{If: meta.Precondition{IfMatch: []string{v3.ETag}}})
	if err == nil || errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("a write taken by one replica of three: %v", err)
	}
}
