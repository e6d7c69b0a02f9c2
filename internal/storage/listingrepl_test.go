package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// replNode opens a node with peers (so that its listings keep listing tombstones, as in a
// cluster), and returns it with its container "box" of account "acct" created.
func replNode(t *testing.T, opts nodeclient.ContainerOptions) (*Node, meta.Timestamp) {
	t.Helper()
	ps := &peers{nodes: map[string]*Node{}, down: map[string]bool{}}
	n := openPeer(t, ps, "self", filepath.Join(t.TempDir(), "n"))
	t.Cleanup(func() { n.Close() })
	created := meta.Now()
	if err := n.PutContainer(context.Background(), "d0", 0, "acct", meta.Container{Name: "box", Created: created, Meta: map[string]string{"k": "v"}}, opts); err != nil {
		t.Fatal(err)
	}
	return n, created
}

func listRow(t *testing.T, n *Node, object string, ts meta.Timestamp, deleted bool) {
	t.Helper()
	e := meta.ListEntry{Name: object, Timestamp: ts, Size: 10}
	if err := n.UpdateListing(context.Background(), "d0", 0, "acct", "box", e, deleted); err != nil {
		t.Fatal(err)
	}
}

// allRows returns every row of a container on a device (entries and tombstones), as name →
// "ts" or "ts deleted".
func allRows(t *testing.T, n *Node, container string) map[string]string {
	t.Helper()
	rows, _, err := n.ListingRows(context.Background(), "d0", nodeclient.Listing{Account: "acct", Container: container}, 0, nil, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.Name()] = fmt.Sprint(r.Entry.Timestamp)
		if r.Deleted {
			out[r.Name()] += " deleted"
		}
	}
	return out
}

// A deletion from other replicas reaches a replica that still lists objects older than it:
// they become listing tombstones at the deletion's time. An object newer than the deletion
// keeps the container.
func TestMergedDeletionOfAContainerThatStillListsObjects(t *testing.T) {
	ctx := context.Background()
	n, created := replNode(t, nodeclient.ContainerOptions{})
	old := meta.Now()
	listRow(t, n, "old", old, false)
	listRow(t, n, "was-deleted", meta.Now(), true)
	deleted := meta.Now()
	newer := meta.Now()
	listRow(t, n, "newer", newer, false)
	tomb := nodeclient.ContainerRecord{Created: created, Deleted: deleted}
	if _, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", tomb, nil); !errors.Is(err, meta.ErrNotEmpty) {
		t.Fatalf("deletion older than a listed object: %v", err)
	}
	if _, err := n.HeadContainer(ctx, "d0", 0, "acct", "box"); err != nil {
		t.Fatalf("container after a refused deletion: %v", err)
	}
	if err := n.UpdateListing(ctx, "d0", 0, "acct", "box", meta.ListEntry{Name: "newer", Timestamp: meta.Now()}, true); err != nil {
		t.Fatal(err)
	}
	live, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", tomb, nil)
	if err != nil || live {
		t.Fatalf("deletion: live %v, %v", live, err)
	}
	if _, err := n.HeadContainer(ctx, "d0", 0, "acct", "box"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("container after the deletion: %v", err)
	}
	if got := allRows(t, n, "box"); got["old"] != fmt.Sprint(deleted)+" deleted" {
		t.Fatalf("the object listed before the deletion: %q", got["old"])
	}
	if rec, ok, err := n.ContainerRecord(ctx, "d0", "acct", "box"); err != nil || !ok || rec.Deleted != deleted || rec.Created != created {
		t.Fatalf("tombstone: %+v, %v, %v", rec, ok, err)
	}
	// An older tombstone changes nothing; a creation older than the deletion neither.
	if live, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", nodeclient.ContainerRecord{Created: created, Deleted: deleted - 1}, nil); err != nil || live {
		t.Fatalf("older tombstone: %v, %v", live, err)
	}
	if live, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", nodeclient.ContainerRecord{Created: deleted - 1}, nil); err != nil || live {
		t.Fatalf("creation older than the deletion: %v, %v", live, err)
	}
	if rec, _, _ := n.ContainerRecord(ctx, "d0", "acct", "box"); rec.Deleted != deleted {
		t.Fatalf("tombstone after older merges: %+v", rec)
	}
	// A newer creation makes it again, reporting its usage to the replica named.
	again := meta.Now()
	report := &nodeclient.AccountUpdate{Node: "acct-node", Device: "a1", Part: 7}
	in := nodeclient.ContainerRecord{Created: again, Meta: map[string]nodeclient.MetaValue{"k": {Value: "w", Timestamp: again}, "old": {Value: "x", Timestamp: created}}}
	if live, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", in, report); err != nil || !live {
		t.Fatalf("newer creation: %v, %v", live, err)
	}
	c, err := n.HeadContainer(ctx, "d0", 0, "acct", "box")
	if err != nil || c.Created != again || fmt.Sprint(c.Meta) != "map[k:w]" || c.ObjectCount != 0 {
		t.Fatalf("container made again: %+v, %v", c, err)
	}
	d, _ := n.device("d0")
	r, ok, err := d.index.Report("acct", "box")
	if err != nil || !ok {
		t.Fatalf("report of the container made again: %v, %v", ok, err)
	}
	dec, derr := decodeReport(r.Target)
	if derr != nil || dec != *report {
		t.Fatalf("reports to %+v (%v), want %+v", dec, derr, *report)
	}
}

