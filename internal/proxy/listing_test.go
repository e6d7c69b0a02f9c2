package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

func entries(names ...string) []meta.ListEntry {
	out := make([]meta.ListEntry, len(names))
	for i, n := range names {
		out[i] = meta.ListEntry{Name: n, Timestamp: 1}
	}
	return out
}

func names(l meta.ObjectListing) []string {
	var out []string
	for _, e := range l.Objects {
		out = append(out, e.Name)
	}
	return out
}

func TestMergeListings(t *testing.T) {
	page := func(truncated bool, objs ...string) meta.ObjectListing {
		l := meta.ObjectListing{Objects: entries(objs...), Truncated: truncated}
		if truncated {
			l.NextMarker = objs[len(objs)-1]
		}
		return l
	}
	cases := []struct {
		name      string
		pages     []meta.ObjectListing
		opts      meta.ListOptions
		want      []string
		disputed  []string
		truncated bool
		next      string
	}{
		{"agree", []meta.ObjectListing{page(false, "a", "b"), page(false, "a", "b")}, meta.ListOptions{}, []string{"a", "b"}, nil, false, ""},
		{"one misses a name", []meta.ObjectListing{page(false, "a", "c"), page(false, "a", "b", "c")}, meta.ListOptions{}, []string{"a", "b", "c"}, []string{"b"}, false, ""},
		{"a truncated page bounds the merge", []meta.ObjectListing{page(true, "a", "b"), page(false, "a", "b", "c", "d")}, meta.ListOptions{Limit: 2},
			[]string{"a", "b"}, nil, true, "b"},
		{"the union over the limit", []meta.ObjectListing{page(true, "a", "c"), page(true, "b", "c")}, meta.ListOptions{Limit: 2}, []string{"a", "b"}, []string{"a", "b"}, true, "b"},
		{"reverse", []meta.ObjectListing{page(true, "d", "c"), page(false, "d", "b")}, meta.ListOptions{Reverse: true, Limit: 2}, []string{"d", "c"}, []string{"c"}, true, "c"},
		{"nothing past the cut", []meta.ObjectListing{page(true, "a"), page(true, "b")}, meta.ListOptions{Limit: 1}, []string{"a"}, []string{"a"}, true, "a"},
	}
	for _, c := range cases {
		got, disputed := mergeListings(c.pages, c.opts)
		if !slices.Equal(names(got), c.want) || !slices.Equal(disputed, c.disputed) || got.Truncated != c.truncated || got.NextMarker != c.next {
			t.Errorf("%s: %v disputed %v truncated %v next %q; want %v %v %v %q", c.name, names(got), disputed, got.Truncated, got.NextMarker,
				c.want, c.disputed, c.truncated, c.next)
		}
	}
	// The newest entry of a name wins, and common prefixes are merged into the order.
	a := meta.ObjectListing{Objects: []meta.ListEntry{{Name: "x", Timestamp: 1, Size: 1}}, CommonPrefixes: []string{"p/"}}
	b := meta.ObjectListing{Objects: []meta.ListEntry{{Name: "x", Timestamp: 2, Size: 2}}}
	got, disputed := mergeListings([]meta.ObjectListing{a, b}, meta.ListOptions{Delimiter: "/"})
	if len(got.Objects) != 1 || got.Objects[0].Size != 2 || !slices.Equal(got.CommonPrefixes, []string{"p/"}) || disputed != nil {
		t.Errorf("newest entry and prefixes: %+v, disputed %v", got, disputed)
	}
}

