package replicator_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// where returns a listing's partition, its primaries' node indexes and its handoff's (the ring
// places Swift's names, as the proxy does).
func (c *cluster) where(account, container string) (part uint32, primaries []int, handoff int) {
	part = c.ring.Partition(meta.SwiftAccount(account), container, "")
	for r := range 3 {
		primaries = append(primaries, (int(part)+r)%4)
	}
	return part, primaries, (int(part) + 3) % 4
}

func (c *cluster) createContainer(node int, account, container string, created meta.Timestamp, m map[string]string) {
	c.t.Helper()
	c.createContainerWith(node, account, container, created, m, nodeclient.ContainerOptions{})
}

func (c *cluster) createContainerWith(node int, account, container string, created meta.Timestamp, m map[string]string, opts nodeclient.ContainerOptions) {
	c.t.Helper()
	part, _, _ := c.where(account, container)
	if err := c.nodes[node].PutContainer(ctx, "d0", part, account, meta.Container{Name: container, Created: created, Meta: m}, opts); err != nil {
		c.t.Fatalf("create %s on node %d: %v", container, node, err)
	}
}

func (c *cluster) row(node int, account, container, object string, ts meta.Timestamp, deleted bool) {
	c.t.Helper()
	part, _, _ := c.where(account, container)
	e := meta.ListEntry{Name: object, Timestamp: ts, Size: int64(len(object)), ETag: "etag-" + object, ContentType: "text/x-test"}
	if deleted {
		e = meta.ListEntry{Name: object, Timestamp: ts}
	}
	if err := c.nodes[node].UpdateListing(ctx, "d0", part, account, container, e, deleted); err != nil {
		c.t.Fatalf("row %s on node %d: %v", object, node, err)
	}
}

// rows returns a node's rows of a container (entries and listing tombstones) as name → "ts" or
// "ts deleted"; nil when it holds no container of the name, live or deleted.
func (c *cluster) rows(node int, account, container string) map[string]string {
	c.t.Helper()
	name := nodeclient.Listing{Account: account, Container: container}
	if _, ok, err := c.nodes[node].ContainerRecord(ctx, "d0", account, container); err != nil || !ok {
		if err != nil {
			c.t.Fatal(err)
		}
		return nil
	}
	out := map[string]string{}
	for after := ""; ; {
		rows, more, err := c.nodes[node].ListingRows(ctx, "d0", name, 0, nil, after, 1000)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, r := range rows {
			out[r.Name()] = fmt.Sprint(r.Entry.Timestamp)
			if r.Deleted {
				out[r.Name()] += " deleted"
			}
		}
		if !more {
			return out
		}
		after = rows[len(rows)-1].Name()
	}
}

// sameOnPrimaries checks that a container's primaries hold the same record and rows, and its
// handoff nothing, and returns the rows.
func (c *cluster) sameOnPrimaries(account, container string) map[string]string {
	c.t.Helper()
	_, prim, hand := c.where(account, container)
	var want map[string]string
	var wantRec nodeclient.ContainerRecord
	for i, n := range prim {
		got := c.rows(n, account, container)
		rec, ok, err := c.nodes[n].ContainerRecord(ctx, "d0", account, container)
		if err != nil || !ok {
			c.t.Fatalf("container %s on primary %d: %v, %v", container, n, ok, err)
		}
		if i == 0 {
			want, wantRec = got, rec
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			c.t.Fatalf("container %s: primary %d has rows %v, primary %d %v", container, prim[0], want, n, got)
		}
		if rec.Created != wantRec.Created || rec.Deleted != wantRec.Deleted || fmt.Sprint(values(rec)) != fmt.Sprint(values(wantRec)) {
			c.t.Fatalf("container %s: primary %d has record %+v, primary %d %+v", container, prim[0], wantRec, n, rec)
		}
	}
	if got := c.rows(hand, account, container); got != nil {
		c.t.Fatalf("container %s still on its handoff %d: %v", container, hand, got)
	}
	return want
}

func values(rec nodeclient.ContainerRecord) map[string]string {
	out := map[string]string{}
	for k, v := range rec.Meta {
		if v.Value != "" {
			out[k] = v.Value
		}
	}
	return out
}

// settle runs passes until one sends and removes nothing, and fails the test if that takes more
// than a few: each pass's pushes are complete, so a second pass finds the replicas in sync.
func (c *cluster) settle() {
	c.t.Helper()
	for range 3 {
		st := c.pass()
		if st.Failed != 0 {
			c.t.Fatalf("pass failed: %+v", st)
		}
		if st.Pushed == 0 && st.Records == 0 && st.Rows == 0 && st.Offered == 0 && st.Evicted == 0 && st.Remaining == 0 {
			return
		}
	}
	c.t.Fatalf("replication does not settle")
}

