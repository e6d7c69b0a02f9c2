package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// policyCluster is a proxy over three storage nodes with a device for each policy: "d0" holds
// accounts, containers and policy 0's objects, "p1" policy 1's. Every partition is on every
// node (three replicas).
type policyCluster struct {
	proxy *Proxy
	nodes map[string]*storage.Node
	mu    sync.Mutex
	seen  map[string]int // object request kind → the policy its context carried
}

// recording is a node that notes the policy object requests carry to it (what the HTTP client
// sends Swift's object servers as X-Backend-Storage-Policy-Index).
type recording struct {
	nodeclient.Client
	c *policyCluster
}

func (r recording) note(ctx context.Context, what string) {
	r.c.mu.Lock()
	r.c.seen[what] = nodeclient.Policy(ctx)
	r.c.mu.Unlock()
}

func (r recording) PutObject(ctx context.Context, dev string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts nodeclient.PutOptions) (nodeclient.PutResult, error) {
	r.note(ctx, "put "+name.Container)
	return r.Client.PutObject(ctx, dev, part, name, obj, body, opts)
}

func (r recording) GetObject(ctx context.Context, dev string, part uint32, name meta.ObjectName, rng *meta.Range) (*nodeclient.ObjectReader, error) {
	r.note(ctx, "get "+name.Container)
	return r.Client.GetObject(ctx, dev, part, name, rng)
}

func (c *policyCluster) Dial(node string) (nodeclient.Client, error) {
	return recording{Client: c.nodes[node], c: c}, nil
}

// fullRing places every partition on one named device of each node.
func fullRing(nodes []string, dev string) *ring.Ring {
	const partPower = 4
	r := &ring.Ring{PartPower: partPower}
	for i, n := range nodes {
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: n, Name: dev, Weight: 1})
		row := make([]int, 1<<partPower)
		for p := range row {
			row[p] = i
		}
		r.Assignments = append(r.Assignments, row)
	}
	return r
}

