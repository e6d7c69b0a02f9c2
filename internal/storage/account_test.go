package storage

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// peers is a Dialer over in-process nodes, some of which may be down.
type peers struct {
	mu    sync.Mutex
	nodes map[string]*Node
	down  map[string]bool
}

func (p *peers) Dial(addr string) (nodeclient.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down[addr] || p.nodes[addr] == nil {
		return nil, fmt.Errorf("node %s: %w", addr, meta.ErrUnavailable)
	}
	return p.nodes[addr], nil
}

func (p *peers) set(addr string, n *Node, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nodes[addr], p.down[addr] = n, down
}

func openPeer(t *testing.T, ps *peers, addr, dir string) *Node {
	t.Helper()
	n, err := Open(Config{Address: addr, Peers: ps, Devices: []DeviceConfig{{Name: "d0", Dir: dir}}})
	if err != nil {
		t.Fatal(err)
	}
	ps.set(addr, n, false)
	return n
}

func accountOf(t *testing.T, n *Node) (meta.Account, []string) {
	t.Helper()
	ctx := context.Background()
	a, err := n.HeadAccount(ctx, "d0", 0, "acct")
	if err != nil {
		t.Fatal(err)
	}
	l, err := n.ListContainers(ctx, "d0", 0, "acct", meta.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range l.Containers {
		names = append(names, c.Name)
	}
	return a, names
}

// A container on node a whose account row is on node b: the row of its creation and of its
// deletion survives b being down and a restarting (a pending record in the container's own
// batch), and its usage reaches b with the updater.
func TestAccountRowsSurviveOutageAndRestart(t *testing.T) {
	ctx := context.Background()
	ps := &peers{nodes: map[string]*Node{}, down: map[string]bool{}}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := openPeer(t, ps, "a", dirA)
	b := openPeer(t, ps, "b", dirB)
	defer b.Close()
	ps.set("b", b, true)

	acctB := nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: "b", Device: "d0", Part: 1}}
	if err := a.PutContainer(ctx, "d0", 0, "acct", meta.Container{Name: "box", Created: meta.Now()}, acctB); err != nil {
		t.Fatalf("create with the account replica down: %v", err)
	}
	if _, names := accountOf(t, b); len(names) != 0 {
		t.Fatalf("b lists %q while down", names)
	}
	here := []nodeclient.ContainerUpdate{{Node: "a", Device: "d0"}}
	for i := range 3 {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprint(i)}
		if _, err := a.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: 2}, bytes.NewReader([]byte("xy")), nodeclient.PutOptions{Containers: here}); err != nil {
			t.Fatal(err)
		}
	}
	a.FlushUpdates(ctx) // b still down: everything stays pending
	// a restarts: what it could not send is still there.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = openPeer(t, ps, "a", dirA)
	defer a.Close()
	ps.set("b", b, false)
	a.FlushUpdates(ctx)
	if acct, names := accountOf(t, b); !slices.Equal(names, []string{"box"}) || acct.ContainerCount != 1 || acct.ObjectCount != 3 || acct.BytesUsed != 6 {
		t.Fatalf("b after a's restart and flush: %+v %q", acct, names)
	}
	if acct, _ := accountOf(t, a); acct.ContainerCount != 0 {
		t.Fatalf("a counts a container whose account row is on b: %+v", acct)
	}
	// Emptied and deleted while b is down again.
	ps.set("b", b, true)
	for i := range 3 {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprint(i)}
		if _, err := a.DeleteObject(ctx, "d0", 0, name, meta.Now(), nodeclient.DeleteOptions{Containers: here}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.DeleteContainer(ctx, "d0", 0, "acct", "box", meta.Now(), acctB); err != nil {
		t.Fatal(err)
	}
	if _, names := accountOf(t, b); !slices.Equal(names, []string{"box"}) {
		t.Fatalf("b while down: %q", names)
	}
	ps.set("b", b, false)
	a.FlushUpdates(ctx)
	if acct, names := accountOf(t, b); len(names) != 0 || acct.ContainerCount != 0 || acct.ObjectCount != 0 || acct.BytesUsed != 0 {
		t.Fatalf("b after the delete reached it: %+v %q", acct, names)
	}
	if got := gatherValue(t, a, "cairn_account_updates_pending"); got != 0 {
		t.Fatalf("%v account rows still pending", got)
	}
}

// On a node with peers, a listing the device's own object writes update in their batches also
// hears from other devices' replicas: a DELETE row that came first keeps a late, older PUT of
// this device from listing the object.
func TestInBatchListingRespectsTombstonesFromElsewhere(t *testing.T) {
	ctx := context.Background()
	ps := &peers{nodes: map[string]*Node{}, down: map[string]bool{}}
	n := openPeer(t, ps, "a", t.TempDir())
	defer n.Close()
	here := nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: "a", Device: "d0"}}
	if err := n.PutContainer(ctx, "d0", 0, "acct", meta.Container{Name: "box", Created: meta.Now()}, here); err != nil {
		t.Fatal(err)
	}
	t1 := meta.Now()
	t2 := meta.Now()
	if err := n.UpdateListing(ctx, "d0", 0, "acct", "box", meta.ListEntry{Name: "o", Timestamp: t2}, true); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	upd := nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Node: "a", Device: "d0"}}}
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: t1, Size: 1}, bytes.NewReader([]byte("x")), upd); err != nil {
		t.Fatal(err) // this replica never saw the delete: it stores the object
	}
	l, err := n.ListObjects(ctx, "d0", 0, "acct", "box", meta.ListOptions{})
	if err != nil || len(l.Objects) != 0 {
		t.Fatalf("listing: %+v, %v", l.Objects, err)
	}
	if acct, _ := accountOf(t, n); acct.ObjectCount != 0 {
		t.Fatalf("account counts the unlisted object: %+v", acct)
	}
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("y")), upd); err != nil {
		t.Fatal(err)
	}
	if l, _ := n.ListObjects(ctx, "d0", 0, "acct", "box", meta.ListOptions{}); len(l.Objects) != 1 {
		t.Fatalf("a newer PUT: %+v", l.Objects)
	}
	if acct, _ := accountOf(t, n); acct.ObjectCount != 1 || acct.BytesUsed != 1 {
		t.Fatalf("account after the newer PUT: %+v", acct)
	}
}