func TestListingRowMissedByOneReplicaAndItsTombstone(t *testing.T) {
	c := newCluster(t)
	_, prim, _ := c.where("acct", "box")
	created := meta.Now()
	for _, n := range prim {
		c.createContainer(n, "acct", "box", created, map[string]string{"color": "blue"})
	}
	ts := meta.Now()
	c.row(prim[0], "acct", "box", "missed", ts, false) // the third replica was down
	c.row(prim[1], "acct", "box", "missed", ts, false)
	only := meta.Now()
	c.row(prim[2], "acct", "box", "only-here", only, false)
	for _, n := range prim {
		c.row(n, "acct", "box", "gone", meta.Now(), false)
	}
	del := meta.Now()
	c.row(prim[1], "acct", "box", "gone", del, true) // the delete reached one replica

	st := c.pass()
	if st.Failed != 0 || st.Rows == 0 || st.Records != 0 {
		t.Fatalf("first pass: %+v", st)
	}
	c.settle()
	want := map[string]string{"missed": fmt.Sprint(ts), "only-here": fmt.Sprint(only), "gone": fmt.Sprint(del) + " deleted"}
	if got := c.sameOnPrimaries("acct", "box"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	// The tombstone keeps a late PUT row of the deleted object out, wherever it arrives.
	c.row(prim[0], "acct", "box", "gone", del-1, false)
	for _, n := range prim {
		l, err := c.nodes[n].ListObjects(ctx, "d0", 0, "acct", "box", meta.ListOptions{})
		if err != nil || len(l.Objects) != 2 {
			t.Fatalf("listing of primary %d: %+v, %v", n, l.Objects, err)
		}
		h, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "box")
		if err != nil || h.ObjectCount != 2 || h.BytesUsed != int64(len("missed")+len("only-here")) {
			t.Fatalf("usage on primary %d: %+v, %v", n, h, err)
		}
	}
}

func TestContainerMetadataNewestWins(t *testing.T) {
	c := newCluster(t)
	_, prim, _ := c.where("acct", "meta")
	created := meta.Now()
	for _, n := range prim {
		c.createContainer(n, "acct", "meta", created, map[string]string{"sys:acl": "private", "sys:quota": "10"})
	}
	// Two POSTs, each missed by a replica: the newer value of a key wins on every replica, and
	// so does a removal.
	if _, err := c.nodes[prim[0]].PostContainer(ctx, "d0", 0, "acct", "meta", map[string]string{"sys:acl": "public", "sys:quota": ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.nodes[prim[1]].PostContainer(ctx, "d0", 0, "acct", "meta", map[string]string{"sys:acl": "shared", "color": "red"}); err != nil {
		t.Fatal(err)
	}
	c.settle()
	c.sameOnPrimaries("acct", "meta")
	for _, n := range prim {
		h, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "meta")
		if err != nil || fmt.Sprint(h.Meta) != fmt.Sprint(map[string]string{"sys:acl": "shared", "color": "red"}) || h.Created != created {
			t.Fatalf("primary %d: %+v, %v", n, h, err)
		}
	}
}

func TestContainerCreatedOnHandoffGoesHome(t *testing.T) {
	c := newCluster(t)
	_, prim, hand := c.where("acct", "away")
	// Two primaries were down: the proxy created the container on the handoff and one primary,
	// and its rows went to the handoff only.
	created := meta.Now()
	c.createContainer(hand, "acct", "away", created, map[string]string{"sys:acl": "x"})
	c.createContainer(prim[0], "acct", "away", created, map[string]string{"sys:acl": "x"})
	var ts []meta.Timestamp
	for i := range 5 {
		ts = append(ts, meta.Now())
		c.row(hand, "acct", "away", fmt.Sprintf("o%d", i), ts[i], false)
	}
	c.row(hand, "acct", "away", "o4", meta.Now(), true)

	// Another, empty, whose account row the handoff keeps itself (linked to the container).
	_, eprim, ehand := c.where("acct", "empty-away")
	self := &nodeclient.AccountUpdate{Node: c.ring.Devices[ehand].Node, Device: "d0"}
	c.createContainerWith(ehand, "acct", "empty-away", created, nil, nodeclient.ContainerOptions{Account: self})
	c.createContainer(eprim[0], "acct", "empty-away", created, nil)

	st := c.pass()
	if st.Failed != 0 || st.Records == 0 || st.Rows == 0 {
		t.Fatalf("first pass: %+v", st)
	}
	c.settle()
	if got := c.sameOnPrimaries("acct", "empty-away"); len(got) != 0 {
		t.Fatalf("rows of the empty container: %v", got)
	}
	rows := c.sameOnPrimaries("acct", "away")
	if len(rows) != 5 || rows["o0"] != fmt.Sprint(ts[0]) {
		t.Fatalf("rows at home: %v", rows)
	}
	for _, n := range prim {
		h, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "away")
		if err != nil || h.ObjectCount != 4 || h.Meta["sys:acl"] != "x" {
			t.Fatalf("primary %d: %+v, %v", n, h, err)
		}
	}
	if _, err := c.nodes[hand].HeadContainer(ctx, "d0", 0, "acct", "away"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("the handoff still serves the container: %v", err)
	}
}

