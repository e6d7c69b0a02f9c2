package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// A late PUT row (older than a DELETE row already applied) must not list the object again; a
// newer one does.
func TestListingTombstoneOrdering(t *testing.T) {
	ix, db := newIndex(t)
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c"}, local); err != nil {
		t.Fatal(err)
	}
	put := func(name string, ts meta.Timestamp, size int64) {
		t.Helper()
		commit(t, db, func(b *pebble.Batch) error {
			defer ix.HoldUsage()()
			return ix.PutEntry(b, "a", "c", meta.ListEntry{Name: name, Timestamp: ts, Size: size})
		})
	}
	del := func(name string, ts meta.Timestamp) {
		t.Helper()
		commit(t, db, func(b *pebble.Batch) error {
			defer ix.HoldUsage()()
			return ix.DeleteEntry(b, "a", "c", name, ts)
		})
	}
	listed := func() []string {
		t.Helper()
		l, err := ix.ListObjects(ctx, "a", "c", meta.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range l.Objects {
			names = append(names, e.Name)
		}
		return names
	}
	usage := func(objects, bytes int64) {
		t.Helper()
		c, err := ix.GetContainer(ctx, "a", "c")
		if err != nil || c.ObjectCount != objects || c.BytesUsed != bytes {
			t.Fatalf("container usage %d/%d (%v), want %d/%d", c.ObjectCount, c.BytesUsed, err, objects, bytes)
		}
		a, err := ix.GetAccount(ctx, "a")
		if err != nil || a.ObjectCount != objects || a.BytesUsed != bytes {
			t.Fatalf("account usage %+v (%v), want %d/%d", a, err, objects, bytes)
		}
	}
	const t1, t2, t3 = 100, 200, 300
	del("x", t2) // the DELETE row arrives first: nothing listed, a tombstone kept
	put("x", t1, 5)
	if got := listed(); len(got) != 0 {
		t.Fatalf("a PUT row older than the DELETE row listed %q", got)
	}
	usage(0, 0)
	put("x", t2, 5) // same timestamp as the delete: the delete wins
	if got := listed(); len(got) != 0 {
		t.Fatalf("a PUT row as old as the DELETE row listed %q", got)
	}
	put("x", t3, 7)
	if got := listed(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("a newer PUT row: listed %q", got)
	}
	usage(1, 7)
	del("x", t2) // older than the entry: ignored
	usage(1, 7)
	del("x", t3+1)
	del("x", t3) // older than the tombstone: ignored
	put("x", t3, 7)
	if got := listed(); len(got) != 0 {
		t.Fatalf("after the second delete: %q", got)
	}
	usage(0, 0)
	// The container holds only tombstones: it is empty.
	if err := ix.DeleteContainer(ctx, "a", "c", meta.Now(), ContainerOptions{}); err != nil {
		t.Fatalf("delete of a container of tombstones: %v", err)
	}
}

// Listings with tombstones among the names give what a listing of the live names alone gives:
// objects, common prefixes (a prefix of tombstones only is no prefix), limits and markers.
func TestListObjectsSkipsTombstones(t *testing.T) {
	ix, db := newIndex(t)
	r := rand.New(rand.NewPCG(4, 4))
	all := randomNames(r, 400)
	var liveNames []string
	commit(t, db, func(b *pebble.Batch) error {
		for i, n := range all {
			if i%3 == 0 {
				if err := ix.DeleteEntry(b, "acct", "cont", n, meta.Timestamp(i+1)); err != nil {
					return err
				}
				continue
			}
			liveNames = append(liveNames, n)
			if err := ix.PutEntry(b, "acct", "cont", meta.ListEntry{Name: n, Timestamp: meta.Timestamp(i + 1)}); err != nil {
				return err
			}
		}
		return nil
	})
	for i := range 3000 {
		o := randomOptions(r, all)
		wantObjs, wantPrefixes, wantTrunc, wantNext := refList(liveNames, o)
		got, err := ix.ListObjects(ctx, "acct", "cont", o)
		if err != nil {
			t.Fatal(err)
		}
		var gotObjs []string
		for _, e := range got.Objects {
			gotObjs = append(gotObjs, e.Name)
		}
		if !slices.Equal(gotObjs, wantObjs) || !slices.Equal(got.CommonPrefixes, wantPrefixes) || got.Truncated != wantTrunc || got.NextMarker != wantNext {
			t.Fatalf("case %d, options %#v:\n got %q %q %v %q\nwant %q %q %v %q", i, o,
				gotObjs, got.CommonPrefixes, got.Truncated, got.NextMarker, wantObjs, wantPrefixes, wantTrunc, wantNext)
		}
	}
}

func TestSweepListingTombstones(t *testing.T) {
	ix, db := newIndex(t)
	do := func(f func(b *pebble.Batch) error) { commit(t, db, f) }
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "old", 10) })
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "young", 1000) })
	// A tombstone replaced by a newer one leaves nothing behind once swept...
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "twice", 20) })
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "twice", 30) })
	// ...and one replaced by an entry (a newer PUT) keeps the entry.
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "back", 40) })
	do(func(b *pebble.Batch) error {
		return ix.PutEntry(b, "a", "c", meta.ListEntry{Name: "back", Timestamp: 50, Size: 1})
	})
	// An entry written over a tombstone by ReplaceEntry leaves its age key: swept, harmless.
	do(func(b *pebble.Batch) error { return ix.DeleteEntry(b, "a", "c", "replaced", 60) })
	do(func(b *pebble.Batch) error {
		return ix.ReplaceEntry(b, "a", "c", meta.ListEntry{Name: "replaced", Timestamp: 70}, nil)
	})
	var locked []string
	var mu sync.Mutex
	lock := func(account, container, object string) func() {
		mu.Lock()
		locked = append(locked, object)
		return mu.Unlock
	}
	noPace := func(context.Context) error { return nil }
	n, err := ix.SweepTombstones(ctx, 500, noPace, lock)
	if err != nil || n != 2 { // old, twice
		t.Fatalf("swept %d (%v), want 2", n, err)
	}
	// In age order; "back" lost its age key to the PUT that replaced its tombstone.
	if !slices.Equal(locked, []string{"old", "twice", "replaced"}) {
		t.Fatalf("names locked while sweeping: %q", locked)
	}
	for name, want := range map[string]string{"old": "none", "twice": "none", "young": "tombstone", "back": "entry", "replaced": "entry"} {
		e, at, _, err := ix.listed("a", "c", name)
		got := "none"
		switch {
		case err != nil:
			t.Fatal(err)
		case e != nil:
			got = "entry"
		case at != 0:
			got = "tombstone"
		}
		if got != want {
			t.Errorf("%s after the sweep: %s, want %s", name, got, want)
		}
	}
	// Every age key below the bound is gone; the young one stays.
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTombAge}, UpperBound: []byte{prefixTombAge + 1}})
	if err != nil {
		t.Fatal(err)
	}
	var left int
	for ok := it.First(); ok; ok = it.Next() {
		left++
	}
	it.Close()
	if left != 1 {
		t.Fatalf("%d age keys left, want 1 (young)", left)
	}
	// With "old" reclaimed, a late PUT row lists it again: that is what the reclaim age bounds.
	if n, err := ix.SweepTombstones(ctx, 500, noPace, lock); err != nil || n != 0 {
		t.Fatalf("second pass: %d, %v", n, err)
	}
}