// A container replica that was down while names were written (or deleted) lists without
// those changes until replication brings them; a LIST must still show every acknowledged
// write and no deleted name, whichever replicas it reaches (the robustness tier's LISTs found
// writes missing: docs/consistency.md). Each write here is made with another node down, so
// that every replica misses one, and every LIST through every proxy must list exactly what
// was written.
func TestListingsShowEveryAcknowledgedWrite(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	ps := append(proxiesOver(t, c, 2, Config{}), c.proxy)
	nodes := []string{"node0", "node1", "node2"}
	for i, down := range nodes {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("k%d", i)}
		c.down[down] = true
		if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		c.down[down] = false
	}
	// "gone" is written everywhere, then deleted while node1 is down: node1 still lists it.
	gone := meta.ObjectName{Account: "acct", Container: "box", Object: "gone"}
	if _, err := c.proxy.PutObject(ctx, gone, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c.down["node1"] = true
	if err := c.proxy.DeleteObject(ctx, gone); err != nil {
		t.Fatal(err)
	}
	c.down["node1"] = false
	// Listed with each node down in turn too, so that the quorum read includes each stale
	// replica.
	for _, away := range []string{"", "node0", "node1", "node2"} {
		c.down[away] = true
		for i, p := range ps {
			for _, opts := range []meta.ListOptions{{}, {Limit: 1}, {Reverse: true}} {
				var got []string
				for {
					l, err := p.ListObjects(ctx, "acct", "box", opts)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, names(l)...)
					if !l.Truncated {
						break
					}
					opts.Marker = l.NextMarker
				}
				slices.Sort(got)
				if !slices.Equal(got, []string{"k0", "k1", "k2"}) {
					t.Errorf("%s down, proxy %d, %+v: listed %v, want [k0 k1 k2]", away, i, opts, got)
				}
			}
		}
		c.down[away] = false
	}
}

// peersCut reaches the storage nodes of a cluster from each other, except those cut off from
// their peers: the proxy still reaches them (cluster.Dial), the storage nodes do not.
type peersCut struct {
	c   *cluster
	cut map[string]bool
}

func (p *peersCut) Dial(node string) (nodeclient.Client, error) {
	if p.cut[node] {
		return nil, fmt.Errorf("node %s is cut off from its peers", node)
	}
	return p.c.Dial(node)
}

// newApartCluster is a proxy over six storage nodes that know each other: every object
// partition on node0-2, every container (and account) partition on node3-5, so that every
// listing update goes from one node to another.
func newApartCluster(t *testing.T, log *slog.Logger) (*cluster, *peersCut) {
	t.Helper()
	c := &cluster{nodes: map[string]*storage.Node{}, down: map[string]bool{}}
	peers := &peersCut{c: c, cut: map[string]bool{}}
	const partPower = 4
	full := func(first int) *ring.Ring {
		r := &ring.Ring{PartPower: partPower}
		for i := range 3 {
			name := fmt.Sprintf("node%d", first+i)
			r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: name, Name: "d0", Weight: 1})
			r.Assignments = append(r.Assignments, make([]int, 1<<partPower))
			for p := range r.Assignments[i] {
				r.Assignments[i][p] = i
			}
		}
		return r
	}
	for i := range 6 {
		name := fmt.Sprintf("node%d", i)
		n, err := storage.Open(storage.Config{Address: name, Peers: peers, Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), name)}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.nodes[name] = n
	}
	objects, containers := full(0), full(3)
	p, err := New(Config{Logger: log, Dialer: c, ObjectRing: func() *ring.Ring { return objects },
		ContainerRing: func() *ring.Ring { return containers }, AccountRing: func() *ring.Ring { return containers }})
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
	return c, peers
}

