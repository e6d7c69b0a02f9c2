package replicator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/replicator"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

const secret = "the cluster secret of the tests"

var ctx = context.Background()

// cluster is four storage nodes of one device each, behind the node protocol on loopback ports,
// and a 3-replica ring over them in which replica r of partition p is on node (p+r) mod 4: each
// partition's fourth node is its first handoff.
type cluster struct {
	t     *testing.T
	ring  *ring.Ring
	nodes []*storage.Node
	reps  []*replicator.Replicator
}

// The one ring is the object, container and account ring alike.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, ring: &ring.Ring{PartPower: 3, HashPrefix: "pre", HashSuffix: "suf"}}
	d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		srv := httptest.NewUnstartedServer(nil)
		addr := srv.Listener.Addr().String()
		n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), fmt.Sprint(i))}},
			HashPrefix: "pre", HashSuffix: "suf", Address: addr, Peers: d})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		h, err := backend.NewHandler(backend.HandlerConfig{Node: n, Secret: []byte(secret)})
		if err != nil {
			t.Fatal(err)
		}
		srv.Config.Handler = h
		srv.Start()
		t.Cleanup(srv.Close)
		c.nodes = append(c.nodes, n)
		c.ring.Devices = append(c.ring.Devices, ring.Device{ID: i, Zone: i, Node: addr, Name: "d0", Weight: 1})
	}
	for r := range 3 {
		row := make([]int, c.ring.Partitions())
		for p := range row {
			row[p] = (p + r) % 4
		}
		c.ring.Assignments = append(c.ring.Assignments, row)
	}
	for i, n := range c.nodes {
		rep, err := replicator.New(replicator.Config{Node: n, Self: c.ring.Devices[i].Node, Dialer: d,
			ObjectRings:   func() []*ring.Ring { return []*ring.Ring{c.ring} },
			ContainerRing: func() *ring.Ring { return c.ring }, AccountRing: func() *ring.Ring { return c.ring },
			BytesPerSecond: -1})
		if err != nil {
			t.Fatal(err)
		}
		c.reps = append(c.reps, rep)
	}
	return c
}

// placement returns an object's partition, its primaries' node indexes and its handoff's: the
// ring places the names the cluster uses, Swift's, as the proxy does.
func (c *cluster) placement(name meta.ObjectName) (part uint32, primaries []int, handoff int) {
	part = c.ring.Partition(name.Placed())
	for r := range 3 {
		primaries = append(primaries, (int(part)+r)%4)
	}
	return part, primaries, (int(part) + 3) % 4
}

func (c *cluster) put(node int, name meta.ObjectName, ts meta.Timestamp, data []byte) {
	c.t.Helper()
	part, _, _ := c.placement(name)
	_, err := c.nodes[node].PutObject(ctx, "d0", part, name, meta.Object{Timestamp: ts, Size: int64(len(data)), ContentType: "text/x-test",
		UserMeta: map[string]string{"color": "blue"}}, bytes.NewReader(data), nodeclient.PutOptions{})
	if err != nil {
		c.t.Fatalf("put %s on node %d: %v", name.Object, node, err)
	}
}

