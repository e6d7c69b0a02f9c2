package backend_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodeclient/nodeclienttest"
	"github.com/cairn-store/cairn/internal/storage"
)

var secret = []byte("cluster secret for tests")

// startNode serves a storage node with two devices (d0, d1) over the node protocol and returns
// its address.
func startNode(t *testing.T) (addr string, node *storage.Node) {
	t.Helper()
	dir := t.TempDir()
	n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{
		{Name: "d0", Dir: filepath.Join(dir, "d0")}, {Name: "d1", Dir: filepath.Join(dir, "d1")}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); n.Close() })
	return strings.TrimPrefix(srv.URL, "http://"), n
}

// The HTTP client of the node protocol, through the handler, passes the same conformance test
// as the storage node called in-process.
func TestConformance(t *testing.T) {
	nodeclienttest.Run(t, func(t *testing.T) nodeclienttest.Target {
		addr, node := startNode(t)
		d, err := backend.NewDialer(backend.ClientConfig{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		c, err := d.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		return nodeclienttest.Target{Client: c, Device: "d0",
			Update:  &nodeclient.ContainerUpdate{Node: addr, Device: "d0", Part: 3},
			Account: &nodeclient.AccountUpdate{Node: addr, Device: "d0", Part: 5},
			Other:   &nodeclient.AccountUpdate{Node: addr, Device: "d1", Part: 5},
			Flush:   func() { node.FlushUpdates(context.Background()) },
		}
	})
}

// Two nodes over the node protocol: a container on one, its account row on the other; the row
// and the container's usage travel between the nodes over HTTP.
func TestAccountRowsBetweenNodes(t *testing.T) {
	ctx := context.Background()
	d := testDialer(t)
	addrA, a := startPeerNode(t, d, "d0")
	addrB, b := startPeerNode(t, d, "d0")
	acct := nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: addrB, Device: "d0", Part: 2}}
	if err := a.PutContainer(ctx, "d0", 1, "acct", meta.Container{Name: "box", Created: meta.Now()}, acct); err != nil {
		t.Fatal(err)
	}
	here := nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Node: addrA, Device: "d0", Part: 1}}}
	if _, err := a.PutObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "o"}, meta.Object{Timestamp: meta.Now(), Size: 3}, strings.NewReader("abc"), here); err != nil {
		t.Fatal(err)
	}
	a.FlushUpdates(ctx)
	got, err := b.HeadAccount(ctx, "d0", 2, "acct")
	if err != nil || got.ContainerCount != 1 || got.ObjectCount != 1 || got.BytesUsed != 3 {
		t.Fatalf("account on the other node: %+v, %v", got, err)
	}
	if _, err := a.DeleteObject(ctx, "d0", 1, meta.ObjectName{Account: "acct", Container: "box", Object: "o"}, meta.Now(), nodeclient.DeleteOptions{Containers: here.Containers}); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteContainer(ctx, "d0", 1, "acct", "box", meta.Now(), acct); err != nil {
		t.Fatal(err)
	}
	l, err := b.ListContainers(ctx, "d0", 2, "acct", meta.ListOptions{})
	if err != nil || len(l.Containers) != 0 {
		t.Fatalf("account listing on the other node after the delete: %+v, %v", l, err)
	}
}

// One write updates several listings when the policy keeps fewer object replicas than the
// container ring keeps listings: the proxy names them comma-separated, as Swift's does, and the
// object's node updates its own in the write's batch and sends the other after the commit.
func TestOneWriteUpdatesSeveralListings(t *testing.T) {
	ctx := context.Background()
	d := testDialer(t)
	addrA, a := startPeerNode(t, d, "d0", "d1")
	addrB, b := startPeerNode(t, d, "d0", "d1")
	listings := []nodeclient.ContainerUpdate{{Node: addrA, Device: "d1", Part: 3}, {Node: addrB, Device: "d0", Part: 3}, {Node: addrA, Device: "d0", Part: 3}}
	type replica struct {
		n   *storage.Node
		dev string
	}
	replicas := []replica{{a, "d1"}, {b, "d0"}, {a, "d0"}}
	for _, r := range replicas {
		if err := r.n.PutContainer(ctx, r.dev, 3, "acct", meta.Container{Name: "box", Created: meta.Now()}, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client, err := d.Dial(addrA)
	if err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	if _, err := client.PutObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), Size: 3}, strings.NewReader("abc"), nodeclient.PutOptions{Containers: listings}); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		l, err := r.n.ListObjects(ctx, r.dev, 3, "acct", "box", meta.ListOptions{})
		if err != nil || len(l.Objects) != 1 || l.Objects[0].Name != "o" || l.Objects[0].Size != 3 {
			t.Fatalf("listing on %s: %+v, %v", r.dev, l, err)
		}
	}
	if _, err := client.DeleteObject(ctx, "d0", 1, name, meta.Now(), nodeclient.DeleteOptions{Containers: listings}); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		l, err := r.n.ListObjects(ctx, r.dev, 3, "acct", "box", meta.ListOptions{})
		if err != nil || len(l.Objects) != 0 {
			t.Fatalf("listing on %s after the delete: %+v, %v", r.dev, l, err)
		}
	}
}