func TestContainerDeletedWhileReplicaAway(t *testing.T) {
	c := newCluster(t)
	_, prim, _ := c.where("acct", "doomed")
	created := meta.Now()
	for _, n := range prim {
		c.createContainer(n, "acct", "doomed", created, nil)
		c.row(n, "acct", "doomed", "obj", meta.Now(), false)
	}
	// The object's delete and the container's reached two replicas; the third was away and
	// still lists the object.
	gone := meta.Now()
	deleted := meta.Now()
	for _, n := range prim[:2] {
		c.row(n, "acct", "doomed", "obj", gone, true)
		if err := c.nodes[n].DeleteContainer(ctx, "d0", 0, "acct", "doomed", deleted, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.settle()
	for _, n := range prim {
		if _, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "doomed"); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("primary %d still has the deleted container: %v", n, err)
		}
		rec, ok, err := c.nodes[n].ContainerRecord(ctx, "d0", "acct", "doomed")
		if err != nil || !ok || rec.Deleted != deleted || rec.Created != created {
			t.Fatalf("primary %d: tombstone %+v, %v, %v", n, rec, ok, err)
		}
	}
	// A creation older than the deletion does not make it again; a newer one does, everywhere.
	c.createContainer(prim[2], "acct", "doomed", deleted-1, nil) // a stale create arriving late
	c.settle()
	for _, n := range prim {
		if _, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "doomed"); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("primary %d: a create older than the delete revived the container: %v", n, err)
		}
	}
	again := meta.Now()
	c.createContainer(prim[1], "acct", "doomed", again, nil)
	c.settle()
	for _, n := range prim {
		if h, err := c.nodes[n].HeadContainer(ctx, "d0", 0, "acct", "doomed"); err != nil || h.Created != again || h.ObjectCount != 0 {
			t.Fatalf("primary %d: container made again: %+v, %v", n, h, err)
		}
	}
}