// A LIST reads a quorum of the container's replicas, so a write is acknowledged only once a
// quorum of them lists it. Here the object replicas' own listing updates reach one container
// replica of three (the others are cut off from their peers, as by a network partition between
// storage nodes): the proxy sends the entry to the other two before it answers, and a LIST
// that cannot reach the one replica the object nodes reached still shows the write, and not a
// deleted name. When the proxy cannot reach them either, the one replica holding the entry is
// enough (a LIST reads it while the others are away); when none holds it, the write is
// answered 503: stored, but listed nowhere yet.
func TestAWriteIsListedByAQuorumBeforeItsAnswer(t *testing.T) {
	ctx := context.Background()
	sent := &counting{msg: "listing entry sent by the proxy"}
	c, peers := newApartCluster(t, slog.New(sent))
	if err := c.proxy.CreateContainer(ctx, "acct", "box", nil); err != nil {
		t.Fatal(err)
	}
	// While every replica takes its updates, the object replicas' own are the quorum: the
	// proxy sends none.
	calm := meta.ObjectName{Account: "acct", Container: "box", Object: "calm"}
	if _, err := c.proxy.PutObject(ctx, calm, meta.Object{Size: 1}, bytes.NewReader([]byte("c")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.proxy.DeleteObject(ctx, calm); err != nil {
		t.Fatal(err)
	}
	if n := sent.n.Load(); n != 0 {
		t.Errorf("the proxy sent %d listing entries itself while every replica took its updates", n)
	}
	listed := func(away string) []string {
		t.Helper()
		c.down[away] = true
		defer func() { c.down[away] = false }()
		l, err := c.proxy.ListObjects(ctx, "acct", "box", meta.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return names(l)
	}
	peers.cut["node4"], peers.cut["node5"] = true, true
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "k"}
	if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if sent.n.Load() == 0 {
		t.Error("the proxy sent no listing entry for a write only one container replica took")
	}
	if got := listed("node3"); !slices.Equal(got, []string{"k"}) {
		t.Errorf("after the PUT, node3 away: listed %v, want [k]", got)
	}
	if _, err := c.proxy.PostObject(ctx, name, meta.Object{ContentType: "text/x-posted"}); err != nil {
		t.Fatal(err)
	}
	c.down["node3"] = true
	l, err := c.proxy.ListObjects(ctx, "acct", "box", meta.ListOptions{})
	c.down["node3"] = false
	if err != nil || len(l.Objects) != 1 || l.Objects[0].ContentType != "text/x-posted" {
		t.Errorf("after the POST, node3 away: %+v, %v; want k as text/x-posted", l.Objects, err)
	}
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatal(err)
	}
	if got := listed("node3"); len(got) != 0 {
		t.Errorf("after the DELETE, node3 away: listed %v, want nothing", got)
	}

	// The proxy cannot reach node4 and node5 either: the one replica it can reach holds the
	// entry, the write is acknowledged, and a LIST (which reads that one replica while the
	// others are away) lists it.
	c.down["node4"], c.down["node5"] = true, true
	alone := meta.ObjectName{Account: "acct", Container: "box", Object: "alone"}
	if _, err := c.proxy.PutObject(ctx, alone, meta.Object{Size: 1}, bytes.NewReader([]byte("z")), PutOptions{}); err != nil {
		t.Errorf("PUT with two of three container replicas away from everyone: %v", err)
	}
	if l, err := c.proxy.ListObjects(ctx, "acct", "box", meta.ListOptions{}); err != nil || !slices.Contains(names(l), "alone") {
		t.Errorf("LIST with two of three container replicas away: %v, %v", names(l), err)
	}
	// And when no container replica takes it, the write is answered 503: it is stored, but
	// no listing shows it yet.
	peers.cut["node3"], c.down["node3"] = true, true
	short := meta.ObjectName{Account: "acct", Container: "box", Object: "short"}
	_, err = c.proxy.PutObject(ctx, short, meta.Object{Size: 1}, bytes.NewReader([]byte("y")), PutOptions{})
	if !errors.Is(err, meta.ErrUnavailable) {
		t.Errorf("PUT with no container replica reachable: %v, want ErrUnavailable", err)
	}
	c.down["node3"], c.down["node4"], c.down["node5"] = false, false, false
	if got := readAll(t, c.proxy, short, nil); string(got) != "y" {
		t.Errorf("the object answered 503 reads %q, want it stored", got)
	}
}

// counting is a log handler that counts the records with one message (at any level).
type counting struct {
	msg string
	n   atomic.Int64
}

func (c *counting) Enabled(context.Context, slog.Level) bool { return true }
func (c *counting) Handle(_ context.Context, r slog.Record) error {
	if r.Message == c.msg {
		c.n.Add(1)
	}
	return nil
}
func (c *counting) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *counting) WithGroup(string) slog.Handler      { return c }