// version returns what a node holds of a name: its timestamp and whether it is a tombstone
// (ts 0: nothing).
func (c *cluster) version(node int, name meta.ObjectName) (meta.Timestamp, bool) {
	c.t.Helper()
	part, _, _ := c.placement(name)
	vs, err := c.nodes[node].PartitionVersions(ctx, "d0", c.ring.PartPower, part, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, v := range vs {
		if v.Name == name {
			return v.Timestamp, v.Deleted
		}
	}
	return 0, false
}

func (c *cluster) read(node int, name meta.ObjectName) ([]byte, meta.Object) {
	c.t.Helper()
	part, _, _ := c.placement(name)
	r, err := c.nodes[node].GetObject(ctx, "d0", part, name, nil)
	if err != nil {
		c.t.Fatalf("get %s from node %d: %v", name.Object, node, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		c.t.Fatal(err)
	}
	return b, r.Object
}

func (c *cluster) pass() replicator.PassStats {
	var total replicator.PassStats
	for _, r := range c.reps {
		st := r.RunPass(ctx)
		total.Pushed += st.Pushed
		total.Records += st.Records
		total.Rows += st.Rows
		total.Offered += st.Offered
		total.Evicted += st.Evicted
		total.Failed += st.Failed
		total.Remaining += st.Remaining
	}
	return total
}

// onPrimaries writes n objects to their primaries and returns their names.
func (c *cluster) onPrimaries(n int) []meta.ObjectName {
	c.t.Helper()
	var names []meta.ObjectName
	for i := range n {
		name := obj(fmt.Sprintf("o%d", i))
		names = append(names, name)
		_, prim, _ := c.placement(name)
		ts := meta.Now()
		for _, node := range prim {
			c.put(node, name, ts, []byte(name.Object))
		}
	}
	return names
}

func obj(o string) meta.ObjectName {
	return meta.ObjectName{Account: "acct", Container: "cont", Object: o}
}

func TestReplicationRestoresEveryReplicaAndEmptiesHandoffs(t *testing.T) {
	c := newCluster(t)
	small := []byte("small object bytes")
	large := bytes.Repeat([]byte("0123456789abcdef"), 20<<10) // a data file, not inline

	// Missed by its third primary (the node was down during the PUT).
	missed := obj("missed")
	ts := meta.Now()
	_, prim, _ := c.placement(missed)
	c.put(prim[0], missed, ts, small)
	c.put(prim[1], missed, ts, small)
	bigMissed := obj("big/missed")
	bts := meta.Now()
	_, bprim, _ := c.placement(bigMissed)
	c.put(bprim[1], bigMissed, bts, large)

	// Deleted while one primary was away: the tombstone must reach it.
	deleted := obj("deleted")
	_, dprim, _ := c.placement(deleted)
	for _, n := range dprim {
		c.put(n, deleted, meta.Now(), small)
	}
	dts := meta.Now()
	for _, n := range dprim[:2] {
		if _, err := c.nodes[n].DeleteObject(ctx, "d0", 0, deleted, dts, nodeclient.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Written to a handoff only (two primaries down): it must go home and leave the handoff.
	away := obj("away")
	_, aprim, ahand := c.placement(away)
	ats := meta.Now()
	c.put(ahand, away, ats, small)
	c.put(aprim[0], away, ats, small)

	// An older version on one primary, a newer on another.
	stale := obj("stale")
	_, sprim, _ := c.placement(stale)
	c.put(sprim[2], stale, meta.Now(), []byte("old"))
	newTS := meta.Now()
	c.put(sprim[0], stale, newTS, []byte("new"))

	st := c.pass()
	if st.Failed != 0 || st.Pushed == 0 {
		t.Fatalf("first pass: %+v", st)
	}
	c.pass() // a handoff's copy leaves once the primaries hold it, which may take their pass

	check := func(name meta.ObjectName, want []byte, wts meta.Timestamp) {
		t.Helper()
		_, primaries, handoff := c.placement(name)
		for _, n := range primaries {
			if got, _ := c.version(n, name); got != wts {
				t.Fatalf("%s on primary %d: timestamp %d, want %d", name.Object, n, got, wts)
			}
			if want != nil {
				b, o := c.read(n, name)
				if !bytes.Equal(b, want) || o.UserMeta["color"] != "blue" || o.ContentType != "text/x-test" {
					t.Fatalf("%s on primary %d: %d bytes %q / %+v", name.Object, n, len(b), o.ContentType, o.UserMeta)
				}
			}
		}
		if got, _ := c.version(handoff, name); got != 0 {
			t.Fatalf("%s still on handoff %d (timestamp %d)", name.Object, handoff, got)
		}
	}
	check(missed, small, ts)
	check(bigMissed, large, bts)
	check(away, small, ats)
	check(stale, []byte("new"), newTS)
	check(deleted, nil, dts)
	for _, n := range dprim {
		if _, del := c.version(n, deleted); !del {
			t.Fatalf("deleted object alive on primary %d", n)
		}
	}

	// Everything is in place: a further pass sends nothing.
	if st := c.pass(); st.Pushed != 0 || st.Evicted != 0 || st.Failed != 0 || st.Remaining != 0 {
		t.Fatalf("pass over a replicated cluster: %+v", st)
	}
}

// A handoff whose primaries cannot all be reached keeps its copy.
func TestHandoffKeepsItsCopyUntilEveryPrimaryHasIt(t *testing.T) {
	c := newCluster(t)
	name := obj("kept")
	_, prim, hand := c.placement(name)
	ts := meta.Now()
	c.put(hand, name, ts, []byte("only here"))
	// One primary's device is gone (its node answers, the device does not).
	c.ring.Devices[prim[1]].Name = "missing"
	st := c.reps[hand].RunPass(ctx)
	if st.Failed == 0 || st.Remaining != 1 {
		t.Fatalf("pass with a primary missing: %+v", st)
	}
	if got, _ := c.version(hand, name); got != ts {
		t.Fatal("the handoff dropped its copy while a primary lacked it")
	}
	if got, _ := c.version(prim[0], name); got != ts {
		t.Fatal("the reachable primary did not get the copy")
	}
	c.ring.Devices[prim[1]].Name = "d0"
	// The first primary holds what the handoff holds: it sends it to the second, not the
	// handoff, which keeps its copy until then.
	if st := c.reps[hand].RunPass(ctx); st.Failed != 0 || st.Remaining != 1 || st.Pushed != 0 || st.Evicted != 0 {
		t.Fatalf("handoff's pass with every primary back: %+v", st)
	}
	if st := c.reps[prim[0]].RunPass(ctx); st.Failed != 0 || st.Pushed != 1 {
		t.Fatalf("first primary's pass: %+v", st)
	}
	if st := c.reps[hand].RunPass(ctx); st.Failed != 0 || st.Remaining != 0 || st.Evicted != 1 {
		t.Fatalf("handoff's pass once the primaries hold it: %+v", st)
	}
	for _, n := range prim {
		if got, _ := c.version(n, name); got != ts {
			t.Fatalf("primary %d lacks the object", n)
		}
	}
	if got, _ := c.version(hand, name); got != 0 {
		t.Fatal("handoff copy not removed")
	}
}

// The storage node enumerates partitions by the ring's hash of the names the proxy places
// (Swift's), or replication would move objects where the proxy never looks for them.
func TestPartitionsWithDataMatchTheRing(t *testing.T) {
	c := newCluster(t)
	want := map[uint32]bool{}
	for i := range 20 {
		name := obj(fmt.Sprintf("o%d", i))
		part, _, _ := c.placement(name)
		want[part] = true
		c.put(0, name, meta.Now(), []byte("x"))
	}
	got := map[uint32]bool{}
	if err := c.nodes[0].PartitionsWithData(ctx, "d0", c.ring.PartPower, func(p uint32) error { got[p] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("partitions with data %v, want %v", got, want)
	}
	if _, err := c.nodes[0].PartitionDigests(ctx, "d0", c.ring.PartPower, 1<<c.ring.PartPower); !errors.Is(err, meta.ErrInvalidName) {
		t.Fatalf("digest of a partition past the ring: %v", err)
	}
}

// A ring change moves one replica of every partition to another device: passes on every node
// converge, the new primaries hold everything and the old places nothing.
func TestReplicationFollowsARingChange(t *testing.T) {
	c := newCluster(t)
	names := c.onPrimaries(40)
	// Replica 2 of every partition moves to the node that was its handoff.
	for p := range c.ring.Assignments[2] {
		c.ring.Assignments[2][p] = (p + 3) % 4
	}
	for round := range 4 {
		st := c.pass()
		if round == 3 && (st.Remaining != 0 || st.Pushed != 0 || st.Failed != 0) {
			t.Fatalf("after %d rounds: %+v", round+1, st)
		}
	}
	for _, name := range names {
		part := c.ring.Partition(name.Placed())
		want := map[int]bool{}
		for r := range 3 {
			want[c.ring.Assignments[r][part]] = true
		}
		for n := range 4 {
			if ts, _ := c.version(n, name); (ts != 0) != want[n] {
				t.Fatalf("%s on node %d: ts %d, primary %v", name.Object, n, ts, want[n])
			}
		}
	}
}

// While a ring's last change may be under way, a device that was one of a partition's
// primaries before it pushes the partition to the new primaries and keeps its copy (proxies
// that keep the old ring read and write it as a primary: joint quorums), without counting it
// as a handoff partition; once the change is complete, it is a handoff like any other.
func TestAPreviousPrimaryKeepsItsCopyUntilTheChangeIsComplete(t *testing.T) {
	c := newCluster(t)
	names := c.onPrimaries(40)
	// Replica 2 of every partition moves to the node that was its handoff, and the ring
	// carries the change.
	prev := make([][]int, len(c.ring.Assignments))
	for r, row := range c.ring.Assignments {
		prev[r] = append([]int(nil), row...)
	}
	for p := range c.ring.Assignments[2] {
		c.ring.Assignments[2][p] = (p + 3) % 4
	}
	c.ring.Change = &ring.Change{Previous: prev, Until: time.Now().Add(time.Hour)}
	check := func(keep bool) {
		t.Helper()
		for _, name := range names {
			part := c.ring.Partition(name.Placed())
			for n := range 4 {
				want := c.ring.Assignments[0][part] == n || c.ring.Assignments[1][part] == n || c.ring.Assignments[2][part] == n ||
					(keep && prev[2][part] == n)
				if ts, _ := c.version(n, name); (ts != 0) != want {
					t.Fatalf("%s on node %d: ts %d, want a copy %v (change under way %v)", name.Object, n, ts, want, keep)
				}
			}
		}
	}
	for round := range 3 {
		if st := c.pass(); st.Remaining != 0 || st.Failed != 0 || (round == 2 && st.Pushed != 0) {
			t.Fatalf("round %d of the change: %+v (a previous primary is no handoff)", round+1, st)
		}
	}
	check(true)
	// The change complete: the previous primaries' copies are handoffs' now, and go.
	c.ring.Change.Until = time.Now().Add(-time.Second)
	for round := range 3 {
		if st := c.pass(); round == 2 && (st.Remaining != 0 || st.Pushed != 0 || st.Failed != 0) {
			t.Fatalf("after %d rounds once complete: %+v", round+1, st)
		}
	}
	check(false)
}

// leaseLog records what a replicator tells the read leases.
type leaseLog struct {
	mu         sync.Mutex
	replicated map[string]bool // "device→peer part"
	full       map[string]bool // "device→peer"
}

func (l *leaseLog) Replicated(device, peer string, part uint32, _ time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.replicated[fmt.Sprintf("%s→%s %d", device, peer, part)] = true
}

func (l *leaseLog) FullPass(device, peer string, _ time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.full[device+"→"+peer] = true
}

// The leases hear of a partition synced to a primary only when the pass pushed it everything
// it lacked: a suffix left for a better-placed replica to send is not (that replica's pass
// must bring it), nor is a primary that could not be reached.
func TestLeasesHearOnlyOfWholeSyncs(t *testing.T) {
	c := newCluster(t)
	name := obj("for-the-lease")
	part, prim, hand := c.placement(name)
	ts := meta.Now()
	c.put(prim[1], name, ts, []byte("x"))
	c.put(prim[2], name, ts, []byte("x"))
	dev := func(i int) string { return c.ring.Devices[i].Node + "/d0" }
	d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	withLog := func(i int) (*replicator.Replicator, *leaseLog) {
		log := &leaseLog{replicated: map[string]bool{}, full: map[string]bool{}}
		rep, err := replicator.New(replicator.Config{Node: c.nodes[i], Self: c.ring.Devices[i].Node, Dialer: d,
			ObjectRings: func() []*ring.Ring { return []*ring.Ring{c.ring} }, BytesPerSecond: -1, Leases: log})
		if err != nil {
			t.Fatal(err)
		}
		return rep, log
	}
	synced := func(log *leaseLog, from, to int) bool {
		return log.replicated[fmt.Sprintf("%s→%s %d", dev(from), dev(to), part)]
	}
	// The third primary leaves the first's copy to the second (better placed).
	rep, log := withLog(prim[2])
	rep.RunPass(ctx)
	if synced(log, prim[2], prim[0]) || log.full[dev(prim[2])+"→"+dev(prim[0])] {
		t.Fatalf("a sync that left a suffix to another replica counted whole: %v %v", log.replicated, log.full)
	}
	if !synced(log, prim[2], prim[1]) || !log.full[dev(prim[2])+"→"+dev(prim[1])] || !log.full[dev(prim[2])+"→"+dev(hand)] {
		t.Fatalf("whole syncs not heard of: %v %v", log.replicated, log.full)
	}
	// The second primary sends it.
	rep, log = withLog(prim[1])
	rep.RunPass(ctx)
	if !synced(log, prim[1], prim[0]) || !log.full[dev(prim[1])+"→"+dev(prim[0])] {
		t.Fatalf("the sync that sent the copy: %v %v", log.replicated, log.full)
	}
	// Now the third's pass finds the first whole.
	rep, log = withLog(prim[2])
	rep.RunPass(ctx)
	if !synced(log, prim[2], prim[0]) || !log.full[dev(prim[2])+"→"+dev(prim[0])] {
		t.Fatalf("after the copy arrived: %v %v", log.replicated, log.full)
	}
	// A primary that cannot be reached is not synced.
	c.ring.Devices[prim[0]].Name = "missing"
	rep, log = withLog(prim[2])
	rep.RunPass(ctx)
	missing := c.ring.Devices[prim[0]].Node + "/missing"
	c.ring.Devices[prim[0]].Name = "d0"
	if log.full[dev(prim[2])+"→"+missing] || log.replicated[fmt.Sprintf("%s→%s %d", dev(prim[2]), missing, part)] {
		t.Fatalf("an unreachable primary counted: %v %v", log.replicated, log.full)
	}
	if !log.full[dev(prim[2])+"→"+dev(prim[1])] {
		t.Fatalf("the reachable primary not heard of: %v", log.full)
	}
}