func newPolicyCluster(t *testing.T, pols *policy.Set) *policyCluster {
	t.Helper()
	c := &policyCluster{nodes: map[string]*storage.Node{}, seen: map[string]int{}}
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("node%d", i)
		dir := t.TempDir()
		n, err := storage.Open(storage.Config{Address: name, Peers: c, Devices: []storage.DeviceConfig{
			{Name: "d0", Dir: filepath.Join(dir, "d0")}, {Name: "p1", Dir: filepath.Join(dir, "p1")}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name] = n
		names = append(names, name)
	}
	r0, r1 := fullRing(names, "d0"), fullRing(names, "p1")
	rings := map[int]func() *ring.Ring{}
	for _, p := range pols.All() {
		r := r0
		if p.Index != 0 {
			r = r1
		}
		rings[p.Index] = func() *ring.Ring { return r }
	}
	p, err := New(Config{AccountRing: func() *ring.Ring { return r0 }, ContainerRing: func() *ring.Ring { return r0 },
		Policies: pols, ObjectRings: rings, Dialer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	return c
}

func twoPolicies(t *testing.T) *policy.Set {
	t.Helper()
	s, err := policy.New(policy.Policy{Index: 0, Name: "gold", Default: true}, policy.Policy{Index: 1, Name: "silver"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// holders returns the devices ("node/dev") that hold an object.
func (c *policyCluster) holders(t *testing.T, name meta.ObjectName) []string {
	t.Helper()
	var out []string
	for _, n := range []string{"node0", "node1", "node2"} {
		for _, dev := range []string{"d0", "p1"} {
			part := partition(c.proxy.objectRings[0](), name.Account, name.Container, name.Object)
			_, err := c.nodes[n].HeadObject(context.Background(), dev, part, name, nodeclient.HeadOptions{})
			switch {
			case err == nil:
				out = append(out, n+"/"+dev)
			case !errors.Is(err, meta.ErrNotFound):
				t.Fatalf("%s/%s: %v", n, dev, err)
			}
		}
	}
	return out
}

// A container keeps the policy it was created in, and its objects live only on that policy's
// devices: written, read, overwritten and deleted there, with the policy on every request's
// context for the nodes.
func TestObjectsLandOnTheirContainersPolicyDevices(t *testing.T) {
	ctx := context.Background()
	c := newPolicyCluster(t, twoPolicies(t))
	px := c.proxy
	if err := px.CreateContainer(ctx, "acct", "plain", nil); err != nil {
		t.Fatal(err)
	}
	if err := px.CreateContainer(ctx, "acct", "cold", map[string]string{meta.ContainerPolicyKey: "1"}); err != nil {
		t.Fatal(err)
	}
	for container, want := range map[string]int{"plain": 0, "cold": 1} {
		got, err := px.HeadContainer(ctx, "acct", container)
		if idx, ok := got.PolicyIndex(); err != nil || !ok || idx != want {
			t.Fatalf("%s: policy %v %v %v, want %d", container, idx, ok, err, want)
		}
	}
	data := randomBytes(100 << 10)
	for container, dev := range map[string]string{"plain": "d0", "cold": "p1"} {
		name := meta.ObjectName{Account: "acct", Container: container, Object: "obj"}
		if _, err := px.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		h := c.holders(t, name)
		if len(h) != 3 {
			t.Fatalf("%s: held by %v, want three replicas", container, h)
		}
		for _, d := range h {
			if filepath.Base(d) != dev {
				t.Fatalf("%s's object is on %s: want only %s devices (%v)", container, d, dev, h)
			}
		}
		if got := readAll(t, px, name, nil); !bytes.Equal(got, data) {
			t.Fatalf("%s: read back different bytes", container)
		}
		want := 0
		if container == "cold" {
			want = 1
		}
		if c.seen["put "+container] != want || c.seen["get "+container] != want {
			t.Fatalf("%s: requests carried policy %d (put) and %d (get), want %d", container, c.seen["put "+container], c.seen["get "+container], want)
		}
		if err := px.DeleteObject(ctx, name); err != nil {
			t.Fatal(err)
		}
		if _, err := px.HeadObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("%s: HEAD after delete = %v", container, err)
		}
	}
	l, err := px.ListObjects(ctx, "acct", "cold", meta.ListOptions{})
	if err != nil || len(l.Objects) != 0 {
		t.Fatalf("listing after delete: %v %v", l, err)
	}
}

// A manifest's segments are read from their own containers' policies.
func TestManifestSegmentsInAnotherPolicy(t *testing.T) {
	ctx := context.Background()
	c := newPolicyCluster(t, twoPolicies(t))
	px := c.proxy
	if err := px.CreateContainer(ctx, "acct", "man", nil); err != nil {
		t.Fatal(err)
	}
	if err := px.CreateContainer(ctx, "acct", "segs", map[string]string{meta.ContainerPolicyKey: "1"}); err != nil {
		t.Fatal(err)
	}
	var segs []meta.Segment
	var whole []byte
	for i := range 3 {
		b := randomBytes(1000 + i)
		o, err := px.PutObject(ctx, meta.ObjectName{Account: "acct", Container: "segs", Object: strconv.Itoa(i)}, meta.Object{Size: int64(len(b))}, bytes.NewReader(b), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, meta.Segment{Container: "segs", Object: strconv.Itoa(i), Size: o.Size, ETag: o.ETag})
		whole = append(whole, b...)
	}
	name := meta.ObjectName{Account: "acct", Container: "man", Object: "big"}
	if _, err := px.PutObject(ctx, name, meta.Object{Manifest: segs, ETag: "m"}, nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := c.holders(t, meta.ObjectName{Account: "acct", Container: "segs", Object: "1"}); len(h) != 3 || filepath.Base(h[0]) != "p1" {
		t.Fatalf("segment held by %v", h)
	}
	if got := readAll(t, px, name, &meta.Range{Start: 500, End: -1}); !bytes.Equal(got, whole[500:]) {
		t.Fatal("manifest read back different bytes")
	}
}

// A create naming another policy than its existing container's is a conflict; one naming none
// keeps the container's own; policies that are not defined or not served are refused.
func TestContainerPolicyCannotChange(t *testing.T) {
	ctx := context.Background()
	pols, err := policy.New(policy.Policy{Index: 0, Name: "gold"}, policy.Policy{Index: 1, Name: "silver", Default: true},
		policy.Policy{Index: 2, Name: "ec", Type: policy.ErasureCoding, EC: policy.EC{Scheme: "liberasurecode_rs_vand", DataFragments: 2, ParityFragments: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := newPolicyCluster(t, pols)
	px := c.proxy
	if err := px.CreateContainer(ctx, "acct", "box", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := px.HeadContainer(ctx, "acct", "box"); b.Meta[meta.ContainerPolicyKey] != "1" {
		t.Fatalf("a container created without a policy is in %q, want the default, 1", b.Meta[meta.ContainerPolicyKey])
	}
	for _, tc := range []struct {
		m    map[string]string
		want error
	}{
		{nil, meta.ErrExists},
		{map[string]string{meta.ContainerPolicyKey: "1"}, meta.ErrExists},
		{map[string]string{meta.ContainerPolicyKey: "0"}, ErrPolicyConflict},
		{map[string]string{meta.ContainerPolicyKey: "7"}, policy.ErrUnknown},
		{map[string]string{meta.ContainerPolicyKey: "2"}, policy.ErrNotSupported},
	} {
		if err := px.CreateContainer(ctx, "acct", "box", tc.m); !errors.Is(err, tc.want) {
			t.Errorf("create with %v = %v, want %v", tc.m, err, tc.want)
		}
	}
	if _, err := px.PostContainer(ctx, "acct", "box", map[string]string{meta.ContainerPolicyKey: "0", "sys:k": "v"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := px.HeadContainer(ctx, "acct", "box"); b.Meta[meta.ContainerPolicyKey] != "1" || b.Meta["sys:k"] != "v" {
		t.Fatalf("after a POST naming another policy: %v", b.Meta)
	}
}

// The proxy refuses a configuration whose rings do not match its policies.
func TestPolicyRingsMustMatch(t *testing.T) {
	r := fullRing([]string{"a", "b", "c"}, "d0")
	f := func() *ring.Ring { return r }
	pols := twoPolicies(t)
	ec, err := policy.New(policy.Policy{Index: 0, Name: "gold", Default: true},
		policy.Policy{Index: 1, Name: "ec", Type: policy.ErasureCoding, EC: policy.EC{Scheme: "liberasurecode_rs_vand", DataFragments: 4, ParityFragments: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ecDefault, err := policy.New(policy.Policy{Index: 0, Name: "ec", Default: true, Type: policy.ErasureCoding,
		EC: policy.EC{Scheme: "liberasurecode_rs_vand", DataFragments: 2, ParityFragments: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		pols  *policy.Set
		rings map[int]func() *ring.Ring
	}{
		{"a policy without a ring", pols, map[int]func() *ring.Ring{0: f}},
		{"a ring without a policy", policy.Legacy(), map[int]func() *ring.Ring{0: f, 1: f}},
		{"an EC ring with too few replicas", ec, map[int]func() *ring.Ring{0: f, 1: f}},
		{"an EC default", ecDefault, map[int]func() *ring.Ring{0: f}},
	} {
		_, err := New(Config{AccountRing: f, ContainerRing: f, Policies: tc.pols, ObjectRings: tc.rings, Dialer: nodeclient.Local{}})
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
