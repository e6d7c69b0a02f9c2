package proxy

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// newSplitCluster is a proxy over two storage nodes that know each other, one replica, the
// partitions alternating between them: an account and its containers mostly live apart.
func newSplitCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{nodes: map[string]*storage.Node{}, down: map[string]bool{}}
	const partPower = 4
	r := &ring.Ring{PartPower: partPower, Assignments: [][]int{make([]int, 1<<partPower)}}
	for i := range 2 {
		name := fmt.Sprintf("node%d", i)
		n, err := storage.Open(storage.Config{Address: name, Peers: c, Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), name)}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name] = n
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: name, Name: "d0", Weight: 1})
	}
	for p := range r.Assignments[0] {
		r.Assignments[0][p] = p % 2
	}
	p, err := New(Config{Ring: r, Dialer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	return c
}

// The account's listing and totals live on the account's partition; its containers, on theirs.
// Creating and deleting a container updates the account's replica, and the container's usage
// reaches it with the container node's updater.
func TestAccountListingOfContainersElsewhere(t *testing.T) {
	ctx := context.Background()
	c := newSplitCluster(t)
	ar, cr := c.proxy.accountRing(), c.proxy.containerRing()
	acctNode := ar.Nodes(partition(ar, "acct", "", ""))[0].Node
	var container, contNode string
	for i := 0; container == ""; i++ {
		name := fmt.Sprintf("bucket%d", i)
		if n := cr.Nodes(partition(cr, "acct", name, ""))[0].Node; n != acctNode {
			container, contNode = name, n
		}
	}
	if err := c.proxy.CreateContainer(ctx, "acct", container, nil); err != nil {
		t.Fatal(err)
	}
	a, err := c.proxy.HeadAccount(ctx, "acct")
	if err != nil || a.ContainerCount != 1 {
		t.Fatalf("account after creating %s on %s (account on %s): %+v, %v", container, contNode, acctNode, a, err)
	}
	l, err := c.proxy.ListContainers(ctx, "acct", meta.ListOptions{})
	if err != nil || len(l.Containers) != 1 || l.Containers[0].Name != container {
		t.Fatalf("account listing: %+v, %v", l, err)
	}
	name := meta.ObjectName{Account: "acct", Container: container, Object: "o"}
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 4}, bytes.NewReader([]byte("data")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c.nodes[contNode].FlushUpdates(ctx)
	if a, err := c.proxy.HeadAccount(ctx, "acct"); err != nil || a.ObjectCount != 1 || a.BytesUsed != 4 {
		t.Fatalf("account after the container node's updater ran: %+v, %v", a, err)
	}
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.proxy.DeleteContainer(ctx, "acct", container); err != nil {
		t.Fatal(err)
	}
	if a, err := c.proxy.HeadAccount(ctx, "acct"); err != nil || a.ContainerCount != 0 || a.ObjectCount != 0 || a.BytesUsed != 0 {
		t.Fatalf("account after the delete: %+v, %v", a, err)
	}
}