// A node says which of a write's listings hold its entry when it answers (the one in the
// write's batch, and those it reached after): the proxy acknowledges a write only once a quorum
// of the container's replicas does, and sends the entry itself where they fell short.
func TestAWriteSaysWhichListingsHoldIt(t *testing.T) {
	ctx := context.Background()
	d := testDialer(t)
	addrA, a := startPeerNode(t, d, "d0", "d1")
	addrB, b := startPeerNode(t, d, "d0")
	// The third listing's node is not there: its update is left for the updater.
	gone := httptest.NewServer(http.NotFoundHandler())
	addrGone := gone.Listener.Addr().String()
	gone.Close()
	listings := []nodeclient.ContainerUpdate{{Node: addrA, Device: "d1", Part: 3}, {Node: addrB, Device: "d0", Part: 3}, {Node: addrGone, Device: "d0", Part: 3}}
	for _, r := range []struct {
		n   *storage.Node
		dev string
	}{{a, "d1"}, {b, "d0"}} {
		if err := r.n.PutContainer(ctx, r.dev, 3, "acct", meta.Container{Name: "box", Created: meta.Now()}, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client, err := d.Dial(addrA)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, l *nodeclient.Listed) {
		t.Helper()
		for i, u := range listings {
			if want := i < 2; l.Has(u) != want {
				t.Errorf("%s: listing %d (%s/%s) held = %v, want %v", what, i, u.Node, u.Device, l.Has(u), want)
			}
		}
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	listed := new(nodeclient.Listed)
	if _, err := client.PutObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), Size: 3}, strings.NewReader("abc"),
		nodeclient.PutOptions{Containers: listings, Listed: listed}); err != nil {
		t.Fatal(err)
	}
	check("put", listed)
	listed = new(nodeclient.Listed)
	if _, err := client.PostObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), ContentType: "text/plain"}, nodeclient.PostOptions{Containers: listings, Listed: listed}); err != nil {
		t.Fatal(err)
	}
	check("post", listed)
	listed = new(nodeclient.Listed)
	if _, err := client.DeleteObject(ctx, "d0", 1, name, meta.Now(), nodeclient.DeleteOptions{Containers: listings, Listed: listed}); err != nil {
		t.Fatal(err)
	}
	check("delete", listed)
}

// A POST to a Cairn node costs one request once the client has heard from the node: only a
// Swift server needs its earlier POSTs read first.
func TestPostToCairnNodeReadsNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(dir, "d0")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	methods := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods[r.Method]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	d, _ := backend.NewDialer(backend.ClientConfig{Secret: secret})
	defer d.Close()
	c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	if _, err := c.PutObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), Size: 1, SysMeta: map[string]string{"k": "1"}}, strings.NewReader("x"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := c.PostObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), SysMeta: map[string]string{"j": "2"}}, nodeclient.PostOptions{})
	if err != nil || o.SysMeta["k"] != "1" || o.SysMeta["j"] != "2" {
		t.Fatalf("post: %+v, %v", o, err)
	}
	if methods[http.MethodHead] != 0 || methods[http.MethodPost] != 1 {
		t.Errorf("requests: %v", methods)
	}
}

func testDialer(t *testing.T) *backend.Dialer {
	t.Helper()
	d, err := backend.NewDialer(backend.ClientConfig{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// startPeerNode serves a storage node with the devices named, over the node protocol on a
// loopback port, with d to reach its peers; it returns the node's address and the node.
func startPeerNode(t *testing.T, d *backend.Dialer, devices ...string) (string, *storage.Node) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	var devs []storage.DeviceConfig
	for _, name := range devices {
		devs = append(devs, storage.DeviceConfig{Name: name, Dir: t.TempDir()})
	}
	n, err := storage.Open(storage.Config{Address: addr, Peers: d, Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(func() { srv.Close(); n.Close() })
	return addr, n
}