func TestAccountRowMissedAndHandoffAccount(t *testing.T) {
	c := newCluster(t)
	part, prim, hand := c.where("tenant", "")
	put1, put2, put3 := meta.Now(), meta.Now(), meta.Now()
	for _, n := range prim[:2] {
		if err := c.nodes[n].UpdateAccount(ctx, "d0", part, "tenant", meta.ContainerRow{Name: "c1", PutTimestamp: put1, ObjectCount: 3, BytesUsed: 30}); err != nil {
			t.Fatal(err)
		}
	}
	// c2's deletion reached one replica; c3 was reported to the handoff only.
	for _, n := range prim {
		if err := c.nodes[n].UpdateAccount(ctx, "d0", part, "tenant", meta.ContainerRow{Name: "c2", PutTimestamp: put2, ObjectCount: 1, BytesUsed: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.nodes[prim[2]].UpdateAccount(ctx, "d0", part, "tenant", meta.ContainerRow{Name: "c2", PutTimestamp: put2, DeleteTimestamp: meta.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := c.nodes[hand].UpdateAccount(ctx, "d0", part, "tenant", meta.ContainerRow{Name: "c3", PutTimestamp: put3, ObjectCount: 7, BytesUsed: 70}); err != nil {
		t.Fatal(err)
	}
	st := c.pass()
	if st.Failed != 0 || st.Rows == 0 {
		t.Fatalf("first pass: %+v", st)
	}
	c.settle()
	for _, n := range prim {
		l, err := c.nodes[n].ListContainers(ctx, "d0", part, "tenant", meta.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ct := range l.Containers {
			got = append(got, fmt.Sprintf("%s:%d:%d", ct.Name, ct.ObjectCount, ct.BytesUsed))
		}
		if fmt.Sprint(got) != "[c1:3:30 c3:7:70]" {
			t.Fatalf("account listing of primary %d: %v", n, got)
		}
		a, err := c.nodes[n].HeadAccount(ctx, "d0", part, "tenant")
		if err != nil || a.ContainerCount != 2 || a.ObjectCount != 10 || a.BytesUsed != 100 {
			t.Fatalf("account totals of primary %d: %+v, %v", n, a, err)
		}
	}
	if l, err := c.nodes[hand].ListContainers(ctx, "d0", part, "tenant", meta.ListOptions{}); err != nil || len(l.Containers) != 0 {
		t.Fatalf("the handoff still lists the account: %+v, %v", l, err)
	}
	if a, err := c.nodes[hand].HeadAccount(ctx, "d0", part, "tenant"); err != nil || a.ContainerCount != 0 || a.ObjectCount != 0 {
		t.Fatalf("the handoff's account totals: %+v, %v", a, err)
	}
}

// A large container whose replicas differ by a few rows: only those rows are sent.
func TestLargeContainerSendsOnlyDifferingRows(t *testing.T) {
	c := newCluster(t)
	part, prim, _ := c.where("acct", "big")
	created := meta.Now()
	for _, n := range prim {
		c.createContainer(n, "acct", "big", created, nil)
	}
	const n = 5000
	base := meta.Now()
	rows := make([]nodeclient.ListingRow, n)
	for i := range rows {
		name := fmt.Sprintf("object-%06d", i)
		rows[i] = nodeclient.ListingRow{Entry: meta.ListEntry{Name: name, Timestamp: base + meta.Timestamp(i), Size: 1, ETag: "e"}}
	}
	box := nodeclient.Listing{Account: "acct", Container: "big"}
	for _, node := range prim {
		for start := 0; start < n; start += 1000 {
			if err := c.nodes[node].MergeRows(ctx, "d0", part, box, rows[start:start+1000]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st := c.pass(); st.Rows != 0 || st.Offered != 0 || st.Records != 0 || st.Failed != 0 {
		t.Fatalf("pass over replicas in sync: %+v", st)
	}
	// One replica has a new object, a newer version of one, and the deletion of another.
	c.row(prim[0], "acct", "big", "new-object", meta.Now(), false)
	c.row(prim[0], "acct", "big", "object-001234", meta.Now(), false)
	c.row(prim[0], "acct", "big", "object-004321", meta.Now(), true)
	st := c.reps[prim[0]].RunPass(ctx)
	if st.Failed != 0 || st.Rows != 3*2 || st.Records != 0 {
		t.Fatalf("pass of the replica with three new rows: sent %d rows (want 3 to each of 2 replicas): %+v", st.Rows, st)
	}
	// Only the buckets of the three names were compared row by row: at most three of the 32
	// buckets of about 156 rows each, to each replica.
	if st.Offered > 2*n/5 {
		t.Fatalf("%d row versions offered to find 3 rows in each of 2 replicas of %d", st.Offered, n)
	}
	c.settle()
	if got := c.sameOnPrimaries("acct", "big"); len(got) != n+1 {
		t.Fatalf("%d rows", len(got))
	}
}

// Names, metadata and entries that are not UTF-8 cross the node protocol exactly.
func TestListingBytesCrossExactly(t *testing.T) {
	c := newCluster(t)
	const account, container = "\x00reserved", "caf\xe9\x00box"
	part, prim, _ := c.where(account, container)
	created := meta.Now()
	c.createContainer(prim[0], account, container, created, map[string]string{"sys:k\xff": "v\xfe\x00"})
	e := meta.ListEntry{Name: "obj\xff\x01", Timestamp: meta.Now(), Size: 3, ETag: "\xc3(", ContentType: "x/\xff"}
	if err := c.nodes[prim[0]].UpdateListing(ctx, "d0", part, account, container, e, false); err != nil {
		t.Fatal(err)
	}
	c.settle()
	c.sameOnPrimaries(account, container)
	for _, n := range prim {
		h, err := c.nodes[n].HeadContainer(ctx, "d0", part, account, container)
		if err != nil || h.Meta["sys:k\xff"] != "v\xfe\x00" {
			t.Fatalf("primary %d: %+v, %v", n, h, err)
		}
		l, err := c.nodes[n].ListObjects(ctx, "d0", part, account, container, meta.ListOptions{})
		if err != nil || len(l.Objects) != 1 || l.Objects[0] != e {
			t.Fatalf("primary %d lists %+v, %v; want %+v", n, l.Objects, err, e)
		}
	}
}