// A container's metadata keeps the time of each change, a removal included; a merge takes the
// newer value of each key and drops keys older than the container's creation.
func TestContainerMetadataTimes(t *testing.T) {
	ctx := context.Background()
	n, created := replNode(t, nodeclient.ContainerOptions{})
	if _, err := n.PostContainer(ctx, "d0", 0, "acct", "box", map[string]string{"k": "", "new": "1"}); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := n.ContainerRecord(ctx, "d0", "acct", "box")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if k, nw := rec.Meta["k"], rec.Meta["new"]; k.Value != "" || k.Timestamp <= created || nw.Value != "1" || nw.Timestamp != k.Timestamp {
		t.Fatalf("metadata times: %+v", rec.Meta)
	}
	removedAt := rec.Meta["k"].Timestamp
	in := nodeclient.ContainerRecord{Created: created, Meta: map[string]nodeclient.MetaValue{
		"k":     {Value: "stale", Timestamp: removedAt - 1}, // older than the removal
		"new":   {Value: "2", Timestamp: removedAt + 1},     // newer
		"other": {Value: "o", Timestamp: created},
		"gone":  {Value: "g", Timestamp: created - 1}, // older than the container
	}}
	if live, err := n.MergeContainer(ctx, "d0", 0, "acct", "box", in, nil); err != nil || !live {
		t.Fatal(live, err)
	}
	c, err := n.HeadContainer(ctx, "d0", 0, "acct", "box")
	if err != nil || fmt.Sprint(c.Meta) != "map[new:2 other:o]" {
		t.Fatalf("merged metadata: %v, %v", c.Meta, err)
	}
}

// A handoff's container leaves row by row, each only if it is still the row sent: a row
// written meanwhile stays, and so does the container until it is sent too.
func TestEvictionKeepsRowsWrittenMeanwhile(t *testing.T) {
	ctx := context.Background()
	n, _ := replNode(t, nodeclient.ContainerOptions{})
	for i := range 4 {
		listRow(t, n, fmt.Sprintf("o%d", i), meta.Now(), i == 3)
	}
	box := nodeclient.Listing{Account: "acct", Container: "box"}
	digest, err := n.ListingDigests(ctx, "d0", []nodeclient.Listing{box})
	if err != nil {
		t.Fatal(err)
	}
	sent, _, err := n.ListingRows(ctx, "d0", box, 0, nil, "", 1000)
	if err != nil || len(sent) != 4 {
		t.Fatal(len(sent), err)
	}
	// Written after the rows were read and sent.
	listRow(t, n, "o1", meta.Now(), false)
	listRow(t, n, "o9", meta.Now(), false)
	gone, err := n.EvictRows(ctx, "d0", box, sent)
	if err != nil || gone != 3 {
		t.Fatalf("evicted %d rows, want 3: %v", gone, err)
	}
	if got := allRows(t, n, "box"); len(got) != 2 || got["o1"] == "" || got["o9"] == "" {
		t.Fatalf("rows left: %v", got)
	}
	if c, err := n.HeadContainer(ctx, "d0", 0, "acct", "box"); err != nil || c.ObjectCount != 2 || c.BytesUsed != 20 {
		t.Fatalf("usage of what is left: %+v, %v", c, err)
	}
	if out, err := n.EvictListing(ctx, "d0", box, digest[0].Record); err != nil || out {
		t.Fatalf("container removed with rows left: %v, %v", out, err)
	}
	rest, _, err := n.ListingRows(ctx, "d0", box, 0, nil, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := n.EvictRows(ctx, "d0", box, rest); err != nil || gone != 2 {
		t.Fatalf("evicted %d, %v", gone, err)
	}
	if _, err := n.PostContainer(ctx, "d0", 0, "acct", "box", map[string]string{"k": "changed"}); err != nil {
		t.Fatal(err)
	}
	if out, err := n.EvictListing(ctx, "d0", box, digest[0].Record); err != nil || out {
		t.Fatalf("container removed though its record changed: %v, %v", out, err)
	}
	now, err := n.ListingDigests(ctx, "d0", []nodeclient.Listing{box})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := n.EvictListing(ctx, "d0", box, now[0].Record); err != nil || !out {
		t.Fatalf("container not removed: %v, %v", out, err)
	}
	if _, ok, err := n.ContainerRecord(ctx, "d0", "acct", "box"); ok || err != nil {
		t.Fatalf("record after eviction: %v, %v", ok, err)
	}
}

// A handoff's container whose account row is on the same device, linked to it: before the
// container's rows leave, the row keeps the usage it has, so that the account (held here too)
// does not lose it; evicting the account's row unlinks the container.
func TestEvictionOfLinkedContainerAndAccountRow(t *testing.T) {
	ctx := context.Background()
	n, _ := replNode(t, nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: "self", Device: "d0"}})
	listRow(t, n, "a", meta.Now(), false)
	listRow(t, n, "b", meta.Now(), false)
	if a, _ := accountOf(t, n); a.ObjectCount != 2 || a.BytesUsed != 20 {
		t.Fatalf("account before: %+v", a)
	}
	box := nodeclient.Listing{Account: "acct", Container: "box"}
	rows, _, err := n.ListingRows(ctx, "d0", box, 0, nil, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err := n.EvictRows(ctx, "d0", box, rows); err != nil || gone != 2 {
		t.Fatalf("evicted %d: %v", gone, err)
	}
	if a, names := accountOf(t, n); a.ContainerCount != 1 || a.ObjectCount != 2 || a.BytesUsed != 20 || len(names) != 1 {
		t.Fatalf("account after the container's rows left: %+v %v", a, names)
	}
	acct := nodeclient.Listing{Account: "acct"}
	arows, _, err := n.ListingRows(ctx, "d0", acct, 0, nil, "", 1000)
	if err != nil || len(arows) != 1 || arows[0].Container.ObjectCount != 2 {
		t.Fatalf("account rows: %+v, %v", arows, err)
	}
	if gone, err := n.EvictRows(ctx, "d0", acct, arows); err != nil || gone != 1 {
		t.Fatalf("evicted %d account rows: %v", gone, err)
	}
	if out, err := n.EvictListing(ctx, "d0", acct, 0); err != nil || !out {
		t.Fatalf("account not removed: %v, %v", out, err)
	}
	if a, names := accountOf(t, n); a.ContainerCount+a.ObjectCount+a.BytesUsed != 0 || len(names) != 0 {
		t.Fatalf("account after eviction: %+v %v", a, names)
	}

	// A linked account row evicted first: the container stops feeding the account's totals.
	n2, _ := replNode(t, nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Node: "self", Device: "d0"}})
	listRow(t, n2, "a", meta.Now(), false)
	arows, _, err = n2.ListingRows(ctx, "d0", acct, 0, nil, "", 1000)
	if err != nil || len(arows) != 1 {
		t.Fatal(arows, err)
	}
	arows[0].Container.ObjectCount = 99 // a linked row's usage moves with its container: not compared
	if gone, err := n2.EvictRows(ctx, "d0", acct, arows); err != nil || gone != 1 {
		t.Fatalf("evicted %d linked account rows: %v", gone, err)
	}
	listRow(t, n2, "b", meta.Now(), false)
	if a, _ := accountOf(t, n2); a.ContainerCount+a.ObjectCount+a.BytesUsed != 0 {
		t.Fatalf("account totals fed by an unlinked container: %+v", a)
	}
	if c, err := n2.HeadContainer(ctx, "d0", 0, "acct", "box"); err != nil || c.ObjectCount != 2 {
		t.Fatalf("container: %+v, %v", c, err)
	}
}

func TestSweeperReclaimsContainerTombstones(t *testing.T) {
	ctx := context.Background()
	n, _ := replNode(t, nodeclient.ContainerOptions{})
	if err := n.DeleteContainer(ctx, "d0", 0, "acct", "box", meta.Now(), nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := n.ContainerRecord(ctx, "d0", "acct", "box"); err != nil || !ok || rec.Deleted == 0 {
		t.Fatalf("tombstone of a deleted container: %+v, %v, %v", rec, ok, err)
	}
	now := time.Now()
	s, err := n.NewSweeper(SweeperConfig{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s.Pass(ctx)
	if _, ok, _ := n.ContainerRecord(ctx, "d0", "acct", "box"); !ok {
		t.Fatal("tombstone younger than the reclaim age reclaimed")
	}
	now = now.Add(8 * 24 * time.Hour)
	s.Pass(ctx)
	if _, ok, err := n.ContainerRecord(ctx, "d0", "acct", "box"); ok || err != nil {
		t.Fatalf("tombstone older than the reclaim age: %v, %v", ok, err)
	}
}

func decodeReport(t []byte) (nodeclient.AccountUpdate, error) {
	d := binenc.Decoder{B: t}
	u := decodeTarget(&d)
	return u, d.Err
}

// A listing update that reaches a container replica after the container's deletion is done
// with when it is older than the deletion (a pending update need not be retried forever), and
// refused when newer.
func TestLateRowsOfADeletedContainer(t *testing.T) {
	ctx := context.Background()
	n, _ := replNode(t, nodeclient.ContainerOptions{})
	written := meta.Now()
	deleted := meta.Now()
	if err := n.DeleteContainer(ctx, "d0", 0, "acct", "box", deleted, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.UpdateListing(ctx, "d0", 0, "acct", "box", meta.ListEntry{Name: "o", Timestamp: written}, true); err != nil {
		t.Fatalf("row older than the deletion: %v", err)
	}
	if err := n.UpdateListing(ctx, "d0", 0, "acct", "box", meta.ListEntry{Name: "o", Timestamp: meta.Now()}, false); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("row newer than the deletion: %v", err)
	}
	if err := n.UpdateListing(ctx, "d0", 0, "acct", "never", meta.ListEntry{Name: "o", Timestamp: written}, false); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("row of a container never here: %v", err)
	}
}
